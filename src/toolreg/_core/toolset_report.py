"""Availability as the registry reports it: per tool, and per toolset from one snapshot."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._contract.entry import ToolEntry
from .availability import Availability, Verdict

if TYPE_CHECKING:
    from .table import ToolTable

Checker = Callable[[ToolEntry], Verdict]


def toolsets_available(tools: dict[str, ToolEntry], check: Checker) -> dict[str, bool]:
    """``{toolset: has an available tool}`` for every toolset."""
    return {
        toolset: any(check(entry)[0] for entry in entries)
        for toolset, entries in _by_toolset(tools).items()
    }


def toolset_report(tools: dict[str, ToolEntry], check: Checker) -> dict[str, dict[str, Any]]:
    """Per toolset: available, its tools, what they require, and why not."""
    report: dict[str, dict[str, Any]] = {}
    for toolset, entries in _by_toolset(tools).items():
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


class AvailabilityView:
    """The registry's availability reads, over its table and its probes."""

    def __init__(self, table: ToolTable, availability: Availability) -> None:
        self._table = table
        self._availability = availability

    def availability(self, name: str) -> Verdict:
        entry = self._table.live.get(name)
        if entry is None:
            return False, f"unknown tool {name!r}"
        return self._availability.check(entry)

    def is_tool_available(self, name: str) -> bool:
        return self.availability(name)[0]

    def invalidate_check_fn_cache(self) -> None:
        self._availability.invalidate()

    def is_toolset_available(self, toolset: str) -> bool:
        tools, check = self._table.tools, self._availability.checker()
        return any(check(tools[name])[0] for name in self._table.names_in(toolset) if name in tools)

    def check_toolset_requirements(self) -> dict[str, bool]:
        return toolsets_available(self._table.tools, self._availability.checker())

    def get_available_toolsets(self) -> dict[str, dict[str, Any]]:
        return toolset_report(self._table.tools, self._availability.checker())
