"""``Annotated`` metadata as JSON Schema keywords, the way pydantic reads it (and more).

pydantic is never imported here; its ``Field`` is recognised through
``sys.modules`` (see ``_type_kinds``).
"""

from __future__ import annotations

import copy
from typing import Any

from .type_kinds import is_field_info

Schema = dict[str, Any]

# annotated_types / pydantic constraint attributes -> JSON Schema keywords.
_NUMERIC = {
    "gt": "exclusiveMinimum",
    "ge": "minimum",
    "lt": "exclusiveMaximum",
    "le": "maximum",
    "multiple_of": "multipleOf",
}
_LENGTHS = {
    "string": ("minLength", "maxLength"),
    "array": ("minItems", "maxItems"),
    "object": ("minProperties", "maxProperties"),
}
_CONSTRAINTS = (*_NUMERIC, "min_length", "max_length", "pattern")


def apply_metadata(schema: Schema, metadata: tuple[Any, ...] | list[Any]) -> Schema:
    """Fold ``Annotated`` metadata into ``schema``, later items winning.

    A str is the description; a dict is merged in as JSON Schema keywords; a
    pydantic ``Field`` gives its description, examples and constraints;
    annotated_types constraints (``Ge(0)``, ``MaxLen(5)``) become keywords.
    Anything else is ignored, as pydantic ignores metadata it does not know.
    """
    for item in metadata:
        if isinstance(item, str):
            schema["description"] = item
        elif isinstance(item, dict):
            schema.update(copy.deepcopy(item))  # never share the annotation's own lists
        elif is_field_info(item):
            _apply_field_info(schema, item)
        elif type(item).__module__.startswith(("annotated_types", "pydantic")):
            constraints = {
                key: getattr(item, key)
                for key in _CONSTRAINTS
                if getattr(item, key, None) is not None
            }
            _constrain(schema, constraints)
    return schema


def _apply_field_info(schema: Schema, info: Any) -> None:
    apply_metadata(schema, info.metadata)
    if info.description is not None:
        schema["description"] = info.description
    if info.examples is not None:
        schema["examples"] = info.examples
    extra = info.json_schema_extra
    if isinstance(extra, dict):
        schema.update(extra)
    elif callable(extra):
        extra(schema)


def _constrain(schema: Schema, constraints: dict[str, Any]) -> None:
    if not constraints:
        return
    if "anyOf" in schema:
        # As pydantic does for Optional[int] with ge=0: the bound goes on the
        # members it can apply to, not on null.
        for member in schema["anyOf"]:
            if member.get("type") != "null":
                _constrain(member, constraints)
        return
    lengths = _LENGTHS.get(schema.get("type", "string"), _LENGTHS["string"])
    for key, value in constraints.items():
        if key == "pattern":
            schema["pattern"] = getattr(value, "pattern", value)  # str or re.Pattern
        elif key == "min_length":
            schema[lengths[0]] = value
        elif key == "max_length":
            schema[lengths[1]] = value
        else:
            schema[_NUMERIC[key]] = value
