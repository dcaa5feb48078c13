"""Arguments of the scalar types: checked, and converted where JSON spells them as strings.

:class:`Invalid` is the one error every converter raises, naming the argument.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import datetime as dt
    import decimal

#: ``convert(value, path)`` returns the Python value or raises Invalid.
Convert = Callable[[Any, str], Any]


class Invalid(ValueError):
    """An argument that cannot become its declared type; says where and why."""

    def __init__(self, path: str, problem: str, expected: str | None = None) -> None:
        super().__init__(f"argument {path!r} {problem}")
        self.path = path
        self.expected = expected


def wrong(path: str, expected: str, value: Any) -> Invalid:
    return Invalid(path, f"must be {expected}, got {describe(value)}", expected)


def describe(value: Any) -> str:
    """A value in the words of JSON, short enough for an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= 60 else text[:56] + '…"'
    return type(value).__name__


def identity(value: Any, path: str) -> Any:
    return value


def null(value: Any, path: str) -> None:
    if value is not None:
        raise wrong(path, "null", value)


def string(value: Any, path: str) -> str:
    if isinstance(value, str):
        return value
    raise wrong(path, "a string", value)


def _int(value: Any, path: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)  # JSON Schema counts 3.0 as an integer
    raise wrong(path, "an integer", value)


def _float(value: Any, path: str) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise wrong(path, "a number", value)


def _bool(value: Any, path: str) -> bool:
    if isinstance(value, bool):
        return value
    raise wrong(path, "true or false", value)


def _from_string(cls: type, parse: Callable[[str], Any], what: str) -> Convert:
    def convert(value: Any, path: str) -> Any:
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            try:
                return parse(value)
            except ValueError:
                pass
        raise wrong(path, what, value)

    return convert


def _datetime(text: str) -> dt.datetime:
    import datetime as dt  # loaded already: the parameter's annotation names it

    # fromisoformat learnt the "Z" suffix only in Python 3.11.
    return dt.datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in "Zz" else text)


def _decimal(value: Any, path: str) -> decimal.Decimal:
    import decimal  # loaded already: the parameter's annotation names it

    if isinstance(value, (int, float, str, decimal.Decimal)) and not isinstance(value, bool):
        try:
            return decimal.Decimal(str(value))
        except decimal.InvalidOperation:
            pass
    raise wrong(path, "a decimal number", value)


SIMPLE: dict[Any, Convert] = {
    str: string,
    int: _int,
    float: _float,
    bool: _bool,
    type(None): null,
    bytes: _from_string(bytes, str.encode, "a string"),
}
# By (module, name), each made from the type itself: recognised without importing
# its module (see type_kinds.stdlib_type).
STDLIB: dict[tuple[str, str], Callable[[Any], Convert]] = {
    ("datetime", "datetime"): lambda tp: _from_string(tp, _datetime, "an ISO 8601 date-time"),
    ("datetime", "date"): lambda tp: _from_string(tp, tp.fromisoformat, "an ISO 8601 date"),
    ("datetime", "time"): lambda tp: _from_string(tp, tp.fromisoformat, "an ISO 8601 time"),
    ("uuid", "UUID"): lambda tp: _from_string(tp, tp, "a UUID"),
    ("pathlib", "Path"): lambda tp: _from_string(tp, tp, "a path"),
    ("pathlib", "PurePath"): lambda tp: _from_string(tp, tp, "a path"),
    ("decimal", "Decimal"): lambda tp: _decimal,
}
