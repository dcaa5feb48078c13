"""Per-toolset availability, read from one published table."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._contract.entry import ToolEntry
from .availability import Verdict

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
