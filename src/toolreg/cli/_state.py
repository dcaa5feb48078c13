"""What the load step produced, for the commands that report on it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolreg import Config, PluginReport


class LoadState:
    """One command's config, plugin report and whether it connected the MCP servers."""

    config: Config | None = None
    report: PluginReport | None = None
    #: Whether this command connected the MCP servers (``list`` and ``show`` need ``--mcp``).
    mcp_started: bool = False


state = LoadState()
