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
        # toolreg-speedups' entry.c fills these same slots for a plain registration:
        # a change here is a change there (tests/_registry/test_entry_making.py compares).
        self.name = name
        self.toolset = toolset
        self.schema = schema
        self.handler = handler
        self.check_fn = check_fn
        if requires_env is None:
            self.requires_env = ()
        elif isinstance(requires_env, str):
            # A lone string is one variable's name, not a sequence of one-letter ones.
            self.requires_env = (requires_env,)
        else:
            self.requires_env = tuple(requires_env)
        self.is_async = is_async
        self.description = description or schema.get("description", "") or ""
        self.emoji = emoji
        self.max_result_size_chars = max_result_size_chars
        self.dynamic_schema_overrides = dynamic_schema_overrides
        if annotations is not None or output_schema is not None:
            self.annotations = tool_annotations(name, annotations)
            if output_schema is not None:
                check_output_schema(name, output_schema)
            self.output_schema = output_schema

    def __repr__(self) -> str:
        return f"ToolEntry(name={self.name!r}, toolset={self.toolset!r})"


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


def compiled_entry_maker() -> Callable[..., ToolEntry | None] | None:
    """toolreg-speedups' ``EntryMaker`` for ToolEntry, or None when it is not there or
    may not be used (``toolreg/_extension.py``).

    Called with ``register``'s arguments in order, it returns the entry of a
    registration that leaves every argument after ``handler`` at its default and
    that the register-time checks certainly accept, filled as ``__init__`` fills
    it; None for any other (the Python path makes that one). ``.from_spec(spec)``
    does the same for a ``register_many`` spec of exactly name, toolset, schema
    and handler.
    """
    from .._extension import compiled_module

    hot = compiled_module()
    if hot is None:
        return None
    try:
        return hot.EntryMaker(ToolEntry, ToolEntry.__slots__)  # type: ignore[no-any-return]
    except TypeError:  # a ToolEntry whose slots the C code does not know: a bug, not fatal
        import logging

        logging.getLogger("toolreg.speedups").exception(
            "toolreg-speedups cannot make ToolEntry: entries are made in Python"
        )
        return None
