"""JSON arguments in, the declared Python types out: the converters of an ``@tool`` handler.

Each parameter's converter is built once, at decoration, from its annotation;
it converts rather than validates, and raises :class:`Invalid` naming the argument.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, get_args, get_origin

from .tool_json import to_jsonable
from .type_kinds import (
    ANY_TYPES,
    DICT_ORIGINS,
    LIST_ORIGINS,
    SET_ORIGINS,
    UnsupportedType,
    has_default,
    init_fields,
    is_dataclass_type,
    is_model_class,
    is_one_of,
    is_typeddict,
    is_union,
    needs_pydantic,
    split_annotated,
    stdlib_type,
    tuple_items,
    typeddict_fields,
)

if TYPE_CHECKING:
    import datetime as dt
    import decimal

__all__ = ["Convert", "Converters", "Invalid", "describe"]

# -- scalars: checked, and converted where JSON spells them as strings -------------------

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


# -- containers, unions, enums and structures, built from the scalars -------------------


def _union(members: list[Convert]) -> Convert:
    def convert(value: Any, path: str) -> Any:
        # Like pydantic's "smart" unions: a member that keeps the value's own
        # type wins (the str in ``Color | str`` for "red"), else the first fit.
        fallback: list[Any] = []
        problems: list[Invalid] = []
        for member in members:
            try:
                out = member(value, path)
            except Invalid as exc:
                problems.append(exc)
                continue
            if type(out) is type(value):
                return out
            if not fallback:
                fallback.append(out)
        if fallback:
            return fallback[0]
        telling = [p for p in problems if p.path != path or not p.expected]
        if telling:  # a member that got further (a field of the object) says most
            raise telling[0]
        expected = dict.fromkeys(p.expected for p in problems if p.expected)
        raise wrong(path, " or ".join(expected), value)

    return convert


def _literal(values: tuple[Any, ...]) -> Convert:
    pairs = [(to_jsonable(v.value if isinstance(v, enum.Enum) else v), v) for v in values]
    allowed = "one of " + ", ".join(json.dumps(j, ensure_ascii=False) for j, _ in pairs)

    def convert(value: Any, path: str) -> Any:
        for json_value, python_value in pairs:
            if value is python_value or (type(value) is type(json_value) and value == json_value):
                return python_value
        raise wrong(path, allowed, value)

    return convert


def _enum(cls: type[enum.Enum]) -> Convert:
    allowed = "one of " + ", ".join(json.dumps(to_jsonable(m.value)) for m in cls)
    takes_bools = any(isinstance(m.value, bool) for m in cls)

    def convert(value: Any, path: str) -> Any:
        if isinstance(value, cls):
            return value
        if not isinstance(value, bool) or takes_bools:  # True is not the member valued 1
            try:
                return cls(value)
            except ValueError:
                pass
        raise wrong(path, allowed, value)

    return convert


def _validator(validate: Callable[[Any], Any], what: str) -> Convert:
    """A pydantic model's or TypeAdapter's validation, with its errors on one line."""

    def convert(value: Any, path: str) -> Any:
        try:
            return validate(value)
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            errors = getattr(exc, "errors", None)
            if callable(errors):
                detail = "; ".join(
                    f"{'.'.join(map(str, e.get('loc', ()))) or 'value'}: {e.get('msg')}"
                    for e in errors()
                )
            else:
                detail = str(exc)
            raise Invalid(path, f"is not a valid {what}: {detail}") from None

    return convert


class Converters:
    """Builds the converters of one function's parameters. A TypedDict or dataclass
    is built once for all of them, so recursive ones work too."""

    def __init__(self) -> None:
        self._named: dict[type, Convert] = {}

    def build(self, tp: Any) -> Convert:
        """The converter for annotation ``tp``; raises UnsupportedType."""
        if needs_pydantic(tp):
            from pydantic import TypeAdapter  # the type is pydantic's, so it is installed

            adapter = TypeAdapter(tp)
            return _validator(adapter.validate_python, "value")
        base, metadata = split_annotated(tp)
        if metadata:
            return self.build(base)
        if is_one_of(tp, ANY_TYPES):
            return identity
        if tp is None:
            return null
        if is_one_of(tp, SIMPLE):
            return SIMPLE[tp]
        stdlib = stdlib_type(tp, STDLIB)
        if stdlib is not None:
            return STDLIB[stdlib](tp)
        if hasattr(tp, "__supertype__"):  # typing.NewType
            return self.build(tp.__supertype__)
        if is_union(tp):
            return _union([self.build(member) for member in get_args(tp)])
        origin, args = get_origin(tp), get_args(tp)
        if origin is Literal:
            return _literal(args)
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return _enum(tp)
        if is_model_class(tp):
            return _validator(tp.model_validate, tp.__name__)  # type: ignore[attr-defined]
        if is_typeddict(tp):
            return self._named_type(tp, self._typeddict)
        if is_dataclass_type(tp):
            return self._named_type(tp, self._dataclass)
        return self._container(tp, origin, args)

    def _named_type(self, tp: type, build: Callable[[type], Convert]) -> Convert:
        known = self._named.get(tp)
        if known is None:
            built: list[Convert] = []
            # A self-referencing type meets this stand-in while being built.
            self._named[tp] = lambda value, path: built[0](value, path)
            built.append(build(tp))
            known = self._named[tp] = built[0]
        return known

    def _typeddict(self, td: type) -> Convert:
        hints, required_keys = typeddict_fields(td)
        fields = {key: self.build(hint) for key, hint in hints.items()}
        required = [key for key in hints if key in required_keys]

        def convert(value: Any, path: str) -> dict[str, Any]:
            _check_object(value, path, required)
            # Unknown keys are dropped, as pydantic does for a TypedDict.
            return {k: f(value[k], f"{path}.{k}") for k, f in fields.items() if k in value}

        return convert

    def _dataclass(self, cls: type) -> Convert:
        init = init_fields(cls)
        fields = {f.name: self.build(hint) for f, hint in init}
        required = [f.name for f, _ in init if not has_default(f)]

        def convert(value: Any, path: str) -> Any:
            if isinstance(value, cls):
                return value
            _check_object(value, path, required)
            kwargs = {k: f(value[k], f"{path}.{k}") for k, f in fields.items() if k in value}
            try:
                return cls(**kwargs)
            except (TypeError, ValueError) as exc:  # a __post_init__ that rejects it
                raise Invalid(path, f"is not a valid {cls.__name__}: {exc}") from None

        return convert

    def _container(self, tp: Any, origin: Any, args: tuple[Any, ...]) -> Convert:
        kind = origin if origin is not None else tp
        if is_one_of(kind, LIST_ORIGINS) or is_one_of(kind, SET_ORIGINS):
            item = self.build(args[0]) if args else identity
            make: type = frozenset if kind is frozenset else set
            if is_one_of(kind, LIST_ORIGINS):
                make = list
            return _array(lambda values, path: make(_items(item, values, path)))
        if kind is tuple:
            items = tuple_items(tp)
            if items is None:
                item = self.build(args[0]) if args else identity
                return _array(lambda values, path: tuple(_items(item, values, path)))
            slots = [self.build(item) for item in items]
            return _array(lambda values, path: _fixed_tuple(slots, values, path))
        if is_one_of(kind, DICT_ORIGINS):
            if not args:
                return _mapping(string, identity)
            key = _int_key if split_annotated(args[0])[0] is int else self.build(args[0])
            return _mapping(key, self.build(args[1]))
        raise UnsupportedType(tp)


def _check_object(value: Any, path: str, required: list[str]) -> None:
    if not isinstance(value, dict):
        raise wrong(path, "an object", value)
    missing = [key for key in required if key not in value]
    if missing:
        raise Invalid(path, "is missing the required field(s) " + ", ".join(map(repr, missing)))


def _array(finish: Callable[[Any, str], Any]) -> Convert:
    def convert(value: Any, path: str) -> Any:
        # Python callers may pass tuples and sets; JSON only ever sends lists.
        if not isinstance(value, (list, tuple, set, frozenset)):
            raise wrong(path, "an array", value)
        try:
            return finish(value, path)
        except TypeError as exc:  # set items that cannot be hashed
            raise Invalid(path, f"cannot be converted: {exc}") from None

    return convert


def _items(item: Convert, values: Any, path: str) -> list[Any]:
    if item is identity:
        return list(values)
    return [item(value, f"{path}[{i}]") for i, value in enumerate(values)]


def _fixed_tuple(slots: list[Convert], values: Any, path: str) -> tuple[Any, ...]:
    if len(values) != len(slots):
        raise Invalid(path, f"must have exactly {len(slots)} items, got {len(values)}")
    return tuple(
        slot(v, f"{path}[{i}]") for i, (slot, v) in enumerate(zip(slots, values, strict=True))
    )


def _int_key(value: Any, path: str) -> int:
    try:
        return int(value)  # JSON object keys are always strings
    except (TypeError, ValueError):
        raise Invalid(path, f"has key {value!r}, which is not an integer") from None


def _mapping(key: Convert, value: Convert) -> Convert:
    def convert(obj: Any, path: str) -> dict[Any, Any]:
        if not isinstance(obj, dict):
            raise wrong(path, "an object", obj)
        return {key(k, path): value(v, f"{path}.{k}") for k, v in obj.items()}

    return convert
