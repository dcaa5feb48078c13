"""What kind of type an annotation is, shared by the schema builder and the converters.

Recognises pydantic and stdlib value types through ``sys.modules``, never by
importing their modules.
"""

from __future__ import annotations

import inspect
import sys
import types
import typing
from collections import abc
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Union, get_args, get_origin

if TYPE_CHECKING:
    import dataclasses

LIST_ORIGINS = frozenset({list, abc.Sequence, abc.MutableSequence})
SET_ORIGINS = frozenset({set, frozenset, abc.Set, abc.MutableSet})
DICT_ORIGINS = frozenset({dict, abc.Mapping, abc.MutableMapping})
#: Annotations that constrain nothing (a parameter without one is ``Any``, as in pydantic).
ANY_TYPES = frozenset({Any, object, inspect.Parameter.empty})
_TYPEDDICT_MARKERS = ("Required", "NotRequired", "ReadOnly")


class UnsupportedType(TypeError):
    """A type with no JSON Schema; ``culprit`` is the innermost offending type."""

    def __init__(self, culprit: Any) -> None:
        super().__init__(f"{type_name(culprit)} has no JSON Schema")
        self.culprit = culprit


def type_name(tp: Any) -> str:
    """A short readable name: ``Foo``, ``list[Foo]``, ``Optional[int]``."""
    if isinstance(tp, type) and not get_args(tp):
        return tp.__qualname__
    return repr(tp).replace("typing.", "").replace("collections.abc.", "")


# -- recognising kinds of types -------------------------------------------------------------


def split_annotated(tp: Any) -> tuple[Any, tuple[Any, ...]]:
    """``Annotated[X, *meta]`` -> ``(X, meta)``; anything else -> ``(tp, ())``."""
    if get_origin(tp) is typing.Annotated:
        return get_args(tp)[0], tuple(tp.__metadata__)
    return tp, ()


def is_union(tp: Any) -> bool:
    return get_origin(tp) in (Union, types.UnionType)


def is_typeddict(tp: Any) -> bool:
    # typing.is_typeddict misses typing_extensions' TypedDict on older Pythons.
    return (
        isinstance(tp, type)
        and issubclass(tp, dict)
        and hasattr(tp, "__required_keys__")
        and hasattr(tp, "__total__")
    )


def is_dataclass_type(tp: Any) -> bool:
    # Only the dataclasses module makes a dataclass: with it not loaded there is none,
    # and a start-up whose tools take none never imports it.
    module = sys.modules.get("dataclasses")
    return module is not None and isinstance(tp, type) and module.is_dataclass(tp)


def stdlib_type(tp: Any, names: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    """The ``(module, name)`` among ``names`` that is ``tp`` itself, or None.

    Only modules already loaded are looked at: an annotation, or a value, of
    ``uuid.UUID`` exists only once ``uuid`` is imported.
    """
    if not isinstance(tp, type):
        return None
    for module, name in names:
        loaded = sys.modules.get(module)
        if loaded is not None and getattr(loaded, name, None) is tp:
            return module, name
    return None


def loaded_types(names: Iterable[tuple[str, str]]) -> tuple[type, ...]:
    """The types among ``names`` whose modules are loaded (no other can have instances)."""
    found = []
    for module, name in names:
        loaded = sys.modules.get(module)
        if loaded is not None:
            found.append(getattr(loaded, name))
    return tuple(found)


def _pydantic_attr(module: str, name: str) -> Any:
    loaded = sys.modules.get(module)
    return getattr(loaded, name, None) if loaded is not None else None


def is_model_class(tp: Any) -> bool:
    """A pydantic ``BaseModel`` subclass (without importing pydantic)."""
    base = _pydantic_attr("pydantic", "BaseModel")
    return base is not None and isinstance(tp, type) and issubclass(tp, base)


def is_field_info(obj: Any) -> bool:
    """A pydantic ``Field(...)`` (without importing pydantic)."""
    field_info = _pydantic_attr("pydantic.fields", "FieldInfo")
    return field_info is not None and isinstance(obj, field_info)


def needs_pydantic(tp: Any) -> bool:
    """Types only pydantic understands: its own (``HttpUrl``, ``constr()``) or ones
    that define pydantic hooks. Models are handled on their own."""
    base, metadata = split_annotated(tp)
    if metadata:
        return any(
            type(m).__module__.startswith("pydantic") and not is_field_info(m) for m in metadata
        ) or needs_pydantic(base)
    return (
        isinstance(tp, type)
        and not is_model_class(tp)
        and (
            tp.__module__.startswith("pydantic")
            or hasattr(tp, "__get_pydantic_core_schema__")
            or hasattr(tp, "__get_pydantic_json_schema__")
        )
    )


def tuple_items(tp: Any) -> tuple[Any, ...] | None:
    """The item types of a fixed-length tuple type (perhaps none: ``tuple[()]``), or
    None for a tuple of any length (``tuple``, ``tuple[X, ...]``)."""
    args = get_args(tp)
    # Bare typing.Tuple and tuple[()] both have no args; only the first is "any length".
    bare = tp is tuple or tp is typing.Tuple  # noqa: UP006
    if bare or (len(args) == 2 and args[1] is Ellipsis):
        return None
    return () if args == ((),) else args


def typeddict_fields(td: type) -> tuple[dict[str, Any], frozenset[str]]:
    """Field types (Required/NotRequired/ReadOnly unwrapped) and the required keys."""
    hints = typing.get_type_hints(td, include_extras=True)
    fields = {}
    required = set(td.__required_keys__)
    for key, hint in hints.items():
        # Under PEP 563 the class saw "NotRequired[int]" as a string and counted
        # the key as required; the resolved hint says what was meant.
        while (marker := getattr(get_origin(hint), "_name", None)) in _TYPEDDICT_MARKERS:
            if marker == "Required":
                required.add(key)
            elif marker == "NotRequired":
                required.discard(key)
            hint = get_args(hint)[0]
        fields[key] = hint
    return fields, frozenset(required)


def init_fields(cls: type) -> list[tuple[dataclasses.Field[Any], Any]]:
    """A dataclass's ``__init__`` fields with their resolved types."""
    import dataclasses  # loaded already: ``cls`` is a dataclass

    hints = typing.get_type_hints(cls, include_extras=True)
    return [(f, hints.get(f.name, Any)) for f in dataclasses.fields(cls) if f.init]


def has_default(field: dataclasses.Field[Any]) -> bool:
    import dataclasses

    return (
        field.default is not dataclasses.MISSING or field.default_factory is not dataclasses.MISSING
    )


def is_one_of(tp: Any, group: Any) -> bool:
    """``tp in group``, for annotations that cannot be hashed (dict metadata)."""
    try:
        return tp in group
    except TypeError:
        return False
