"""How ``register``'s arguments become a ToolEntry: checked, then made."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from .._contract.entry import (
    DEFAULT_OPTIONS,
    CheckFn,
    Handler,
    SchemaOverrides,
    ToolEntry,
    ToolOptions,
    make_options,
)
from .._contract.schema_checks import check_registration, check_result_limit

_intern = sys.intern


def make_entry(
    name: str,
    toolset: str,
    schema: dict[str, Any],
    handler: Handler,
    check_fn: CheckFn | None,
    requires_env: Sequence[str] | None,
    is_async: bool,
    description: str,
    emoji: str,
    max_result_size_chars: int | None,
    dynamic_schema_overrides: SchemaOverrides | None,
    annotations: Mapping[str, Any] | None,
    output_schema: dict[str, Any] | None,
    validate: bool,
    timeout: float | None,
    searchable: bool = True,
) -> tuple[ToolEntry, ToolOptions]:
    """The checked entry and dispatch options of one registration (``register``'s
    arguments, in its order); ValueError, naming the tool, for a malformed one."""
    check_registration(name, toolset, schema, handler)
    if max_result_size_chars is not None:
        check_result_limit(name, max_result_size_chars)
    # Tools of one toolset share one string, however each call spelt it. The table's
    # keys are plain strs: a str subclass's own __eq__ (a StrEnum's, or a pack's)
    # never runs inside a later write's lookups.
    toolset = _intern(toolset if type(toolset) is str else str.__str__(toolset))
    if type(name) is not str:
        name = str.__str__(name)
    if validate is True and timeout is None and searchable is True:
        options = DEFAULT_OPTIONS
    else:
        options = make_options(name, validate, timeout, searchable)
    # fmt: off
    entry = ToolEntry(name, toolset, schema, handler, check_fn, requires_env, is_async,
                      description, emoji, max_result_size_chars, dynamic_schema_overrides,
                      annotations, output_schema)
    # fmt: on
    return entry, options
