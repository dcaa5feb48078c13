"""A tool's schema with every local ``$ref`` replaced by what it names.

What the schema accepts never changes: one that cannot be inlined raises
:class:`NotInlinable` with the reason, never half-inlined (the cases: docs/formats.md).
"""

from __future__ import annotations

from typing import Any

from .._contract.schema_limits import map_subschemas, resolve_pointer
from .formats import NotInlinable

# Both limits refuse a schema before it costs memory or Python's recursion limit:
# references that fan out double the schema at each step.
#: Deepest nesting, counting each ``$ref`` followed as a level, of an inlined schema.
MAX_INLINED_DEPTH = 64
#: Most subschemas an inlined schema may hold.
MAX_INLINED_NODES = 10_000

_DEFINITIONS = ("$defs", "definitions")


def inline_refs(parameters: dict[str, Any]) -> dict[str, Any]:
    """``parameters`` with its local ``$ref``s inlined; NotInlinable with the reason.

    Builds new dicts and lists for every schema it rewrites; values that are
    data (``enum``, ``default``) are shared with the input, which is never changed.
    """
    inlined = _Inliner(parameters).schema(parameters, "#", 0)
    if not isinstance(inlined, dict):
        raise NotInlinable("the parameters' $ref names a boolean schema, not an object schema")
    return inlined


class _Inliner:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root  # pointers resolve against the schema as registered
        self.expanding: list[str] = []  # the $refs being inlined above the current node
        self.nodes = 0

    def schema(self, node: Any, where: str, depth: int) -> Any:
        if not isinstance(node, dict):
            return node  # a boolean schema, or malformed: the validator's concern
        if depth > MAX_INLINED_DEPTH:
            raise NotInlinable(
                f"at {where}: nesting and $ref hops go more than {MAX_INLINED_DEPTH} levels deep"
            )
        self.nodes += 1
        if self.nodes > MAX_INLINED_NODES:
            raise NotInlinable(f"more than {MAX_INLINED_NODES} subschemas once inlined")
        if "$ref" in node:
            return self._ref(node, where, depth)
        # Definitions are inlined where they are used; unused ones are dropped unread.
        own = {key: value for key, value in node.items() if key not in _DEFINITIONS}
        return map_subschemas(own, lambda sub, step: self.schema(sub, f"{where}/{step}", depth + 1))

    def _ref(self, node: dict[str, Any], where: str, depth: int) -> Any:
        ref = node["$ref"]
        if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
            raise NotInlinable(
                f"at {where}: $ref {ref!r} is not a local reference ('#/...'); "
                "schemas are never fetched"
            )
        if ref in self.expanding:
            raise NotInlinable(
                f"at {where}: $ref {ref!r} is recursive (it is inside what it names), "
                "and a recursive shape has no inlined form"
            )
        target = resolve_pointer(self.root, ref)
        if not isinstance(target, (dict, bool)):
            raise NotInlinable(f"at {where}: $ref {ref!r} names no schema")
        self.expanding.append(ref)
        try:
            inlined = self.schema(target, ref, depth + 1)
        finally:
            self.expanding.pop()
        beside = {key: value for key, value in node.items() if key != "$ref"}
        if not beside:
            return inlined
        if not isinstance(inlined, dict):  # true or false, with keywords beside it
            inlined = {} if inlined else {"not": {}}
        return {**inlined, **self.schema(beside, where, depth)}
