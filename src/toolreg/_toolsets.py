"""The operator config applied to a loaded registry: toolsets, aliases, validation."""

from __future__ import annotations

import logging

from ._config import Config
from ._registry import ToolRegistry

logger = logging.getLogger("toolreg.toolsets")


def toolset_allowed(config: Config, toolset: str) -> bool:
    """Whether the enabled/disabled lists keep ``toolset`` (the caller resolves aliases)."""
    enabled = config.toolsets.enabled
    if enabled is not None and toolset not in enabled:
        return False
    return toolset not in config.toolsets.disabled


def apply_toolset_config(config: Config, registry: ToolRegistry) -> list[str]:
    """Register the config's aliases, then remove the tools of toolsets it turns off.

    Returns the names removed. Call it after everything is loaded; run it again
    after a reload. An alias that cannot be registered is logged and skipped.
    """
    for alias, target in config.toolsets.aliases.items():
        try:
            registry.register_toolset_alias(alias, target)
        except ValueError as exc:
            logger.warning("toolsets.aliases.%s: %s", alias, exc)
    resolved = Config(
        plugins=config.plugins,
        toolsets=type(config.toolsets)(
            enabled=None
            if config.toolsets.enabled is None
            else tuple(registry.resolve_toolset(t) for t in config.toolsets.enabled),
            disabled=tuple(registry.resolve_toolset(t) for t in config.toolsets.disabled),
            aliases=config.toolsets.aliases,
        ),
        source=config.source,
    )
    removed = []
    for toolset in registry.get_toolsets():
        if not toolset_allowed(resolved, toolset):
            for name in registry.get_tool_names_for_toolset(toolset):
                registry.deregister(name)
                removed.append(name)
            logger.info("Toolset %s turned off by the operator config", toolset)
    return removed


def apply_config(config: Config, registry: ToolRegistry) -> list[str]:
    """Everything the config says about a loaded registry; returns the tools removed.

    ``[dispatch] validate`` switches argument validation, then the
    ``[toolsets]`` table applies (see :func:`apply_toolset_config`).
    """
    registry.set_validation(config.dispatch.validate)
    return apply_toolset_config(config, registry)
