"""What happened to each plugin: the record ``toolreg plugins`` prints."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .._core.gate import DRIFTED

if TYPE_CHECKING:
    from .._core.decisions import Decision

#: ``changed``, ``tampered`` and ``new``: held back by ``toolreg.lock`` (docs/lock.md).
Status = Literal[
    "loaded", "disabled", "incompatible", "refused", "failed", "changed", "tampered", "new"
]


@dataclass
class PluginOutcome:
    """One plugin's fate, and which tools it won or lost."""

    id: str
    distribution: str
    version: str
    entry_point: str
    status: Status = "loaded"
    reason: str = ""
    tools_added: list[str] = field(default_factory=list)
    tools_overridden: list[str] = field(default_factory=list)
    refused: list[dict[str, str]] = field(default_factory=list)
    #: Where its code runs: ``"none"`` (this process) or ``"process"`` (a child process).
    isolation: str = "none"
    #: The toolreg hooks it implements and that run (setup and dispatch hooks), by name.
    hooks: list[str] = field(default_factory=list)
    #: Dispatch hooks it implements that the operator's ``hooks`` list keeps from running.
    hooks_withheld: list[str] = field(default_factory=list)
    #: Its tools ``toolreg.lock`` withheld (not locked, or their definition differs):
    #: ``{"tool", "reason"}`` each.
    drifted: list[dict[str, str]] = field(default_factory=list)
    #: The exception that stopped the plugin, with its traceback text, for --verbose.
    error: BaseException | None = field(default=None, repr=False, compare=False)
    traceback: str = field(default="", repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "distribution": self.distribution,
            "version": self.version,
            "entry_point": self.entry_point,
            "status": self.status,
            "reason": self.reason,
            "tools_added": list(self.tools_added),
            "tools_overridden": list(self.tools_overridden),
            "refused": [dict(item) for item in self.refused],
            "isolation": self.isolation,
            "hooks": list(self.hooks),
            "hooks_withheld": list(self.hooks_withheld),
            "drifted": [dict(item) for item in self.drifted],
        }


class PluginReport:
    """Every plugin considered in a load, in load order."""

    # A plain class, not a dataclass: every start-up makes one, packs or not.
    def __init__(self, plugins: list[PluginOutcome] | None = None) -> None:
        self.plugins: list[PluginOutcome] = [] if plugins is None else plugins

    def __repr__(self) -> str:
        return f"PluginReport(plugins={self.plugins!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not PluginReport:
            return NotImplemented
        return self.plugins == other.plugins

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass with eq

    def __iter__(self) -> Iterator[PluginOutcome]:
        return iter(self.plugins)

    def __len__(self) -> int:
        return len(self.plugins)

    def get(self, plugin_id: str) -> PluginOutcome | None:
        for outcome in self.plugins:
            if outcome.id == plugin_id:
                return outcome
        return None

    def __getitem__(self, plugin_id: str) -> PluginOutcome:
        outcome = self.get(plugin_id)
        if outcome is None:
            raise KeyError(plugin_id)
        return outcome

    def with_status(self, *statuses: Status) -> list[PluginOutcome]:
        return [outcome for outcome in self.plugins if outcome.status in statuses]

    def to_list(self) -> list[dict[str, Any]]:
        return [outcome.to_dict() for outcome in self.plugins]

    def to_json(self, **dumps_kwargs: Any) -> str:
        return json.dumps(self.to_list(), **dumps_kwargs)


def failed(outcome: PluginOutcome, exc: BaseException) -> PluginOutcome:
    """Mark ``outcome`` failed (refused, for a PermissionError) by ``exc``, and log it."""
    import logging
    import traceback

    from .._contract.results import describe_exception

    outcome.status = "refused" if isinstance(exc, PermissionError) else "failed"
    # One line: the report is a table; the traceback keeps the full text.
    outcome.reason = " ".join(describe_exception(exc).split())
    outcome.error = exc
    outcome.traceback = "".join(traceback.format_exception(exc))
    outcome.tools_added, outcome.tools_overridden = [], []
    logger = logging.getLogger("toolreg.plugins")
    logger.warning("Plugin %s %s: %s", outcome.id, outcome.status, outcome.reason)
    logger.debug("Plugin %s traceback:\n%s", outcome.id, outcome.traceback)
    return outcome


def warned(outcome: PluginOutcome, warning: str) -> None:
    """Log a warning about a plugin that still loads; its reason shows it until a refusal's
    does (after an earlier warning, both)."""
    import logging

    logging.getLogger("toolreg.plugins").warning("Plugin %s %s", outcome.id, warning)
    earlier = outcome.reason if outcome.reason.startswith("warning: ") else ""
    outcome.reason = f"{earlier}; warning: {warning}" if earlier else f"warning: {warning}"


def summarise(outcome: PluginOutcome, decisions: Iterable[Decision]) -> None:
    """Fill in what the plugin won and lost, from the registry's decisions while it loaded."""
    for decision in decisions:
        if decision.owner != outcome.id:
            continue
        if decision.action in ("registered", "replaced"):
            outcome.tools_added.append(decision.tool)
        elif decision.action == "overridden":
            outcome.tools_added.append(decision.tool)
            outcome.tools_overridden.append(decision.tool)
        elif decision.action == "rejected":
            rejected = {"tool": decision.tool, "reason": decision.reason}
            (outcome.drifted if DRIFTED in decision.reason else outcome.refused).append(rejected)
    outcome.tools_added = sorted(set(outcome.tools_added))
    outcome.tools_overridden = sorted(set(outcome.tools_overridden))
