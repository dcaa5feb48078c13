"""JSON forms of Python values: an ``@tool`` function's results, and schema defaults.

Anything that is not already a str (or the multimodal dict) is JSON-encoded,
with the types a typed tool is likely to return made readable: dataclasses and
pydantic models as objects, enums as their values, dates in ISO 8601, sets as
arrays.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any

from .type_kinds import loaded_types

# Recognised without importing their modules: an instance exists only once its
# module is loaded (see type_kinds.loaded_types). ``datetime`` is a ``date``.
_ISO_TYPES = (("datetime", "date"), ("datetime", "time"))
_STR_TYPES = (("uuid", "UUID"), ("pathlib", "PurePath"), ("decimal", "Decimal"))


def strict_default(obj: Any) -> Any:
    """``json.dumps`` hook: the JSON form of dataclasses, models, enums, dates and sets."""
    dump = getattr(obj, "model_dump", None)
    if callable(dump) and not isinstance(obj, type):
        return dump(mode="json")
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        # Shallow: json.dumps calls back here for whatever the fields hold.
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, loaded_types(_ISO_TYPES)):
        return obj.isoformat()
    if isinstance(obj, (set, frozenset)):
        try:
            return sorted(obj)  # a stable order, when the items have one
        except TypeError:
            return list(obj)
    if isinstance(obj, loaded_types(_STR_TYPES)):
        return str(obj)
    if isinstance(obj, bytes):
        return obj.decode("utf-8", errors="replace")
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def _lenient_default(obj: Any) -> Any:
    try:
        return strict_default(obj)
    except TypeError:
        return str(obj)  # as tool_result does: a result is never lost to its type


# Built once: json.dumps with any option builds a new encoder on every call, and
# this one runs on every call of an @tool function.
_encode = json.JSONEncoder(ensure_ascii=False, default=_lenient_default).encode


def to_jsonable(value: Any) -> Any:
    """``value`` as plain JSON data; TypeError or ValueError when it has no JSON form."""
    return json.loads(json.dumps(value, default=strict_default, allow_nan=False))


def encode_result(value: Any) -> str | dict[str, Any]:
    """What the handler returns: str as is, the multimodal dict as is, else JSON text."""
    if isinstance(value, str) and not isinstance(value, enum.Enum):
        return value
    if isinstance(value, dict) and value.get("_multimodal") is True:
        return value
    return _encode(value)
