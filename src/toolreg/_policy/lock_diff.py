"""What changed since the lock: in words for a report, as unified diffs for a reviewer.

Pure functions of the lock's records and of what is there now; the loader, the
MCP manager and ``toolreg lock`` each ask them the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from .._contract.definition_digest import FIELDS, Definition, digest
from .lock_file import LockedTool, shown


class FileChanges(NamedTuple):
    added: list[str]
    removed: list[str]
    modified: list[str]

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.modified)


def file_changes(locked: Mapping[str, str], now: Mapping[str, str]) -> FileChanges:
    """The RECORD files added, removed, or with another hash, sorted."""
    return FileChanges(
        sorted(now.keys() - locked.keys()),
        sorted(locked.keys() - now.keys()),
        sorted(p for p in locked.keys() & now.keys() if locked[p] != now[p]),
    )


def pack_change(locked_version: str, version: str, files: FileChanges, *, limit: int = 5) -> str:
    """One line for ``toolreg plugins`` and doctor: the version, then the files."""
    parts = []
    if locked_version != version:
        parts.append(f"version {locked_version} -> {version}")
    for word, names in (
        ("added", files.added),
        ("removed", files.removed),
        ("modified", files.modified),
    ):
        if names:
            shown_names = ", ".join(names[:limit])
            more = f" and {len(names) - limit} more" if len(names) > limit else ""
            parts.append(f"files {word}: {shown_names}{more}")
    return "; ".join(parts) or "its RECORD differs from the lock"


def definition_diff(old: LockedTool | None, new: Definition | None, label: str) -> str:
    """A unified diff of a tool's definition fields, as the lock shows them; "" if none."""
    import difflib

    before = dict(old.shown) if old is not None else {}
    after = shown(new) if new is not None else {}
    out: list[str] = []
    for field in FIELDS[1:]:
        a, b = before.get(field, ""), after.get(field, "")
        if a == b:
            continue
        out.extend(
            difflib.unified_diff(
                a.splitlines(keepends=True),
                b.splitlines(keepends=True),
                fromfile=f"{label} {field} (locked)",
                tofile=f"{label} {field} (now)",
                lineterm="\n",
            )
        )
    text = "".join(line if line.endswith("\n") else line + "\n" for line in out)
    return text


def schema_digest(schema: Any) -> str:
    """A digest of an input schema alone: two tools with one are a possible rename."""
    return digest({"input_schema": schema})


def locked_schema_digest(tool: LockedTool) -> str:
    return schema_digest(tool.definition().get("input_schema"))


def possible_renames(
    gone: Mapping[str, LockedTool], new: Mapping[str, Definition]
) -> dict[str, str]:
    """New tool name -> the vanished locked tool whose input schema it has."""
    if not gone or not new:
        return {}
    by_schema: dict[str, str] = {}
    for name, tool in sorted(gone.items()):
        by_schema.setdefault(locked_schema_digest(tool), name)
    found = {}
    for name, definition in new.items():
        old = by_schema.get(schema_digest(definition.get("input_schema")))
        if old is not None:
            found[name] = old
    return found
