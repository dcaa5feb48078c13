"""A griffe extension for the API page: the docstrings as the code's readers see them.

The code documents an attribute with ``#:`` comments above it, which griffe does
not read, and names code the way Python's own docs do (:class:`ToolRegistry`),
which Markdown would print with the role in front.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj):`~?([^`]+)`")


class SphinxStyle(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is None and obj.is_attribute:
            comment = _comment_above(obj)
            if comment:
                obj.docstring = griffe.Docstring(comment, parent=obj)
        if obj.docstring is not None:
            obj.docstring.value = _ROLE.sub(r"`\1`", obj.docstring.value)


def _comment_above(obj: griffe.Object) -> str:
    try:
        lines = obj.lines_collection[obj.filepath]
    except KeyError:
        return ""
    if not obj.lineno:
        return ""
    found: list[str] = []
    index = obj.lineno - 2  # the line above the assignment, 0-based
    while index >= 0 and lines[index].strip().startswith("#:"):
        found.insert(0, lines[index].strip()[2:].strip())
        index -= 1
    return " ".join(found)
