"""Names in the operator config that match nothing: a typo must not pass silently.

A misspelt pack id, toolset or hook would load nothing, remove every tool or withhold a
hook while every command exits 0; these checks name the key, the name and the closest
known one. Loading warns; ``toolreg config check`` makes them errors.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable

from .config import HOOK_PREFIX, Config
from .config_reader import did_you_mean

#: Not "toolreg.plugins": the CLI hushes that logger while loading.
logger = logging.getLogger("toolreg.config")


def unknown_names(written: Iterable[tuple[str, str]], known: Collection[str]) -> list[str]:
    """One message per (key, name) whose name is not in ``known``, with a close match."""
    return [
        f"{key}: {name!r} matches nothing known{did_you_mean(name, known)}"
        for key, name in written
        if name not in known
    ]


def unknown_hooks(config: Config) -> list[str]:
    """One message per name in a ``plugins.entries.<id>.hooks`` that is no dispatch hook.

    The setup hooks are named as such: they always run, as part of loading.
    """
    if all(entry.hooks is None for entry in config.plugins.entries.values()):
        return []
    # pluggy comes with the hook specs: only pay for it when there are names to check.
    from ..hookspecs import DISPATCH_HOOKS, SETUP_HOOKS

    messages = []
    for plugin, entry in config.plugins.entries.items():
        for index, hook in enumerate(entry.hooks or ()):
            if hook in DISPATCH_HOOKS:
                continue
            key = f"plugins.entries.{plugin}.hooks[{index}]"
            written = hook.removeprefix(HOOK_PREFIX)
            if hook in SETUP_HOOKS:
                messages.append(
                    f"{key}: {written!r} is a setup hook, which always runs; "
                    f"hooks lists dispatch hooks: {', '.join(dispatch_hook_names())}"
                )
                continue
            hint = did_you_mean(written, dispatch_hook_names())
            messages.append(f"{key}: {written!r} is not a dispatch hook{hint}")
    return messages


def dispatch_hook_names() -> list[str]:
    """The dispatch hooks as config writes them, without the prefix."""
    from ..hookspecs import DISPATCH_HOOKS

    return [hook.removeprefix(HOOK_PREFIX) for hook in DISPATCH_HOOKS]


def plugin_ids_written(config: Config) -> list[tuple[str, str]]:
    """Every plugin id the config names, with the key that names it."""
    plugins = config.plugins
    written = [("plugins.enabled", pid) for pid in plugins.enabled or ()]
    written += [("plugins.disabled", pid) for pid in plugins.disabled]
    written += [(f"plugins.entries.{pid}", pid) for pid in plugins.entries]
    return written


def toolsets_written(config: Config) -> list[tuple[str, str]]:
    """Every toolset the ``[toolsets]`` switches name, with the key that names it."""
    toolsets = config.toolsets
    written = [("toolsets.enabled", name) for name in toolsets.enabled or ()]
    return written + [("toolsets.disabled", name) for name in toolsets.disabled]


def mcp_toolset_names(config: Config) -> set[str]:
    """The toolsets and aliases configured MCP servers will bring (they may connect later)."""
    return {n for server in config.mcp.servers for n in (server, f"mcp-{server}")}


def unknown_toolsets(config: Config, known: Collection[str]) -> list[str]:
    """Messages for the ``[toolsets]`` switches that name nothing known.

    Known: ``known``, the config's aliases and the toolsets its MCP servers bring.
    """
    names = set(known) | set(config.toolsets.aliases) | mcp_toolset_names(config)
    return unknown_names(toolsets_written(config), names)


def warn(messages: Iterable[str]) -> None:
    for message in messages:
        logger.warning("%s", message)
