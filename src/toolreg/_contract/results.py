"""The result contract: what a handler may return and how errors look."""

from __future__ import annotations

import json
import logging
from typing import Any


class WorkerInterrupt(Exception):
    """SystemExit, KeyboardInterrupt or GeneratorExit raised by pack code.

    Carried to the caller as an ordinary exception: a pack's ``sys.exit()`` is
    a failure of that call, never the end of the host, and a GeneratorExit
    thrown across an ``await`` is not the caller's coroutine being closed.
    """

    def __init__(self, original: BaseException) -> None:
        super().__init__(original)
        self.original = original


#: What pack code may raise that means something else once it crosses a thread
#: or an ``await``: each is wrapped in WorkerInterrupt on the way.
INTERRUPTS = (SystemExit, KeyboardInterrupt, GeneratorExit)

#: Longest error text a failing handler may put in front of the model (or in a log line).
MAX_ERROR_CHARS = 2048


def tool_error(message: str, **extra: Any) -> str:
    """Return the JSON string ``{"error": message, **extra}``."""
    return json.dumps({"error": message, **extra}, ensure_ascii=False, default=str)


def invalid_arguments(tool: str, problem: str) -> str:
    """The tool_error for arguments a tool cannot take, whoever found the problem."""
    return tool_error(
        f"Invalid arguments for tool {tool!r}: {problem}",
        error_type="invalid_arguments",
        tool=tool,
    )


def tool_result(data: Any = None, **kwargs: Any) -> str:
    """Return the JSON of ``data``, or of the keyword arguments when ``data`` is None."""
    payload = kwargs if data is None else data
    return json.dumps(payload, ensure_ascii=False, default=str)


def is_tool_error(result: Any) -> bool:
    """True when ``result`` is a ``tool_error`` JSON string."""
    if not isinstance(result, str) or not result.startswith('{"error"'):
        return False
    try:
        return "error" in json.loads(result)
    except ValueError:
        return False


def truncate(text: str, limit: int) -> str:
    """Keep the first ``limit`` characters and say how many were cut."""
    cut = len(text) - limit
    return f"{text[:limit]}\n…[truncated {cut} of {len(text)} characters]"


def clip(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """``text`` in at most ``limit`` characters, the cut said at its end."""
    if len(text) <= limit:
        return text
    # The marker's length depends on the count it reports; sizing it with
    # the full length first keeps the total within the bound.
    keep = limit - len(f"…[truncated {len(text)} characters]")
    return f"{text[:keep]}…[truncated {len(text) - keep} characters]"


def log_failure(log: logging.Logger, message: str, exc: BaseException) -> None:
    """Log ``message`` at ERROR, bounded like the error the model gets; DEBUG adds the traceback.

    A handler that raises a 200,000-character message must not write a
    200,000-character log line.
    """
    log.error("%s", clip(message))
    if log.isEnabledFor(logging.DEBUG):
        import traceback

        try:
            trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        except Exception:
            trace = "(traceback unavailable)"
        log.debug("Traceback:\n%s", clip(trace, 8 * MAX_ERROR_CHARS))


def type_name(value: Any) -> str:
    """The name of ``value``'s type, whatever its metaclass does."""
    name = type.__dict__["__name__"].__get__(type(value))
    return name if type(name) is str else "object"


def printable(value: Any) -> str:
    """``str(value)`` as a plain str, or a placeholder when that raises."""
    try:
        text = str(value)
        return text if type(text) is str else str.__str__(text)
    except KeyboardInterrupt:
        raise
    except BaseException:  # a __str__ that raises, even SystemExit, says nothing
        return f"<unprintable {type_name(value)} object>"


def describe_exception(exc: BaseException) -> str:
    """``TYPE: MSG``, even for an exception whose ``__str__`` itself raises."""
    if isinstance(exc, WorkerInterrupt):  # the pack's own exit, carried from a worker
        exc = exc.original
    return f"{type_name(exc)}: {printable(exc)}"


def failure_message(exc: BaseException) -> str:
    """The tool_error for a handler that raised, bounded to MAX_ERROR_CHARS."""
    return tool_error(clip(f"Tool execution failed: {describe_exception(exc)}"))


def plain_result(result: Any) -> str | dict[str, Any] | None:
    """A result as a plain ``str`` or plain multimodal dict; None when it is neither.

    Subclasses are copied to the plain types through the base types' own
    methods, so no override of theirs (``__str__``, ``get``, ``__iter__``) runs
    here or later in the host.
    """
    if isinstance(result, str):
        return str.__str__(result)
    if not isinstance(result, dict) or dict.get(result, "_multimodal") is not True:
        return None
    content = dict.get(result, "content")
    if not isinstance(content, list):
        return None
    if type(result) is dict and type(content) is list:
        return result
    plain = dict(dict.items(result))
    plain["content"] = list.copy(content)
    return plain


def is_multimodal(result: Any) -> bool:
    """True for the one structured result shape: ``{"_multimodal": True, "content": [...]}``."""
    return (
        isinstance(result, dict)
        and dict.get(result, "_multimodal") is True
        and isinstance(dict.get(result, "content"), list)
    )
