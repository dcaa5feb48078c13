"""A locked MCP server's listing against ``toolreg.lock``: drifted, new and gone tools.

Each listing is checked whole, on connect and on every refresh: a tool whose
definition digest differs from the lock's is ``drifted``, one the lock does not
name is ``new`` (with the locked tool it may be renamed from), and a locked tool
no longer listed is ``gone``. What a difference does (withhold or warn) is the
link's to apply; the workflow is in docs/lock.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from .._contract.definition_digest import digest, mcp_definition
from .._policy.lock_diff import changed_fields, possible_renames
from .._policy.lock_file import LockedServer, shown

#: ``ServerLock.state`` for each case, as ``status()`` shows it.
LOCKED, UNLOCKED, UNREADABLE = "locked", "unlocked", "unreadable"


class ServerLock(NamedTuple):
    """What one server's listings are checked against."""

    #: The server's locked tools; None when the lock does not name the server.
    locked: LockedServer | None
    #: ``[lock] mcp_drift``: ``"withhold"`` or ``"warn"``.
    mode: str = "withhold"
    #: Why the lock could not be read; then every tool is withheld, whatever the mode.
    error: str | None = None

    @property
    def state(self) -> str:
        if self.error is not None:
            return UNREADABLE
        return LOCKED if self.locked is not None else UNLOCKED

    def update_hint(self, server: str) -> str:
        if self.error is not None:
            return "fix the lock, or write it again with `toolreg lock`"
        return f"accept it with `toolreg lock --update mcp:{server}`"


class LockIssue(NamedTuple):
    """One tool that differs from the lock."""

    #: The tool's name on its server.
    tool: str
    #: ``drifted``, ``new``, ``gone``, or ``unreadable`` (the lock could not be read).
    status: str
    #: What differs, in words (without the tool's or server's name).
    detail: str
    #: The listed definition's digest ("" for a gone tool).
    digest: str = ""

    def withheld_reason(self, server: str, lock: ServerLock) -> str:
        return (
            f"MCP tool {self.tool!r} of server {server!r} is withheld: {self.detail}; "
            f"{lock.update_hint(server)}"
        )

    def warning(self, server: str, lock: ServerLock) -> str:
        return (
            f"MCP tool {self.tool!r} of server {server!r} is offered although {self.detail} "
            f'([lock] mcp_drift = "warn"); {lock.update_hint(server)}'
        )


def check_listing(
    lock: ServerLock, tools: Iterable[Mapping[str, Any]], listed: Iterable[str]
) -> dict[str, LockIssue]:
    """Server tool name -> its difference from the lock, for ``tools`` (the kept ones).

    ``listed`` is every name the server listed, kept or not: a locked tool the
    operator's filters leave out is not gone.
    """
    if lock.error is not None:
        detail = f"the lock cannot be read ({lock.error})"
        return {t["name"]: LockIssue(t["name"], UNREADABLE, detail) for t in tools}
    if lock.locked is None:
        return {}
    locked = lock.locked.tools
    issues: dict[str, LockIssue] = {}
    new: dict[str, dict[str, Any]] = {}
    for tool in tools:
        name = tool["name"]
        definition = mcp_definition(tool)
        try:
            now = digest(definition)
        except (ValueError, RecursionError) as exc:  # a listing JSON cannot hold
            detail = f"its definition cannot be digested ({type(exc).__name__})"
            issues[name] = LockIssue(name, "drifted", detail)
            continue
        was = locked.get(name)
        if was is None:
            new[name] = definition
            issues[name] = LockIssue(name, "new", "it is not in the lock", now)
        elif was.digest != now:
            issues[name] = LockIssue(name, "drifted", _drift(was.shown, definition), now)
    names = set(listed)
    gone = {name: tool for name, tool in locked.items() if name not in names}
    renames = possible_renames(gone, new)
    for name, old in renames.items():
        detail = (
            f"it is not in the lock: possible rename of {old!r}, a locked tool no longer "
            "listed, whose input schema it has"
        )
        issues[name] = issues[name]._replace(detail=detail)
    renamed_to = {old: name for name, old in sorted(renames.items(), reverse=True)}
    for name in sorted(gone):
        detail = "it is in the lock but no longer listed"
        if name in renamed_to:
            detail += f": possible rename to {renamed_to[name]!r}"
        issues[name] = LockIssue(name, "gone", detail)
    return issues


def _drift(locked: Mapping[str, str], definition: Mapping[str, Any]) -> str:
    """Which fields changed, comparing the texts the lock shows (as a diff would)."""
    fields = changed_fields(locked, shown(definition))
    if not fields:
        # Same fields, another digest: the lock's digest itself was changed.
        return (
            "its definition digest differs from the lock's, though the definition the "
            "lock shows is the same (was the lock edited by hand?)"
        )
    return f"its definition differs from the lock ({', '.join(fields)} changed)"
