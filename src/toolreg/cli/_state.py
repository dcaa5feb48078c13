"""What the load step produced, for the commands that report on it."""

from __future__ import annotations

from dataclasses import dataclass

from toolreg import Config, PluginReport


@dataclass
class LoadState:
    config: Config | None = None
    report: PluginReport | None = None
    #: Whether this command connected the MCP servers (``list`` and ``show`` need ``--mcp``).
    mcp_started: bool = False


state = LoadState()
