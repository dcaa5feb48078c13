"""Schemas dispatch can always validate: bounded depth, local refs only, no ref loops.

:func:`check_validatable` refuses at registration, naming the tool, a schema that would
exceed Python's limits, make the validator fetch a URL, or recurse forever.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

#: Deepest nesting of subschemas in ``parameters`` (``contains`` counts twice:
#: the validator spends two nested blocks on it). Providers accept far less.
MAX_SCHEMA_DEPTH = 16
#: Most ``$ref`` hops a rewrite that inlines references follows down one path (a chain
#: of definitions each naming the next); past it the reference is not inlined.
MAX_REF_HOPS = 64

# Keywords whose value is one subschema, a list of them, or a name -> subschema map.
_ONE = ("additionalProperties", "additionalItems", "propertyNames", "not", "if", "then", "else")
_ONE += ("unevaluatedProperties", "unevaluatedItems")
_MANY = ("allOf", "anyOf", "oneOf", "prefixItems")
_MAP = ("properties", "patternProperties", "dependentSchemas", "definitions", "$defs")
#: Keywords that apply their subschemas to the same value, not to a part of it. A loop
#: of these never reaches the data (``allOf: [{"$ref": "#"}]``) and is refused; a
#: ``$ref`` through the data (a tree: ``items: {"$ref": "#"}``) consumes a level a step.
_SAME_VALUE = frozenset(("allOf", "anyOf", "oneOf", "not", "if", "then", "else"))
_SAME_VALUE |= {"dependentSchemas", "dependencies"}
_WEIGHT = {"contains": 2}


#: Every keyword that holds subschemas, in the order they are walked.
_ORDER = (*_ONE, *_MANY, *_MAP, "items", "contains", "dependencies")
_KEYWORDS = frozenset(_ORDER)
_RANK = {key: rank for rank, key in enumerate(_ORDER)}


_Child = tuple[str, str, "int | str | None", Any]


def _children(schema: dict[str, Any], present: set[str]) -> Iterator[_Child]:
    """(keyword, pointer step, slot, subschema) for every subschema directly under ``schema``.

    ``slot`` is where in the keyword's value it sits: a list index, a map key,
    or None for the value itself.

    ``present`` is the schema's keywords that hold subschemas; walked in a fixed
    order, so that of two problems the same one is always reported.
    """
    for key in sorted(present, key=_RANK.__getitem__) if len(present) > 1 else present:
        value = schema[key]
        if key in _MANY or (key == "items" and isinstance(value, list)):
            if isinstance(value, list):
                for index, sub in enumerate(value):
                    yield key, f"{key}/{index}", index, sub
        elif key in _MAP:
            if isinstance(value, dict):
                for name, sub in value.items():
                    yield key, f"{key}/{_escape(name)}", name, sub
        elif key == "dependencies":
            if isinstance(value, dict):
                for name, sub in value.items():
                    if isinstance(sub, dict):  # a list of names is not a schema
                        yield key, f"{key}/{_escape(name)}", name, sub
        elif key != "items" or value is not None:
            yield key, key, None, value


def map_subschemas(schema: dict[str, Any], rewrite: Callable[[Any, str], Any]) -> dict[str, Any]:
    """A copy of ``schema`` with each direct subschema replaced by ``rewrite(sub, step)``.

    ``step`` is the JSON-pointer step to it (``properties/a``). Only keywords
    that hold subschemas are rewritten; values that are data (``enum``,
    ``default``, ``examples``) are kept as they are, whatever keys they hold.
    """
    out = dict(schema)
    present = schema.keys() & _KEYWORDS
    copied: set[str] = set()
    for key, step, slot, sub in _children(schema, present) if present else ():
        if slot is None:
            out[key] = rewrite(sub, step)
            continue
        if key not in copied:  # a new list or map for the rewritten parts
            out[key] = list(out[key]) if isinstance(slot, int) else dict(out[key])
            copied.add(key)
        out[key][slot] = rewrite(sub, step)
    return out


def _escape(name: Any) -> str:
    return str(name).replace("~", "~0").replace("/", "~1")


def resolve_pointer(root: dict[str, Any], ref: str) -> Any:
    """The target of a local JSON pointer (``#/$defs/Name``), or None."""
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return None  # a remote or anchor ref: nothing here to follow
    from urllib.parse import unquote  # only a schema with $refs gets here

    node: Any = root
    for token in ref[2:].split("/"):
        token = unquote(token).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def check_validatable(
    name: str, parameters: dict[str, Any], what: str = "schema 'parameters'"
) -> None:
    """Raise ValueError, naming the tool, for a schema (``what``) that could not be validated."""
    # Iterative, so that a schema nested 100,000 deep is refused, not a RecursionError.
    same_value: dict[int, list[dict[str, Any]]] = {}
    deepest: dict[int, int] = {}
    stack: list[tuple[Any, str, int]] = [(parameters, "#", 0)]
    while stack:
        schema, where, depth = stack.pop()
        if not isinstance(schema, dict) or deepest.get(id(schema), -1) >= depth:
            continue  # booleans and malformed parts are the validator's own concern
        if depth > MAX_SCHEMA_DEPTH:
            raise ValueError(
                f"Tool {name!r}: {what} is nested too deeply at {where} "
                f"(more than {MAX_SCHEMA_DEPTH} levels)"
            )
        first_visit = id(schema) not in deepest
        deepest[id(schema)] = depth
        present = schema.keys() & _KEYWORDS
        if not present and "$ref" not in schema:
            continue  # a leaf, like most of a schema: nothing under it
        targets: list[dict[str, Any]] = []
        for keyword, step, _, sub in _children(schema, present):
            stack.append((sub, f"{where}/{step}", depth + _WEIGHT.get(keyword, 1)))
            if keyword in _SAME_VALUE and isinstance(sub, dict):
                targets.append(sub)
        if not first_visit:
            continue
        if "$ref" in schema:
            target = _ref_target(name, parameters, schema["$ref"], where, what)
            targets.append(target)
            # The validator compiles a ref's target on its own: walk it from there.
            stack.append((target, schema["$ref"], 0))
        if targets:
            same_value[id(schema)] = targets
    _refuse_loops(name, same_value, what)


def _ref_target(name: str, root: dict[str, Any], ref: Any, where: str, what: str) -> dict[str, Any]:
    if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
        raise ValueError(
            f"Tool {name!r}: {what} has $ref {ref!r} at {where}; only local "
            "references ('#' or '#/...') are allowed, schemas are never fetched"
        )
    target = resolve_pointer(root, ref)
    if target is None:
        raise ValueError(
            f"Tool {name!r}: {what} has $ref {ref!r} at {where}, which names nothing in the schema"
        )
    if not isinstance(target, dict):
        raise ValueError(
            f"Tool {name!r}: {what} has $ref {ref!r} at {where}, which does not name a schema"
        )
    return target


def _refuse_loops(name: str, same_value: dict[int, list[dict[str, Any]]], what: str) -> None:
    """A cycle of same-value steps means validating any call never ends."""
    done: set[int] = set()
    for start in same_value:
        if start in done:
            continue
        # Depth-first with an explicit stack; "open" holds the current path.
        open_: set[int] = {start}
        path: list[tuple[int, Iterator[dict[str, Any]]]] = [(start, iter(same_value[start]))]
        while path:
            node, pending = path[-1]
            nxt = next(pending, None)
            if nxt is None:
                path.pop()
                open_.discard(node)
                done.add(node)
                continue
            key = id(nxt)
            if key in open_:
                raise ValueError(
                    f"Tool {name!r}: {what} has a $ref loop that never reaches "
                    "the arguments (a schema that refers to itself), so no call could be checked"
                )
            if key not in done:
                open_.add(key)
                path.append((key, iter(same_value.get(key, ()))))
