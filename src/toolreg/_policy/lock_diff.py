"""What changed since the lock: in words for a report, as unified diffs for a reviewer.

Pure functions of the lock's records and of what is there now; the loader, the
MCP manager and ``toolreg lock`` each ask them the same way.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, NamedTuple

from .._contract.definition_digest import FIELDS, Definition, digest
from .lock_file import Lock, LockedPack, LockedRequirement, LockedTool, shown


class FileChanges(NamedTuple):
    added: list[str]
    removed: list[str]
    modified: list[str]

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.modified)


def file_changes(locked: Mapping[str, str], now: Mapping[str, str]) -> FileChanges:
    """The RECORD files added, removed, or with another hash, sorted.

    The metadata folder is named for the version (``demo-1.0.dist-info``), so
    across a version bump its files are matched by the name without it and shown
    as ``demo-*.dist-info/METADATA``: modified, not removed and added again.
    """
    before = {_unversioned(p): h for p, h in locked.items()}
    after = {_unversioned(p): h for p, h in now.items()}
    return FileChanges(
        sorted(after.keys() - before.keys()),
        sorted(before.keys() - after.keys()),
        sorted(p for p in before.keys() & after.keys() if before[p] != after[p]),
    )


def _unversioned(path: str) -> str:
    head, sep, rest = path.partition("/")
    if not sep or not head.endswith(".dist-info"):
        return path
    name = head[: -len(".dist-info")].split("-", 1)[0]
    return f"{name}-*.dist-info/{rest}"


def pack_change(
    locked_version: str,
    version: str,
    files: FileChanges,
    *,
    limit: int = 5,
    requires: list[str] | None = None,
) -> str:
    """One line for ``toolreg plugins`` and doctor: the version, the files, then the
    required distributions (``requirement_changes``)."""
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
    parts += requires or ()
    return "; ".join(parts) or "its RECORD differs from the lock"


def requirement_changes(
    locked: Mapping[str, LockedRequirement], now: Mapping[str, LockedRequirement]
) -> list[str]:
    """The required distributions that differ from the lock, one phrase each, by name."""
    out = []
    for name in sorted(locked.keys() | now.keys()):
        was, is_ = locked.get(name), now.get(name)
        if was == is_:
            continue
        if was is None:
            out.append(f"requires {name} {is_.version or '(not installed)'} now")  # type: ignore[union-attr]
        elif is_ is None:
            out.append(f"no longer requires {name}")
        elif not is_.version:
            out.append(f"requires {name}, which is no longer installed")
        elif was.version != is_.version:
            out.append(f"requirement {name} {was.version or '(not installed)'} -> {is_.version}")
        else:
            out.append(f"requirement {name} {is_.version}: its RECORD differs from the lock")
    return out


def definition_diff(old: LockedTool | None, new: Definition | None, label: str) -> str:
    """A unified diff of a tool's definition fields, as the lock shows them; "" if none."""
    import difflib

    before = dict(old.shown) if old is not None else {}
    after = shown(new) if new is not None else {}
    out: list[str] = []
    for field in changed_fields(before, after):
        a, b = before.get(field, ""), after.get(field, "")
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


def changed_fields(locked: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """The fields (the name aside) whose texts as the lock shows them differ, in order."""
    return [field for field in FIELDS[1:] if locked.get(field, "") != now.get(field, "")]


def _schema_digest(schema: Any) -> str:
    """A digest of an input schema alone: two tools with one are a possible rename."""
    return digest({"input_schema": schema})


def possible_renames(
    gone: Mapping[str, LockedTool], new: Mapping[str, Definition]
) -> dict[str, str]:
    """New tool name -> the vanished locked tool whose input schema it has."""
    if not gone or not new:
        return {}
    by_schema: dict[str, str] = {}
    for name, tool in sorted(gone.items()):
        by_schema.setdefault(_schema_digest(tool.definition().get("input_schema")), name)
    found = {}
    for name, definition in new.items():
        old = by_schema.get(_schema_digest(definition.get("input_schema")))
        if old is not None:
            found[name] = old
    return found


# -- the whole comparison, for `toolreg lock --check` and `--update` ---------------------


class ToolChanges(NamedTuple):
    """A pack's or a server's tools now against the lock; each list sorted."""

    added: list[str]
    removed: list[str]
    #: New name -> the removed locked tool whose input schema it has.
    renames: dict[str, str]
    #: Each tool whose definition differs (or is new): its unified diff from the lock.
    diffs: dict[str, str]

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.diffs)


class PackChanges(NamedTuple):
    plugin_id: str
    #: ``"new"`` (the lock does not name it), ``"removed"`` (locked, not there now), ``"changed"``.
    status: str
    #: (locked, now) for each field that differs; None when it does not.
    version: tuple[str, str] | None
    record: tuple[str, str] | None
    files: FileChanges
    tools: ToolChanges
    hooks_added: list[str]
    hooks_removed: list[str]
    override: tuple[bool, bool] | None
    #: The required distributions that differ (``requirement_changes``).
    requires: list[str] = []


class ServerChanges(NamedTuple):
    name: str
    #: ``"new"``, ``"removed"`` or ``"changed"``, as for a pack.
    status: str
    tools: ToolChanges


class LockChanges(NamedTuple):
    """Every difference between a lock and what there is now, packs and servers by name."""

    packs: list[PackChanges]
    servers: list[ServerChanges]

    def __bool__(self) -> bool:
        return bool(self.packs or self.servers)

    def to_dict(self) -> dict[str, Any]:
        """The same as data: plain lists and dicts, for ``--json``."""

        def tools(changes: ToolChanges) -> dict[str, Any]:
            return {
                "added": changes.added,
                "removed": changes.removed,
                "possible_renames": [
                    {"from": old, "to": new} for new, old in sorted(changes.renames.items())
                ],
                "diffs": dict(sorted(changes.diffs.items())),
            }

        def pair(value: tuple[Any, Any] | None) -> dict[str, Any] | None:
            return None if value is None else {"locked": value[0], "now": value[1]}

        return {
            "packs": [
                {
                    "id": p.plugin_id,
                    "status": p.status,
                    "version": pair(p.version),
                    "record": pair(p.record),
                    "files": p.files._asdict(),
                    "tools": tools(p.tools),
                    "hooks": {"added": p.hooks_added, "removed": p.hooks_removed},
                    "override": pair(p.override),
                    "requires": list(p.requires),
                }
                for p in self.packs
            ],
            "servers": [
                {"name": s.name, "status": s.status, "tools": tools(s.tools)} for s in self.servers
            ],
        }


def compare(
    lock: Lock,
    now: Lock,
    *,
    packs: Collection[str] | None = None,
    servers: Collection[str] | None = None,
) -> LockChanges:
    """What differs between ``lock`` and ``now`` (the state written as a lock would be),
    for the packs and servers named (None: every one), in name order."""
    pack_ids = sorted((lock.packs.keys() | now.packs.keys()) if packs is None else set(packs))
    server_names = sorted(
        (lock.servers.keys() | now.servers.keys()) if servers is None else set(servers)
    )
    found_packs = []
    for pack_id in pack_ids:
        change = _pack_changes(pack_id, lock.packs.get(pack_id), now.packs.get(pack_id))
        if change is not None:
            found_packs.append(change)
    found_servers = []
    for name in server_names:
        before, after = lock.servers.get(name), now.servers.get(name)
        if before is None and after is None:
            continue
        tools = tool_changes(
            before.tools if before else {}, after.tools if after else {}, f"mcp:{name}"
        )
        if before is None or after is None or tools:
            status = "new" if before is None else "removed" if after is None else "changed"
            found_servers.append(ServerChanges(name, status, tools))
    return LockChanges(found_packs, found_servers)


def _pack_changes(
    pack_id: str, before: LockedPack | None, after: LockedPack | None
) -> PackChanges | None:
    if before is None and after is None:
        return None
    empty = LockedPack("", "", "", {}, {}, (), False)
    old, new = before or empty, after or empty
    files = file_changes(old.files, new.files)
    tools = tool_changes(old.tools, new.tools, pack_id)
    hooks_added = sorted(set(new.hooks) - set(old.hooks))
    hooks_removed = sorted(set(old.hooks) - set(new.hooks))
    change = PackChanges(
        pack_id,
        "new" if before is None else "removed" if after is None else "changed",
        (old.version, new.version) if old.version != new.version else None,
        (old.record, new.record) if old.record != new.record else None,
        files,
        tools,
        hooks_added,
        hooks_removed,
        (old.override, new.override) if old.override != new.override else None,
        requirement_changes(old.requires, new.requires),
    )
    if before is not None and after is not None and not _differs(change):
        return None
    return change


def _differs(change: PackChanges) -> bool:
    return bool(
        change.version
        or change.record
        or change.files
        or change.tools
        or change.hooks_added
        or change.hooks_removed
        or change.override
        or change.requires
    )


def tool_changes(
    locked: Mapping[str, LockedTool], now: Mapping[str, LockedTool], label: str
) -> ToolChanges:
    """Tools added and removed, possible renames, and a diff for each new or changed one."""
    added = sorted(now.keys() - locked.keys())
    removed = sorted(locked.keys() - now.keys())
    renames = possible_renames(
        {name: locked[name] for name in removed},
        {name: now[name].definition() for name in added},
    )
    diffs = {}
    for name in sorted(now.keys() | locked.keys()):
        old, new = locked.get(name), now.get(name)
        if new is None or (old is not None and old.digest == new.digest):
            continue
        # A possible rename is shown against the tool it may have been.
        base = old if old is not None else locked.get(renames.get(name, ""))
        text = definition_diff(base, new.definition(), f"{label} {name}")
        if not text and old is None and base is not None:
            text = f"(the locked definition of {renames[name]!r}, under a new name)\n"
        elif not text and old is not None:  # the digests differ, the shown fields do not
            text = (
                f"(its shown fields match the lock's, its digest does not: "
                f"{old.digest} locked, {new.digest} now; was the lock edited?)\n"
            )
        diffs[name] = text
    return ToolChanges(added, removed, renames, diffs)


def changes_text(changes: LockChanges) -> str:
    """The changes for a reviewer: plain text, one block per pack and server, in name
    order; every name and text a pack or server chose is escaped for the terminal."""
    lines: list[str] = []
    for pack in changes.packs:
        lines.append(f"pack {_one_line(pack.plugin_id)}: {pack.status}")
        if pack.version:
            lines.append(
                f"  version {_one_line(pack.version[0] or '-')} -> "
                f"{_one_line(pack.version[1] or '-')}"
            )
        if pack.record:
            lines.append(
                f"  record {_one_line(pack.record[0] or '-')} -> {_one_line(pack.record[1] or '-')}"
            )
        if pack.status != "changed":  # a whole pack comes or goes: its files are not news
            changed_files: tuple[tuple[str, list[str]], ...] = ()
            count = len(pack.files.added or pack.files.removed)
            lines.append(f"  files: {count} in its RECORD")
        else:
            changed_files = (
                ("added", pack.files.added),
                ("removed", pack.files.removed),
                ("modified", pack.files.modified),
            )
        for word, names in changed_files:
            lines.extend(f"  file {word}: {_one_line(name)}" for name in names)
        if pack.override:
            lines.append(
                f"  override consent: {_yes(pack.override[0])} -> {_yes(pack.override[1])}"
            )
        lines.extend(f"  hook added: {_one_line(h)}" for h in pack.hooks_added)
        lines.extend(f"  hook removed: {_one_line(h)}" for h in pack.hooks_removed)
        lines.extend(f"  {_one_line(r)}" for r in pack.requires)
        lines.extend(_tool_lines(pack.tools))
    for server in changes.servers:
        lines.append(f"mcp server {_one_line(server.name)}: {server.status}")
        lines.extend(_tool_lines(server.tools))
    return "\n".join(lines)


def _tool_lines(tools: ToolChanges) -> list[str]:
    from .._contract.escaping import escape

    lines = [f"  tool added: {_one_line(name)}" for name in tools.added]
    lines += [f"  tool removed: {_one_line(name)}" for name in tools.removed]
    lines += [
        f"  possible rename: {_one_line(old)} -> {_one_line(new)} (the same input schema)"
        for new, old in sorted(tools.renames.items())
    ]
    for name, diff in sorted(tools.diffs.items()):
        word = "new" if name in tools.added else "changed"
        lines.append(f"  tool {_one_line(name)} ({word} definition):")
        # Split on newlines alone: a carriage return or a vertical tab a description
        # holds is shown escaped, in its own diff line, not taken as a line break.
        lines.extend(f"    {escape(line, keep_newlines=False)}" for line in diff.split("\n")[:-1])
    return lines


def _one_line(text: str) -> str:
    from .._contract.escaping import escape

    return escape(text, keep_newlines=False)


def _yes(value: bool) -> str:
    return "granted" if value else "not granted"
