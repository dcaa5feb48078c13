"""Argument checking and error shaping shared by the built-in tools.

Models send loosely typed JSON (numbers as strings, missing keys), so arguments
are validated here and every predictable failure becomes a ``tool_error`` the
model can act on, instead of a traceback. Dict handlers use ``guarded`` and the
``*_arg`` readers; typed ``@registry.tool`` functions get their arguments
converted by toolreg, and use ``reports_errors`` and ``check_range``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec

from toolreg import tool_error
from toolreg.workspace import WorkspaceError

Handler = Callable[..., str]
P = ParamSpec("P")
_MISSING: Any = object()


#: MCP's hints for a tool that can change anything, anywhere: a shell command, an HTTP POST.
UNBOUNDED_HINTS = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}


class ArgError(ValueError):
    """An argument that is missing, of the wrong type or out of range."""


def _as_tool_error(exc: Exception) -> str:
    if isinstance(exc, (ArgError, WorkspaceError)):
        return tool_error(str(exc))
    if isinstance(exc, UnicodeError):
        # JSON can carry lone surrogates ("\ud800") that no file or URL can hold.
        return tool_error(f"text cannot be encoded: {exc}")
    # str(OSError) already names the file ("[Errno 13] Permission denied: '...'").
    return tool_error(f"{type(exc).__name__}: {exc}")


_EXPECTED = (ArgError, WorkspaceError, OSError, UnicodeError)


def guarded(handler: Handler) -> Handler:
    """Turn argument, workspace and OS errors raised by ``handler`` into tool_error JSON."""

    @functools.wraps(handler)
    def wrapper(args: dict[str, Any] | None = None, **kwargs: Any) -> str:
        if args is None:
            args = {}
        if not isinstance(args, dict):
            return tool_error(f"arguments must be a JSON object, got {type(args).__name__}")
        try:
            return handler(args, **kwargs)
        except _EXPECTED as exc:
            return _as_tool_error(exc)

    return wrapper


def reports_errors(func: Callable[P, str]) -> Callable[P, str]:
    """``guarded`` for a typed ``@registry.tool`` function; goes under the decorator.

    ``functools.wraps`` keeps the signature, type hints and docstring that the
    tool's schema is read from.
    """

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> str:
        try:
            return func(*args, **kwargs)
        except _EXPECTED as exc:
            return _as_tool_error(exc)

    return wrapper


def handler_of(func: Callable[..., Any]) -> Handler:
    """The ``(args: dict) -> str`` handler ``@registry.tool`` registered for ``func``.

    Callers that hold a model's JSON arguments, rather than Python values, call this.
    """
    return func.__toolreg_handler__  # type: ignore[attr-defined, no-any-return]


def check_range(
    name: str, value: float, *, minimum: float, maximum: float, exclusive_minimum: bool = False
) -> None:
    """Raise ArgError unless ``value`` is within bounds (NaN never is)."""
    low_ok = minimum < value if exclusive_minimum else minimum <= value
    if not (low_ok and value <= maximum):
        low = "greater than" if exclusive_minimum else "at least"
        raise ArgError(
            f"argument {name!r} must be {low} {minimum:g} and at most {maximum:g}, got {value!r}"
        )


def str_arg(args: dict[str, Any], name: str, default: Any = _MISSING) -> str:
    """A string argument; required when no default is given."""
    value = args.get(name, default)
    if value is _MISSING:
        raise ArgError(f"missing required argument {name!r}")
    if not isinstance(value, str):
        raise ArgError(f"argument {name!r} must be a string, got {type(value).__name__}")
    return value


def int_arg(args: dict[str, Any], name: str, default: int, *, minimum: int, maximum: int) -> int:
    """An integer argument within [minimum, maximum]; numeric strings are accepted."""
    value = args.get(name, default)
    if value is None:
        value = default
    # bool is an int subclass; True as a line count is almost certainly a mistake.
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ArgError(f"argument {name!r} must be an integer, got {value!r}")
    try:
        number = int(value)
    except ValueError:
        raise ArgError(f"argument {name!r} must be an integer, got {value!r}") from None
    if not minimum <= number <= maximum:
        raise ArgError(f"argument {name!r} must be between {minimum} and {maximum}, got {number}")
    return number


def bool_arg(args: dict[str, Any], name: str, default: bool) -> bool:
    """A boolean argument; "true"/"false" strings are accepted."""
    value = args.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ArgError(f"argument {name!r} must be true or false, got {value!r}")
