"""What an isolated pack's process and its parent tell each other, on top of MCP.

The load spec (in the environment), each listed tool's ``_meta``, and the
reserved ``toolreg/...`` entries of ``tools/list``. The parent reads all of it
as untrusted input: only its own gate decides what enters its registry.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .._contract.annotations import NO_ANNOTATIONS, Annotations, received_annotations
from .._contract.schema_checks import check_output_schema
from .._discovery.entrypoints import PackRecord
from ..hookspecs import DISPATCH_HOOKS
from .report import PluginOutcome

# The load spec travels in the environment, not on the command line, which other
# users can read; the child removes it before the pack runs.
SPEC_ENV = "TOOLREG_ISOLATED_PACK"
CHILD_MODULE = "toolreg._loaders.isolated_child"
PACK_ENTRY = "toolreg/pack"
HOOK_PREFIX = "toolreg/hook/"
META_TOOLSET = "toolreg/toolset"
META_OVERRIDE = "toolreg/override"
META_OUTCOME = "toolreg/outcome"
_STATUSES = frozenset({"loaded", "disabled", "incompatible", "refused", "failed"})
_EMPTY_SCHEMA = {"type": "object", "properties": {}}


@dataclass(frozen=True)
class PackSpec:
    """What the child loads: an installed pack (its record) or a local plugin file."""

    plugin_id: str
    record: PackRecord | None = None
    local_path: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    validate: bool = True
    #: The variables the child keeps; it removes every other one before loading.
    environment: tuple[str, ...] = ()

    def to_json(self) -> str:
        """The spec as JSON; TypeError names a setting that JSON cannot carry."""
        data = asdict(self)
        if self.record is not None:  # a NamedTuple: asdict keeps it a tuple, JSON an array
            data["record"] = self.record._asdict()
        try:
            return json.dumps(data, ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"plugins.entries.{self.plugin_id}.settings cannot be passed to an isolated "
                f"pack: {exc} (only JSON values: strings, numbers, booleans, arrays, tables)"
            ) from None

    @classmethod
    def from_json(cls, text: str) -> PackSpec:
        data = json.loads(text)
        record = data.get("record")
        if record is not None:
            record["entry_points"] = tuple(tuple(ep) for ep in record["entry_points"])
            record = PackRecord(**record)
        return cls(
            plugin_id=data["plugin_id"],
            record=record,
            local_path=data.get("local_path"),
            settings=data.get("settings") or {},
            validate=bool(data.get("validate", True)),
            environment=tuple(data.get("environment") or ()),
        )


def hook_tool(hook: str) -> str:
    """The reserved ``tools/list`` name through which the parent runs ``hook``."""
    return HOOK_PREFIX + hook


# -- the child's side: what it lists ------------------------------------------------


def tool_meta(toolset: str, override: bool) -> dict[str, Any]:
    return {META_TOOLSET: toolset, META_OVERRIDE: override}


def pack_entry(outcome: PluginOutcome) -> dict[str, Any]:
    """The reserved entry that reports how loading the pack went."""
    report = {
        "status": outcome.status,
        "reason": outcome.reason,
        "traceback": outcome.traceback,
        "hooks": list(outcome.hooks),
    }
    return {
        "name": PACK_ENTRY,
        "description": "How loading the pack went (not a tool).",
        "inputSchema": _EMPTY_SCHEMA,
        "_meta": {META_OUTCOME: report},
    }


def hook_entry(hook: str) -> dict[str, Any]:
    return {
        "name": hook_tool(hook),
        "description": f"Runs the pack's {hook} hooks (not a tool).",
        "inputSchema": _EMPTY_SCHEMA,
    }


# -- the parent's side: what it reads -----------------------------------------------


@dataclass(frozen=True)
class ListedTool:
    name: str
    toolset: str
    override: bool
    description: str
    parameters: dict[str, Any]
    annotations: Annotations = field(default_factory=lambda: NO_ANNOTATIONS)
    output_schema: dict[str, Any] | None = None

    @property
    def schema(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


@dataclass(frozen=True)
class Manifest:
    """A child's listing, read: its load outcome, its tools and its dispatch hooks."""

    status: str
    reason: str = ""
    traceback: str = ""
    hooks: tuple[str, ...] = ()
    tools: tuple[ListedTool, ...] = ()
    #: Entries (or parts of them) that could not be read, with why.
    skipped: tuple[str, ...] = ()

    @property
    def dispatch_hooks(self) -> tuple[str, ...]:
        return tuple(hook for hook in self.hooks if hook in DISPATCH_HOOKS)


def read_listing(plugin_id: str, listing: Sequence[Mapping[str, Any]]) -> Manifest:
    """The manifest in a child's ``tools/list`` (as JSON dicts); never raises."""
    report: Mapping[str, Any] | None = None
    tools: list[ListedTool] = []
    skipped: list[str] = []
    for item in listing:
        name = item.get("name")
        meta = item.get("_meta") if isinstance(item.get("_meta"), Mapping) else {}
        if name == PACK_ENTRY:
            found = meta.get(META_OUTCOME)
            report = found if isinstance(found, Mapping) else None
            continue
        if not isinstance(name, str) or name.startswith(HOOK_PREFIX):
            continue
        toolset = meta.get(META_TOOLSET)
        if not isinstance(toolset, str) or not toolset:
            skipped.append(f"tool {name!r} of isolated pack {plugin_id!r} names no toolset")
            continue
        description = item.get("description")
        schema = item.get("inputSchema")
        output = item.get("outputSchema")
        if output is not None:
            try:
                check_output_schema(name, output)
            except ValueError as exc:
                skipped.append(f"isolated pack {plugin_id!r}: its output schema is left out: {exc}")
                output = None
        tools.append(
            ListedTool(
                name=name,
                toolset=toolset,
                override=meta.get(META_OVERRIDE) is True,
                description=description if isinstance(description, str) else "",
                parameters=dict(schema) if isinstance(schema, Mapping) else dict(_EMPTY_SCHEMA),
                annotations=received_annotations(item.get("annotations")),
                output_schema=output,
            )
        )
    if report is None:
        return Manifest("failed", "its process did not report how loading the pack went")
    status = report.get("status")
    hooks = report.get("hooks")
    return Manifest(
        status=status if status in _STATUSES else "failed",
        reason=_text(report.get("reason")),
        traceback=_text(report.get("traceback")),
        hooks=tuple(sorted({h for h in hooks if isinstance(h, str)}))
        if isinstance(hooks, list)
        else (),
        tools=tuple(tools),
        skipped=tuple(skipped),
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
