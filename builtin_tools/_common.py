"""Argument checking and error shaping shared by the built-in tools.

Models send loosely typed JSON (numbers as strings, missing keys), so arguments
are validated here and every predictable failure becomes a ``tool_error`` the
model can act on, instead of a traceback.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from toolreg import tool_error

from ._workspace import WorkspaceError

Handler = Callable[..., str]
_MISSING: Any = object()


class ArgError(ValueError):
    """An argument that is missing, of the wrong type or out of range."""


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
        except (ArgError, WorkspaceError) as exc:
            return tool_error(str(exc))
        except OSError as exc:
            # str(OSError) already names the file ("[Errno 13] Permission denied: '...'").
            return tool_error(f"{type(exc).__name__}: {exc}")
        except UnicodeError as exc:
            # JSON can carry lone surrogates ("\ud800") that no file or URL can hold.
            return tool_error(f"text cannot be encoded: {exc}")

    return wrapper


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


def float_arg(
    args: dict[str, Any], name: str, default: float, *, minimum: float, maximum: float
) -> float:
    """A number within (minimum, maximum]; numeric strings are accepted."""
    value = args.get(name, default)
    if value is None:
        value = default
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ArgError(f"argument {name!r} must be a number, got {value!r}")
    try:
        number = float(value)
    except ValueError:
        raise ArgError(f"argument {name!r} must be a number, got {value!r}") from None
    if not minimum < number <= maximum:  # also rejects NaN
        raise ArgError(
            f"argument {name!r} must be greater than {minimum:g} and at most {maximum:g}, "
            f"got {value!r}"
        )
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
