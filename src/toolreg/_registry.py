"""ToolRegistry: the table plus availability, definitions and dispatch.

``registry`` at the bottom is the one process-wide instance; built-in tools,
packs and MCP servers write into it, and hosts read from it. Tests and
embedders that want isolation create their own ``ToolRegistry()``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ._availability import Availability, Verdict
from ._definitions import DefinitionsMixin
from ._dispatch import DispatchMixin
from ._table import ToolTable


class ToolRegistry(DispatchMixin, DefinitionsMixin, ToolTable):
    """Name → tool, with availability, provider definitions and safe dispatch."""

    def __init__(
        self, *, clock: Callable[[], float] = time.monotonic, decision_log_size: int = 1000
    ) -> None:
        ToolTable.__init__(self, decision_log_size=decision_log_size)
        self._availability = Availability(clock)
        self._init_definitions()
        self._init_dispatch()

    def __repr__(self) -> str:
        return f"<ToolRegistry tools={len(self._tools)} generation={self._generation}>"

    def tool(self, func: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        """``@registry.tool(...)``: :func:`toolreg.tool` registering into this registry."""
        from ._decorator import tool  # imported on use: most registries never decorate

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

    def is_toolset_available(self, toolset: str) -> bool:
        """True when the toolset (or alias) has at least one available tool."""
        names = self.get_tool_names_for_toolset(toolset)
        return any(self.availability(name)[0] for name in names)

    def check_toolset_requirements(self) -> dict[str, bool]:
        """``{toolset: available}`` for every toolset."""
        return {ts: self.is_toolset_available(ts) for ts in self.get_toolsets()}

    def get_available_toolsets(self) -> dict[str, dict[str, Any]]:
        """Per toolset: available, its tools, what they require, and why not."""
        report: dict[str, dict[str, Any]] = {}
        for toolset in self.get_toolsets():
            tools = self.get_tool_names_for_toolset(toolset)
            verdicts = {name: self.availability(name) for name in tools}
            requirements: list[str] = []
            for name in tools:
                entry = self._tools.get(name)
                if entry is not None:
                    requirements.extend(
                        f"{var} environment variable"
                        for var in entry.requires_env
                        if f"{var} environment variable" not in requirements
                    )
            report[toolset] = {
                "available": any(ok for ok, _ in verdicts.values()),
                "tools": tools,
                "requirements": requirements,
                "unavailable": {name: why for name, (ok, why) in verdicts.items() if not ok},
            }
        return report


#: The process-wide registry.
registry = ToolRegistry()
