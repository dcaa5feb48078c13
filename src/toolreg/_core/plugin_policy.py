"""The operator's decision for one plugin module namespace, as bound to its code.

Its own module so that a process that binds no plugin (``toolreg list`` with packs
off) never pays for defining the dataclass.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class PluginPolicy:
    """The operator's decision for one plugin module namespace."""

    namespace: str
    allowed: bool
    plugin_id: str
    #: Directories (or files) holding the namespace's code: a file under one
    #: belongs to the plugin unless another plugin's RECORD lists it.
    paths: tuple[str, ...] = field(default=(), compare=False)
    #: Glob patterns the plugin's tool names must match; None means any name.
    tool_patterns: tuple[str, ...] | None = None
    #: The exact files the plugin's distribution installed (real paths).
    files: frozenset[str] = field(default=frozenset(), compare=False)
    #: The tools ``toolreg.lock`` holds the pack to: name -> definition digest. None:
    #: the pack is not held to a lock (none in use, a pack loaded unlocked, or one
    #: whose change the operator let load with ``on_change = "warn"``).
    locked_tools: Mapping[str, str] | None = field(default=None, compare=False)

    @property
    def config_key(self) -> str:
        """The operator config key that grants this plugin overrides."""
        return f"plugins.entries.{self.plugin_id}.allow_tool_override"

    def may_name(self, tool: str) -> bool:
        if self.tool_patterns is None:
            return True
        return any(fnmatch.fnmatchcase(tool, pattern) for pattern in self.tool_patterns)

    def owns_file(self, filename: str) -> bool:
        """Whether a real path lies in the plugin's directories (not its RECORD)."""
        return any(filename == p or filename.startswith(p + os.sep) for p in self.paths)
