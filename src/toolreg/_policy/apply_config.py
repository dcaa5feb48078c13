"""The operator config applied to a loaded registry: toolsets, aliases, validation, permissions."""

from __future__ import annotations

import logging

from .._registry.host_only import require_host
from .._registry.registry import ToolRegistry
from .config import Config
from .unknown_names import unknown_toolsets, warn

logger = logging.getLogger("toolreg.toolsets")


def apply_toolset_config(config: Config, registry: ToolRegistry) -> list[str]:
    """Register the config's aliases, then remove the tools of toolsets it turns off.

    Returns the names removed. Call it after everything is loaded; run it again
    after a reload. An alias that cannot be registered is logged and skipped.
    """
    require_host(registry, "apply the operator config")
    for alias, target in config.toolsets.aliases.items():
        try:
            registry.register_toolset_alias(alias, target)
        except ValueError as exc:
            logger.warning("toolsets.aliases.%s: %s", alias, exc)
    known = set(registry.get_toolsets()) | set(registry.get_toolset_aliases())
    warn(unknown_toolsets(config, known))
    removed = []
    for toolset in registry.get_toolsets():
        if not config.toolsets.allows(toolset, registry.resolve_toolset):
            for name in registry.get_tool_names_for_toolset(toolset):
                registry.deregister(name)
                removed.append(name)
            logger.info("Toolset %s turned off by the operator config", toolset)
    return removed


def apply_config(config: Config, registry: ToolRegistry) -> list[str]:
    """Everything the config says about a loaded registry; returns the tools removed.

    ``[dispatch] validate`` switches argument validation, ``[permissions]`` is
    installed (a config without it removes any), then the ``[toolsets]`` table
    applies (see :func:`apply_toolset_config`).
    """
    require_host(registry, "apply the operator config")
    registry.set_validation(config.dispatch.validate)
    registry.set_permissions(config.permissions)
    return apply_toolset_config(config, registry)
