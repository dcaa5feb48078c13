"""Read-only JSON structures: how one built definition is shared by every caller.

The mutators of :class:`FrozenDict` and :class:`FrozenList` raise ``TypeError``: a guard
against accidents, not against code set on it (``dict.__setitem__(d, k, v)`` still writes).
"""

from __future__ import annotations

from typing import Any, NoReturn

_READ_ONLY = (
    "tool definitions are shared by every caller and read-only; "
    "copy.deepcopy(definition) gives a private, mutable copy"
)


def _refuse(self: object, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(f"cannot change a {type(self).__name__}: {_READ_ONLY}")


# Subclasses, so ``isinstance`` checks, ``json.dumps``, SDKs and pydantic accept them;
# ``copy.deepcopy`` gives plain dicts and lists, ``dict(d)`` and ``list(x)`` plain
# shallow copies, and both pickle.
class FrozenDict(dict):  # type: ignore[type-arg]
    """A ``dict`` whose mutators raise ``TypeError``; values are frozen too."""

    __slots__ = ()

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return thaw(self)


class FrozenList(list):  # type: ignore[type-arg]
    """A ``list`` whose mutators raise ``TypeError``; items are frozen too."""

    __slots__ = ()

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenList, (list(self),))

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return thaw(self)


_SCALARS = (str, int, float, bool, type(None))


def freeze(value: Any) -> Any:
    """A frozen deep copy of JSON data (already frozen parts are shared, not copied).

    TypeError, naming where, for anything JSON cannot hold: a key that is not a
    string, or a value that is not a dict, list, tuple, str, number, bool or None.
    Subclasses of str, int and float become the plain type.
    """
    try:
        return _freeze(value)
    except _NotJson:
        raise TypeError(_where_not_json(value, "") or "not JSON data") from None


class _NotJson(Exception):
    pass


def _freeze(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    if kind is FrozenDict or kind is FrozenList:
        return value
    if isinstance(value, dict):
        return FrozenDict({_key(k): _freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return FrozenList([_freeze(v) for v in value])
    return _plain_scalar(value)


def _key(key: Any) -> str:
    if type(key) is str:
        return key
    if isinstance(key, str):
        return str.__str__(key)
    raise _NotJson


def _plain_scalar(value: Any) -> Any:
    # bool is a final class, so an int subclass here is never a bool.
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    raise _NotJson


def _where_not_json(value: Any, path: str) -> str:
    """The first place in ``value`` JSON cannot hold, described (only on the error path)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{path or 'the definition'} has a key that is not a string: {key!r}"
            found = _where_not_json(item, f"{path}.{key}" if path else key)
            if found:
                return found
        return ""
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = _where_not_json(item, f"{path}[{index}]")
            if found:
                return found
        return ""
    if isinstance(value, _SCALARS):
        return ""
    kind = type(value).__name__
    return f"{path or 'the definition'} holds a value of type {kind!r}, which JSON cannot hold"


def thaw(value: Any) -> Any:
    """A plain, mutable deep copy of JSON data (frozen or not)."""
    if isinstance(value, dict):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, list):
        return [thaw(v) for v in value]
    return value
