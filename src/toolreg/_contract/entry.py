"""The record the registry keeps for each tool."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from .annotations import NO_ANNOTATIONS, Annotations, tool_annotations
from .schema_checks import check_output_schema

Handler = Callable[..., Any]
CheckFn = Callable[[], Any]
SchemaOverrides = Callable[[], "dict[str, Any] | None"]


# A NamedTuple, not a frozen dataclass: this module is imported on every start-up.
class ToolOptions(NamedTuple):
    """Per-tool dispatch settings that are not part of the seed's entry record."""

    #: Check arguments against the schema before the handler runs.
    validate: bool = True
    #: Seconds the handler may run before dispatch gives up with a tool_error.
    timeout: float | None = None


DEFAULT_OPTIONS = ToolOptions()


class ToolEntry:
    """One registered tool. ``__slots__`` keeps hundreds of entries cheap.

    ``annotations`` (MCP's hints) and ``output_schema`` (the JSON Schema of a
    structured result) are class-level defaults, not slots: an entry that has
    neither pays nothing for them. Given either, the constructor makes the
    entry a ``DescribedToolEntry``, the one subclass that stores them.
    ValueError, naming the tool, for malformed ones.

    Read-only once made: assigning or deleting a field, or running
    ``__init__`` again, raises. An entry the registry hands out is the one
    dispatch runs, so a change to a tool must be a new registration, which
    the gate judges and records.
    """

    __slots__ = (
        "name",
        "toolset",
        "schema",
        "handler",
        "check_fn",
        "requires_env",
        "is_async",
        "description",
        "emoji",
        "max_result_size_chars",
        "dynamic_schema_overrides",
    )

    #: MCP tool annotations (``readOnlyHint``...), read-only; empty when none were given.
    annotations: Annotations = NO_ANNOTATIONS
    #: JSON Schema of the tool's structured result (MCP ``outputSchema``), or None.
    output_schema: dict[str, Any] | None = None

    def __new__(cls, *args: Any, **kwargs: Any) -> ToolEntry:
        if cls is not ToolEntry:
            return object.__new__(cls)
        # The last two fields, given by position or by name.
        annotations = args[11] if len(args) > 11 else kwargs.get("annotations")
        output_schema = args[12] if len(args) > 12 else kwargs.get("output_schema")
        return blank_entry(annotations, output_schema)

    def __init__(
        self,
        name: str,
        toolset: str,
        schema: dict[str, Any],
        handler: Handler,
        check_fn: CheckFn | None = None,
        requires_env: Sequence[str] | None = None,
        is_async: bool = False,
        description: str = "",
        emoji: str = "",
        max_result_size_chars: int | None = None,
        dynamic_schema_overrides: SchemaOverrides | None = None,
        annotations: Mapping[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
    ) -> None:
        if hasattr(self, "name"):
            raise TypeError(f"{self!r} is already made; register the tool again to change it")
        put = object.__setattr__
        put(self, "name", name)
        put(self, "toolset", toolset)
        put(self, "schema", schema)
        put(self, "handler", handler)
        put(self, "check_fn", check_fn)
        if requires_env is None:
            put(self, "requires_env", ())
        elif isinstance(requires_env, str):
            # A lone string is one variable's name, not a sequence of one-letter ones.
            put(self, "requires_env", (requires_env,))
        else:
            put(self, "requires_env", tuple(requires_env))
        put(self, "is_async", is_async)
        put(self, "description", description or schema.get("description", "") or "")
        put(self, "emoji", emoji)
        put(self, "max_result_size_chars", max_result_size_chars)
        put(self, "dynamic_schema_overrides", dynamic_schema_overrides)
        if annotations is not None or output_schema is not None:
            put(self, "annotations", tool_annotations(name, annotations))
            if output_schema is not None:
                check_output_schema(name, output_schema)
            put(self, "output_schema", output_schema)

    def __reduce__(self) -> tuple[Any, ...]:
        # copy and pickle make a new entry through __init__, as register would.
        described = type(self) is not ToolEntry
        # fmt: off
        return (ToolEntry, (
            self.name, self.toolset, self.schema, self.handler, self.check_fn, self.requires_env,
            self.is_async, self.description, self.emoji, self.max_result_size_chars,
            self.dynamic_schema_overrides, dict(self.annotations) if described else None,
            self.output_schema,
        ))
        # fmt: on

    def __setattr__(self, field: str, value: Any) -> None:
        raise AttributeError(_read_only(self, field))

    def __delattr__(self, field: str) -> None:
        raise AttributeError(_read_only(self, field))

    def __repr__(self) -> str:
        return f"ToolEntry(name={self.name!r}, toolset={self.toolset!r})"


def _read_only(entry: ToolEntry, field: str) -> str:
    name = getattr(entry, "name", "?")
    return (
        f"ToolEntry {name!r} is read-only (cannot change {field!r}): "
        "register the tool again to change it"
    )


class DescribedToolEntry(ToolEntry):
    """A ToolEntry that stores annotations or an output schema (see ToolEntry)."""

    __slots__ = ("annotations", "output_schema")


def blank_entry(
    annotations: Mapping[str, Any] | None, output_schema: dict[str, Any] | None
) -> ToolEntry:
    """An entry of the class its fields need, for ``__init__`` to fill in.

    ``register`` makes each entry so, with ``__init__``'s arguments in order:
    a third of the cost of ``ToolEntry(...)`` by name.
    """
    described = annotations is not None or output_schema is not None
    return object.__new__(DescribedToolEntry if described else ToolEntry)


def make_options(name: str, validate: bool, timeout: float | None) -> ToolOptions:
    """Dispatch options for one tool; ValueError naming it for a bad ``timeout``."""
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0
    ):
        raise ValueError(f"Tool {name!r}: timeout must be a positive number of seconds")
    if validate and timeout is None:
        return DEFAULT_OPTIONS
    return ToolOptions(validate=bool(validate), timeout=timeout)
