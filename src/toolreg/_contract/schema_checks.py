"""Registration-time checks on tool names and schemas.

A bad schema is the tool author's bug; catching it at ``register`` time, with
the tool's name in the message, beats a provider rejecting the whole request
mid-conversation. Every registration is checked: the only caches are keyed
by the content they vouch for (an exact ``str`` name, the encoded
``parameters``), never by an object's identity.
"""

from __future__ import annotations

import json
import marshal
from collections.abc import Callable
from typing import Any

from .names import check_tool_name, is_tool_name
from .schema_limits import check_validatable

EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}

#: Names that passed, so a tool registered again skips the character scan. Only
#: exact ``str`` is looked up: a subclass could claim to equal a name that passed.
_NAMES_PASSED: set[str] = set()
_NAMES_PASSED_LIMIT = 8192

#: ``parameters`` that passed, by content (``content_key``): many tools built
#: alike (a generated pack, an MCP server's list fetched again) check their
#: shared shape once; content with no key is checked in full, every time.
_PASSED_PARAMETERS: set[bytes] = set()
_PASSED_PARAMETERS_LIMIT = 1024
_KEY_LIMIT = 8192  # bytes; a bigger schema is checked in full, not kept
#: Top-level values JSON can always encode (exact types: a subclass may not be).
_PLAIN = frozenset({str, int, float, bool, type(None)})


def check_registration(name: Any, toolset: Any, schema: Any, handler: Any) -> None:
    """Raise ValueError, naming the tool, when a registration is malformed."""
    if type(name) is not str or name not in _NAMES_PASSED:
        if type(name) is not str or not is_tool_name(name):
            check_tool_name(name)  # the rule's own message; a str subclass takes the long way
        else:
            if len(_NAMES_PASSED) >= _NAMES_PASSED_LIMIT:
                _NAMES_PASSED.clear()
            _NAMES_PASSED.add(name)
    if not isinstance(toolset, str) or not toolset:
        raise ValueError(f"Tool {name!r}: toolset must be a non-empty string, got {toolset!r}")
    if not callable(handler):
        raise ValueError(f"Tool {name!r}: handler must be callable, got {type(handler).__name__}")
    if not isinstance(schema, dict):
        raise ValueError(f"Tool {name!r}: schema must be a dict, got {type(schema).__name__}")
    declared = schema.get("name")
    if declared is not None and declared != name:
        raise ValueError(f"Tool {name!r}: schema names a different tool, {declared!r}")
    description = schema.get("description")
    if description is not None and not isinstance(description, str):
        raise ValueError(f"Tool {name!r}: schema 'description' must be a string")
    if "parameters" in schema:
        _check_parameters_once(name, schema["parameters"])
    for key, value in schema.items():
        if type(key) is not str or (type(value) not in _PLAIN and key != "parameters"):
            rest = {key: value for key, value in schema.items() if key != "parameters"}
            _check_json(name, rest, "schema")
            break


def content_key(value: Any) -> bytes | None:
    """A key equal only for content equal type for type; None for anything but plain data.

    The marshal encoding: it exists only for exact dicts, lists, tuples,
    strings, numbers, booleans and None (dicts in their own order), and bytes
    that can be read back are equal only for equal content. Version 4 writes
    ASCII strings as they are (about half version 2's cost) and marks objects
    held more than once, so equal content held differently (a sub-schema
    shared by two tools, an interned string) may get another key: a cache
    miss, never a wrong hit.
    """
    try:
        return marshal.dumps(value, 4)
    except (ValueError, RecursionError):
        return None


def _check_parameters_once(name: str, parameters: Any) -> None:
    """``check_parameters`` and the JSON check, skipped for content that passed before."""
    key = content_key(parameters)
    if key is not None and key in _PASSED_PARAMETERS:
        return
    check_parameters(name, parameters)
    _check_json(name, parameters, "schema")
    if key is not None and len(key) <= _KEY_LIMIT:
        if len(_PASSED_PARAMETERS) >= _PASSED_PARAMETERS_LIMIT:
            _PASSED_PARAMETERS.clear()
        _PASSED_PARAMETERS.add(key)


def _check_json(name: str, value: Any, what: str) -> None:
    try:
        json.dumps(value)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValueError(f"Tool {name!r}: {what} is not JSON-serialisable: {exc}") from None


def check_result_limit(name: str, limit: Any) -> None:
    """``max_result_size_chars`` is None or a whole number of characters, 0 or more."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(
            f"Tool {name!r}: max_result_size_chars must be None or an int >= 0, got {limit!r}"
        )


def check_parameters(name: str, parameters: Any) -> None:
    """``parameters`` must be a JSON-Schema object schema."""
    _check_object_schema(
        name, parameters, lambda part: f"schema {'.'.join(['parameters', *part])!r}"
    )
    check_validatable(name, parameters)


def check_output_schema(name: str, schema: Any) -> None:
    """An output schema (MCP ``outputSchema``) must be an object schema, like ``parameters``.

    ``toolreg serve`` checks results against it, so it must be one that can be
    checked: local ``$ref`` only, bounded depth, no ``$ref`` loop.
    """
    _check_object_schema(
        name, schema, lambda part: f"output_schema {'.'.join(part)!r}" if part else "output_schema"
    )
    check_validatable(name, schema, "output_schema")
    _check_json(name, schema, "output_schema")


def _check_object_schema(name: str, schema: Any, where: Callable[[list[str]], str]) -> None:
    """ValueError unless ``schema`` is an object schema; ``where`` names a part of it."""
    if not isinstance(schema, dict):
        raise ValueError(
            f"Tool {name!r}: {where([])} must be a JSON-Schema object (a dict), "
            f"got {type(schema).__name__}"
        )
    if schema.get("type") != "object":
        raise ValueError(
            f'Tool {name!r}: {where([])} must have "type": "object", got {schema.get("type")!r}'
        )
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        raise ValueError(f"Tool {name!r}: {where(['properties'])} must be a dict")
    for prop, sub in properties.items():
        if not isinstance(sub, dict):
            raise ValueError(f"Tool {name!r}: {where(['properties', str(prop)])} must be a dict")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise ValueError(f"Tool {name!r}: {where(['required'])} must be a list of strings")
    missing = [r for r in required if r not in properties]
    if missing:
        raise ValueError(
            f"Tool {name!r}: {where(['required'])} names undeclared properties: {missing}"
        )


def parameters_of(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema's parameters, with ``properties`` always present (providers want it)."""
    parameters = schema.get("parameters") or EMPTY_PARAMETERS
    if "properties" not in parameters:
        return {**parameters, "properties": {}}
    return parameters
