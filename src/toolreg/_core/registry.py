"""ToolRegistry: the table plus availability, definitions and dispatch.

``registry`` at the bottom is the one process-wide instance; built-in tools,
packs and MCP servers write into it, and hosts read from it. Tests and
embedders that want isolation create their own ``ToolRegistry()``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from .._contract.entry import ToolEntry
from .availability import Availability, Verdict
from .definitions import DefinitionsMixin
from .dispatch import DispatchMixin
from .table import ToolTable


class ToolRegistry(DispatchMixin, DefinitionsMixin, ToolTable):
    """Name → tool, with availability, provider definitions and safe dispatch."""

    def __init__(
        self, *, clock: Callable[[], float] = time.monotonic, decision_log_size: int = 1000
    ) -> None:
        ToolTable.__init__(self, decision_log_size=decision_log_size)
        self._availability = Availability(clock, self._live_entries)
        self._init_definitions()
        self._init_dispatch()

    def __repr__(self) -> str:
        return f"<ToolRegistry tools={len(self._tools)} generation={self._generation}>"

    def tool(self, func: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        """``@registry.tool(...)``: :func:`toolreg.tool` registering into this registry."""
        from .._authoring.decorator import tool  # imported on use: most registries never decorate

        return tool(func, registry=self, **options)

    # -- availability -------------------------------------------------------

    def availability(self, name: str) -> Verdict:
        """(available, reason) for one tool; unknown tools are unavailable."""
        entry = self._tools.get(name)
        if entry is None:
            return False, f"unknown tool {name!r}"
        return self._availability.check(entry)

    def is_tool_available(self, name: str) -> bool:
        return self.availability(name)[0]

    def invalidate_check_fn_cache(self) -> None:
        """Forget cached check_fn results, so the next read probes afresh."""
        self._availability.invalidate()

    def _live_entries(self) -> tuple[int, Iterable[ToolEntry]]:
        return self._generation, self._tools.values()

    def is_toolset_available(self, toolset: str) -> bool:
        """True when the toolset (or alias) has at least one available tool."""
        tools, check = self._tools, self._availability.checker()
        names = self.get_tool_names_for_toolset(toolset)
        return any(check(tools[name])[0] for name in names if name in tools)

    def check_toolset_requirements(self) -> dict[str, bool]:
        """``{toolset: available}`` for every toolset."""
        check = self._availability.checker()
        return {
            toolset: any(check(entry)[0] for entry in entries)
            for toolset, entries in _by_toolset(self._tools).items()
        }

    def get_available_toolsets(self) -> dict[str, dict[str, Any]]:
        """Per toolset: available, its tools, what they require, and why not.

        Built from one snapshot of the table: a toolset removed meanwhile is
        either reported whole or not at all.
        """
        check = self._availability.checker()
        report: dict[str, dict[str, Any]] = {}
        for toolset, entries in _by_toolset(self._tools).items():
            verdicts = {entry.name: check(entry) for entry in entries}
            requirements: list[str] = []
            for entry in entries:
                requirements.extend(
                    f"{var} environment variable"
                    for var in entry.requires_env
                    if f"{var} environment variable" not in requirements
                )
            report[toolset] = {
                "available": any(ok for ok, _ in verdicts.values()),
                "tools": list(verdicts),
                "requirements": requirements,
                "unavailable": {name: why for name, (ok, why) in verdicts.items() if not ok},
            }
        return report


def _by_toolset(tools: dict[str, ToolEntry]) -> dict[str, list[ToolEntry]]:
    """One published table's entries by toolset, both sorted by name."""
    grouped: dict[str, list[ToolEntry]] = {}
    for name in sorted(tools):
        entry = tools[name]
        grouped.setdefault(entry.toolset, []).append(entry)
    return dict(sorted(grouped.items()))


#: The process-wide registry.
registry = ToolRegistry()
