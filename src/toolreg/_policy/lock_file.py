"""``toolreg.lock``: what the operator reviewed, so that consent holds to it.

For each pack: its version, a digest of its RECORD and each file's hash there,
its tools' definitions, its hooks, and whether it held override consent. For
each MCP server: its tools' definitions. Definitions are kept whole (the
schemas as indented JSON), so that a change can be shown as a diff; a check
compares digests only. The workflow and each status: docs/lock.md.

A lock someone else could have written is not believed: it is ignored, with a
warning, as a distrusted cache is (``_contract/file_trust.py``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from .._contract.definition_digest import FIELDS, Definition
from .._contract.file_trust import untrusted
from .config import LOCK_NAME as LOCK_NAME
from .config_reader import ConfigError, Reader, kind_of

logger = logging.getLogger("toolreg.lock")

#: The lock format this toolreg reads and writes.
FORMAT = 1
#: The fields of a definition the lock keeps as JSON text (the rest are strings).
_JSON_FIELDS = ("input_schema", "output_schema", "annotations")

_HEADER = (
    "# toolreg.lock: what the operator reviewed. Written by `toolreg lock`;\n"
    "# change it with `toolreg lock --update`, which shows what changed first.\n"
)


class LockedTool(NamedTuple):
    """One tool's definition digest, and the definition's fields as the lock shows them."""

    digest: str
    #: ``FIELDS`` as written: strings, the JSON fields as JSON text ("" when absent).
    shown: Mapping[str, str] = {}

    def definition(self) -> Definition:
        """The reviewed definition, for a diff (the JSON fields parsed; bad JSON stays text)."""
        result: Definition = {}
        for field in FIELDS:
            text = self.shown.get(field, "")
            if field in _JSON_FIELDS:
                try:
                    result[field] = json.loads(text) if text else None
                except ValueError:
                    result[field] = text
            else:
                result[field] = text or None
        return result


class LockedRequirement(NamedTuple):
    """A distribution a pack requires, as it was locked: its version and RECORD digest
    (both "" when it was not installed)."""

    version: str
    record: str


class LockedPack(NamedTuple):
    """A pack as it was locked (or, for a comparison, as it is now)."""

    distribution: str
    version: str
    #: ``sha256:<hex>`` of the RECORD file's bytes.
    record: str
    #: Each file the RECORD lists, with the hash it gives ("" for none, as for ``.pyc``).
    files: Mapping[str, str]
    tools: Mapping[str, LockedTool]
    hooks: tuple[str, ...]
    #: Whether the operator's ``allow_tool_override`` held for it when it was locked.
    override: bool
    #: The distributions it requires, directly or not, by canonical name (toolreg-core
    #: and what it requires aside): their code runs when the pack imports it.
    requires: Mapping[str, LockedRequirement] = {}


class LockedServer(NamedTuple):
    """An MCP server's tools as they were locked, by the server's own tool names."""

    tools: Mapping[str, LockedTool]


class Lock(NamedTuple):
    path: str
    packs: Mapping[str, LockedPack]
    servers: Mapping[str, LockedServer]


def shown(definition: Mapping[str, Any]) -> dict[str, str]:
    """A definition's fields as the lock writes them: the JSON ones indented, keys sorted.

    A lone surrogate (JSON can carry one, UTF-8 and TOML cannot) is shown as ``?``:
    what is shown is for a reviewer; the digest holds the definition exactly.
    """
    result = {}
    for field in FIELDS:
        value = definition.get(field)
        if field in _JSON_FIELDS:
            text = "" if value is None else _indented(value)
        else:
            text = "" if value is None else str(value)
        if not text.isascii():
            text = text.encode("utf-8", "replace").decode("utf-8")
        result[field] = text
    return result


def _indented(value: Any) -> str:
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, default=repr)


# -- reading ---------------------------------------------------------------------------

# (path, rule) -> the problem, for doctor; one warning each.
_problems: dict[tuple[str, str], dict[str, str]] = {}
_problems_lock = threading.Lock()


def lock_problems() -> list[dict[str, str]]:
    """Each lock file this process ignored: ``{"file", "rule", "reason"}``."""
    with _problems_lock:
        return [dict(p) for p in _problems.values()]


def _distrust(path: str, rule: str, reason: str) -> None:
    with _problems_lock:
        if (path, rule) in _problems:
            return
        _problems[(path, rule)] = {"file": path, "rule": rule, "reason": reason}
    logger.warning("Ignoring lock file %s: %s; packs and MCP tools load unlocked", path, reason)


def read_lock(path: str | os.PathLike[str]) -> Lock | None:
    """The lock at ``path``; None when there is none, or it is distrusted (warned).

    Raises ConfigError naming the file and key for a lock that cannot be read.
    """
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())  # the file checked is the file read
            problem = untrusted(st)
            if problem is None:
                folder = untrusted(os.stat(os.path.dirname(os.path.abspath(path))))
                # A folder others may write lets them swap the file: not believed either.
                if folder is not None:
                    problem = (folder[0], f"its folder is {folder[1].split(';')[0]}")
            if problem is not None:
                _distrust(path, *problem)
                return None
            data = f.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise ConfigError(Path(path), "", f"cannot read the lock ({exc.strerror or exc})") from None
    return parse_lock(data, path)


def parse_lock(data: bytes, path: str) -> Lock:
    """Check the lock's TOML; ConfigError naming the key for anything out of shape."""
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    source = Path(path)
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(source, "", f"not UTF-8 text ({exc.reason})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(source, "", f"not valid TOML ({exc})") from None
    except RecursionError:
        raise ConfigError(source, "", "nested too deeply to read") from None
    check = _Shape(source)
    check.keys(raw, "", {"format", "packs", "mcp"})
    if raw.get("format") != FORMAT:
        raise ConfigError(
            source,
            "format",
            f"expected {FORMAT}, got {raw.get('format')!r}; write it again with `toolreg lock`",
        )
    packs = {
        pack_id: _pack(check, f"packs.{pack_id}", table)
        for pack_id, table in check.table(raw, "packs").items()
    }
    servers = {}
    for server, table in check.table(raw, "mcp").items():
        where = f"mcp.{server}"
        table = check.is_table(table, where)
        check.keys(table, where, {"tools"})
        servers[server] = LockedServer(_tools(check, where, table))
    return Lock(path, packs, servers)


class _Shape(Reader):
    """The config's typed access, with the checks only the lock's shape needs."""

    def is_table(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise ConfigError(self.source, where, f"expected a table, got {kind_of(value)}")
        return value

    def string(self, data: dict[str, Any], where: str, key: str, required: bool = True) -> str:
        value = self.typed(data, where, key, str, "a string")
        if value is None and required:
            raise ConfigError(
                self.source, f"{where}.{key}", f"expected a string, got {kind_of(None)}"
            )
        return value or ""


def _pack(check: _Shape, where: str, table: Any) -> LockedPack:
    table = check.is_table(table, where)
    check.keys(
        table,
        where,
        {"distribution", "version", "record", "override", "hooks", "files", "tools", "requires"},
    )
    override = check.typed(table, where, "override", bool, "true or false") or False
    hooks = table.get("hooks", [])
    if not isinstance(hooks, list) or not all(isinstance(h, str) for h in hooks):
        raise ConfigError(check.source, f"{where}.hooks", "expected an array of strings")
    files = check.string_table(table, where, "files")
    requires = {}
    for name, value in check.table(table, f"{where}.requires").items():
        at = f"{where}.requires.{name}"
        value = check.is_table(value, at)
        check.keys(value, at, {"version", "record"})
        requires[name] = LockedRequirement(
            check.string(value, at, "version"), check.string(value, at, "record")
        )
    return LockedPack(
        distribution=check.string(table, where, "distribution"),
        version=check.string(table, where, "version"),
        record=check.string(table, where, "record"),
        files=files,
        tools=_tools(check, where, table),
        hooks=tuple(hooks),
        override=override,
        requires=requires,
    )


def _tools(check: _Shape, where: str, table: dict[str, Any]) -> dict[str, LockedTool]:
    tools = {}
    for name, tool in check.table(table, f"{where}.tools").items():
        at = f"{where}.tools.{name}"
        tool = check.is_table(tool, at)
        check.keys(tool, at, {"digest", *FIELDS[1:]})
        texts = {"name": name}
        for field in FIELDS[1:]:
            texts[field] = check.string(tool, at, field, required=False)
        tools[name] = LockedTool(check.string(tool, at, "digest"), texts)
    return tools


# -- writing ---------------------------------------------------------------------------


def lock_text(lock: Lock) -> str:
    """The lock as TOML: packs and servers by name, each tool a table of its own.

    Long texts (descriptions, indented JSON schemas) are written as multi-line
    literal strings wherever TOML allows, so they read in a diff as they read
    in the tool, with no escaped quotes, and parse with one search instead of
    one step per escape. tomli-w writes everything else, and any text a literal
    string cannot hold.
    """
    lines = [_HEADER, f"format = {FORMAT}\n"]
    for pack_id, pack in sorted(lock.packs.items()):
        head = f"packs.{_key(pack_id)}"
        lines += [
            f"\n[{head}]\n",
            f"distribution = {_string(pack.distribution)}\n",
            f"version = {_string(pack.version)}\n",
            f"record = {_string(pack.record)}\n",
            f"override = {'true' if pack.override else 'false'}\n",
            f"hooks = [{', '.join(map(_string, pack.hooks))}]\n",
            f"\n[{head}.files]\n",
            *(f"{_key(path)} = {_string(h)}\n" for path, h in sorted(pack.files.items())),
        ]
        if pack.requires:
            lines.append(f"\n[{head}.requires]\n")
            for name, r in sorted(pack.requires.items()):
                held = f"version = {_string(r.version)}, record = {_string(r.record)}"
                lines.append(f"{_key(name)} = {{ {held} }}\n")
        lines += _tool_tables(f"{head}.tools", pack.tools)
    for server, locked in sorted(lock.servers.items()):
        lines.append(f"\n[mcp.{_key(server)}]\n")
        lines += _tool_tables(f"mcp.{_key(server)}.tools", locked.tools)
    return "".join(lines)


def _tool_tables(head: str, tools: Mapping[str, LockedTool]) -> list[str]:
    lines = []
    for name, tool in sorted(tools.items()):
        lines += [f"\n[{head}.{_key(name)}]\n", f"digest = {_string(tool.digest)}\n"]
        lines += (
            f"{field} = {_text(tool.shown[field])}\n"
            for field in FIELDS[1:]
            if tool.shown.get(field)
        )
    return lines


def _key(key: str) -> str:
    """A key as tomli-w writes it: bare when it may be, quoted and escaped otherwise."""
    import tomli_w  # only `toolreg lock` writes

    return tomli_w.dumps({key: 0})[: -len(" = 0\n")]


def _string(value: str) -> str:
    import tomli_w

    return tomli_w.dumps({"v": value})[len("v = ") : -1]


def _text(value: str) -> str:
    """A multi-line literal string when TOML can hold ``value`` in one, else tomli-w's."""
    if _LITERAL_SAFE.fullmatch(value) and _QUOTES not in value and not value.endswith("'"):
        return f"{_QUOTES}\n{value}{_QUOTES}"  # TOML drops the newline after the quotes
    import tomli_w

    # A carriage return goes on one escaped line: a TOML reader may turn a
    # multi-line string's CRLF into LF, and the text must come back as it was.
    lines = "\r" not in value
    return tomli_w.dumps({"v": value}, multiline_strings=lines)[len("v = ") : -1]


# What a multi-line literal string may hold: no control character but tab and
# newline (a lone carriage return, DEL and the C0 controls are not allowed).
_LITERAL_SAFE = re.compile(r"[^\x00-\x08\x0b-\x1f\x7f]*")
_QUOTES = "'" * 3


def write_lock(lock: Lock) -> None:
    """Write the lock through a private temporary file and a rename: readers see the old
    lock or the new one, never half of one; the file is the user's, writable by them alone."""
    import tempfile

    text = lock_text(lock)
    folder = os.path.dirname(os.path.abspath(lock.path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".toolreg-lock-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, lock.path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
