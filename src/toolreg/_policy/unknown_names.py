"""Names in the operator config that match nothing: a typo must not pass silently.

A misspelt pack id in ``plugins.enabled`` loads nothing, and a misspelt toolset
in ``[toolsets] enabled`` removes every tool, while every command still exits 0.
These checks name the key, the name and the closest known one.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable

from .config import Config

#: Not "toolreg.plugins": the CLI hushes that logger while loading.
logger = logging.getLogger("toolreg.config")


def unknown_names(written: Iterable[tuple[str, str]], known: Collection[str]) -> list[str]:
    """One message per (key, name) whose name is not in ``known``, with a close match."""
    messages = []
    for key, name in written:
        if name in known:
            continue
        import difflib  # only a name that matches nothing needs it

        close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.75)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        messages.append(f"{key}: {name!r} matches nothing known{hint}")
    return messages


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


def warn(messages: Iterable[str]) -> None:
    for message in messages:
        logger.warning("%s", message)
