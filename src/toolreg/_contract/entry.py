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
    """Per-tool settings that are not part of the seed's entry record."""

    #: Check arguments against the schema before the handler runs.
    validate: bool = True
    #: Seconds the handler may run before dispatch gives up with a tool_error.
    timeout: float | None = None
    #: Found by ``ToolRegistry.search``; False hides the tool from search only.
    searchable: bool = True


DEFAULT_OPTIONS = ToolOptions()


class ToolEntry:
    """One registered tool. ``__slots__`` keeps hundreds of entries cheap.

    ``annotations`` (MCP's hints) and ``output_schema`` (the JSON Schema of a
    structured result) are class-level defaults, not slots: an entry that has
    neither pays nothing for them. Given either, the constructor makes the
    entry a ``DescribedToolEntry``, the one subclass that stores them.
    ValueError, naming the tool, for malformed ones.

    Read-only once made: assigning or deleting a field raises, and running
    ``__init__`` again changes nothing. An entry the registry hands out is the one
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

    # Made and filled in __new__, with no __init__: calling ``__init__`` again on a
    # made entry is object's, which changes nothing.
    def __new__(
        cls,
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
    ) -> ToolEntry:
        draft = _new(_Draft)
        draft.name = name
        draft.toolset = toolset
        draft.schema = schema
        draft.handler = handler
        draft.check_fn = check_fn
        if requires_env is None:
            draft.requires_env = ()
        elif isinstance(requires_env, str):
            # A lone string is one variable's name, not a sequence of one-letter ones.
            draft.requires_env = (requires_env,)
        else:
            draft.requires_env = tuple(requires_env)
        draft.is_async = is_async
        draft.description = description or schema.get("description", "") or ""
        draft.emoji = emoji
        draft.max_result_size_chars = max_result_size_chars
        draft.dynamic_schema_overrides = dynamic_schema_overrides
        if cls is ToolEntry and annotations is None and output_schema is None:
            # Sealed as it is: one write past __setattr__ instead of one per field
            # (register makes an entry for every tool).
            _put(draft, "__class__", ToolEntry)
            return draft  # type: ignore[return-value]
        described = annotations is not None or output_schema is not None
        self = _new(DescribedToolEntry if described and cls is ToolEntry else cls)
        for field in _FIELDS:
            _put(self, field, getattr(draft, field))
        if described:
            _put(self, "annotations", tool_annotations(name, annotations))
            if output_schema is not None:
                check_output_schema(name, output_schema)
            _put(self, "output_schema", output_schema)
        return self

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


#: The fields in the order ``ToolEntry(...)`` takes them.
_FIELDS = ToolEntry.__slots__
_new, _put = object.__new__, object.__setattr__


class _Draft:
    """A ToolEntry being filled: the same slots, writable, never handed out.

    Its layout is ToolEntry's, so a filled draft becomes a ToolEntry by one
    ``__class__`` assignment.
    """

    __slots__ = _FIELDS


def _read_only(entry: ToolEntry, field: str) -> str:
    name = getattr(entry, "name", "?")
    return (
        f"ToolEntry {name!r} is read-only (cannot change {field!r}): "
        "register the tool again to change it"
    )


class DescribedToolEntry(ToolEntry):
    """A ToolEntry that stores annotations or an output schema (see ToolEntry)."""

    __slots__ = ("annotations", "output_schema")


def make_options(
    name: str, validate: bool, timeout: float | None, searchable: bool = True
) -> ToolOptions:
    """The options of one tool; ValueError naming it for a bad ``timeout``."""
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0
    ):
        raise ValueError(f"Tool {name!r}: timeout must be a positive number of seconds")
    if validate and timeout is None and searchable:
        return DEFAULT_OPTIONS
    return ToolOptions(validate=bool(validate), timeout=timeout, searchable=bool(searchable))
