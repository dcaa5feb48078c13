"""What a tool call comes back as when it did not simply return a str.

The ``tool_error`` JSON dispatch hands the model (unknown tool, handler failure,
timeout, no worker, blocked by a hook), and the checks a non-str result must pass.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from types import CoroutineType
from typing import Any

from .._contract.entry import ToolEntry
from .._contract.results import (
    clip,
    describe_exception,
    log_failure,
    plain_result,
    printable,
    tool_error,
    truncate,
    type_name,
)
from .async_bridge import run_coroutine
from .workers import DeadlineExceeded, NoCapacity

logger = logging.getLogger("toolreg.dispatch")

#: What dispatch answers when even building an error failed.
LAST_RESORT = tool_error("Internal error in toolreg while dispatching", error_type="internal")


def failed(name: str, exc: BaseException) -> str:
    described = describe_exception(exc)
    log_failure(logger, f"Tool {name} failed: {described}", exc)
    return tool_error(clip(f"Tool execution failed: {described}"))


def unknown(name: Any, known: Iterable[str] = ()) -> str:
    """``Unknown tool: NAME``, and up to 3 close names from ``known`` to retry with."""
    if type(name) is not str:
        return tool_error(clip(f"Unknown tool: {printable(name)}"))
    import difflib  # only a mistyped name gets here

    # A name far longer than any tool's is no typo, and would be slow to compare.
    close = difflib.get_close_matches(name, list(known), n=3) if 0 < len(name) <= 200 else []
    if not close:
        return tool_error(clip(f"Unknown tool: {name}"))
    names = ", ".join(close)
    return tool_error(clip(f"Unknown tool: {name}. Did you mean: {names}?"), did_you_mean=close)


def internal(name: Any, exc: BaseException) -> str:
    """What escaped every other guard: a name too odd to look up, or a toolreg bug."""
    try:
        if type(name) is not str:
            return unknown(name)  # an unhashable or misbehaving name names no tool
        described = describe_exception(exc)
        log_failure(logger, f"Dispatch of tool {clip(name, 200)} failed: {described}", exc)
        return tool_error(
            clip(f"Internal error in toolreg while dispatching {name}: {described}"),
            error_type="internal",
            tool=clip(name, 200),
        )
    except KeyboardInterrupt:
        raise
    except BaseException:
        return LAST_RESORT


def off_contract(entry: ToolEntry, result: Any) -> str | dict[str, Any]:
    """Results other than a plain str: coroutines, subclasses, multimodal, or a contract error."""
    try:
        if type(result) is CoroutineType:
            # An ``async def`` handler registered without is_async=True: run it
            # rather than hand the model a coroutine repr.
            try:
                result = run_coroutine(result)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:
                return failed(entry.name, exc)
        plain = plain_result(result)
    except KeyboardInterrupt:
        raise
    except BaseException:  # an object whose very type checks raise
        plain = None
    if type(plain) is str:
        return cap(entry, plain)
    if plain is not None:
        return plain
    result_type = type_name(result)
    logger.error("Tool %s returned unsupported result type %s", entry.name, result_type)
    return tool_error(
        f"Tool {entry.name} returned {result_type}; a tool must return a str "
        'or a multimodal dict {"_multimodal": true, "content": [...]}',
        error_type="tool_result_contract",
        tool=entry.name,
        result_type=result_type,
    )


def call_failed(entry: ToolEntry, timeout: float | None, exc: BaseException) -> str:
    """The tool_error for a call that raised: past its deadline, no worker, or the handler's own."""
    if isinstance(exc, DeadlineExceeded):
        return timed_out(entry, timeout, exc)
    if isinstance(exc, NoCapacity):
        return no_capacity(entry, exc)
    return failed(entry.name, exc)


def timed_out(entry: ToolEntry, timeout: float | None, exc: DeadlineExceeded) -> str:
    logger.error("Tool %s timed out after %gs", entry.name, timeout or 0)
    if not exc.started:
        return tool_error(
            f"Tool {entry.name} did not start within its {timeout:g} s timeout: "
            "every tool worker was busy",
            error_type="timeout",
            tool=entry.name,
        )
    return tool_error(
        f"Tool {entry.name} timed out after {timeout:g} s and was abandoned",
        error_type="timeout",
        tool=entry.name,
    )


def blocked(name: str, message: Any) -> str:
    text = message if type(message) is str else printable(message)
    return tool_error(clip(text), error_type="blocked", tool=name)


def hook_result(name: str, result: Any) -> str | dict[str, Any]:
    """What the hooks' ``after`` returned, held to the same contract as a handler's result."""
    plain = plain_result(result)
    if plain is not None:
        return plain
    return tool_error(
        f"The dispatch hooks returned {type_name(result)} for tool {name}, "
        "not a str or a multimodal dict",
        error_type="blocked",
        tool=name,
    )


def no_capacity(entry: ToolEntry, exc: NoCapacity) -> str:
    message = f"Tool {entry.name} was not started: {exc}"
    logger.error("%s", message)
    return tool_error(message, error_type="no_capacity", tool=entry.name)


def cap(entry: ToolEntry, result: str) -> str:
    limit = entry.max_result_size_chars
    if limit is None or len(result) <= limit:
        return result
    return truncate(result, limit)
