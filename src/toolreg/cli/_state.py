"""What the load step produced, for the commands that report on it."""

from __future__ import annotations

from dataclasses import dataclass

from toolreg import Config, PluginReport


@dataclass
class LoadState:
    config: Config | None = None
    report: PluginReport | None = None


state = LoadState()
