"""A tool definition as the operator reviewed it, and its digest (``toolreg.lock``).

A definition is what reaches the model and what its hints promise: the name, the
description, the input and output schemas and the annotations. A pack's tool is
read from its entry; an MCP server's from the server's own listing, before
toolreg reshapes it, so a change in toolreg's conversion is not a server's drift.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .entry import ToolEntry

#: The fields of a definition, in the order a lock file shows them.
FIELDS = ("name", "description", "input_schema", "output_schema", "annotations")

Definition = dict[str, Any]


def entry_definition(entry: ToolEntry) -> Definition:
    """A registered tool's definition (its static schema: dynamic overrides are the
    tool's own code, which the pack's RECORD digest holds)."""
    return {
        "name": entry.name,
        "description": entry.description,
        "input_schema": entry.schema.get("parameters"),
        "output_schema": entry.output_schema,
        "annotations": dict(entry.annotations) or None,
    }


def mcp_definition(tool: Mapping[str, Any]) -> Definition:
    """An MCP server's tool as it listed it (``tools/list``'s camelCase fields)."""
    return {
        "name": tool.get("name"),
        "description": tool.get("description"),
        "input_schema": tool.get("inputSchema"),
        "output_schema": tool.get("outputSchema"),
        "annotations": tool.get("annotations") or None,
    }


# One encoder for every digest: json.dumps with options makes a new one each call.
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr)


def digest(definition: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of the definition's canonical JSON: keys sorted, no spaces,
    non-ASCII kept (as the lock shows it). Anything JSON cannot say (a server's odd
    value) is written as its ``repr``: it still changes the digest when it changes.
    """
    text = _ENCODER.encode(definition).encode("utf-8", "surrogatepass")
    return "sha256:" + hashlib.sha256(text).hexdigest()
