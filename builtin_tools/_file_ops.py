"""Handlers behind the ``file`` toolset; ``file_tools`` registers them.

Kept apart from the registration table so each module stays small. Every
handler is wrapped by ``guarded``, so argument, workspace and OS errors come back
as ``tool_error`` JSON rather than exceptions.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolreg import tool_error, tool_result

from ._common import bool_arg, guarded, int_arg, str_arg
from ._workspace import (
    WorkspaceError,
    display_path,
    is_inside,
    resolve_in_workspace,
    workspace_root,
)

MAX_READ_LINES = 2000
MAX_LINE_CHARS = 2000  # one minified line must not eat the whole budget
MAX_READ_CHARS = 100_000
MAX_LIST_ENTRIES = 1000
MAX_SEARCH_RESULTS = 1000
MAX_SEARCH_FILE_BYTES = 5_000_000  # bigger files are almost never what a regex search wants
SNIFF_BYTES = 8192
SKIP_DIRS = frozenset({"node_modules", "__pycache__"})  # hidden dirs are skipped as well


def _is_binary(path: Path) -> bool:
    """The same heuristic git and grep use: a NUL byte near the start means binary."""
    with path.open("rb") as fh:
        return b"\0" in fh.read(SNIFF_BYTES)


def _existing_file(path: str) -> Path:
    target = resolve_in_workspace(path, must_exist=True)
    if target.is_dir():
        raise WorkspaceError(f"{path} is a directory, not a file")
    return target


def _clip_line(line: str) -> str:
    if len(line) <= MAX_LINE_CHARS:
        return line
    return f"{line[:MAX_LINE_CHARS]}…[line truncated, {len(line)} characters]"


@guarded
def read_file(args: dict[str, Any], **_: Any) -> str:
    path = str_arg(args, "path")
    offset = int_arg(args, "offset", 1, minimum=1, maximum=10**9)
    limit = int_arg(args, "limit", MAX_READ_LINES, minimum=1, maximum=MAX_READ_LINES)
    target = _existing_file(path)
    if _is_binary(target):
        return tool_error(f"{path} looks like a binary file; read_file only reads text")

    shown: list[str] = []
    chars = 0
    total = 0
    budget_hit = False
    # Stream rather than read() so a huge file costs time, not memory.
    with target.open(encoding="utf-8", errors="replace") as fh:
        for total, line in enumerate(fh, start=1):
            if total < offset or len(shown) >= limit or budget_hit:
                continue
            # Universal-newline mode has already turned "\r\n" into "\n".
            text = _clip_line(line.rstrip("\n"))
            numbered = f"{total:6d}\t{text}"
            if shown and chars + len(numbered) + 1 > MAX_READ_CHARS:
                budget_hit = True
                continue
            shown.append(numbered)
            chars += len(numbered) + 1
    if offset > total and not (offset == 1 and total == 0):
        return tool_error(f"offset {offset} is past the end of {path} ({total} lines)")

    end_line = offset + len(shown) - 1 if shown else 0
    truncated = end_line < total
    return tool_result(
        path=display_path(target),
        content="\n".join(shown),
        start_line=offset if shown else 0,
        end_line=end_line,
        total_lines=total,
        truncated=truncated,
        next_offset=end_line + 1 if truncated else None,
    )


@guarded
def write_file(args: dict[str, Any], **_: Any) -> str:
    path = str_arg(args, "path")
    content = str_arg(args, "content")
    target = resolve_in_workspace(path, must_exist=False)
    if target.is_dir():
        return tool_error(f"{path} is a directory; give a file path")
    created = not target.exists()
    # The parents of a path already proven inside the root are inside it too.
    target.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode("utf-8")
    target.write_bytes(data)  # bytes, so "\n" is not rewritten to "\r\n" on Windows
    return tool_result(path=display_path(target), bytes_written=len(data), created=created)


@guarded
def edit_file(args: dict[str, Any], **_: Any) -> str:
    path = str_arg(args, "path")
    old = str_arg(args, "old_string")
    new = str_arg(args, "new_string")
    replace_all = bool_arg(args, "replace_all", False)
    if not old:
        return tool_error("old_string must not be empty; use write_file to create content")
    if old == new:
        return tool_error("old_string and new_string are identical; nothing to change")
    target = _existing_file(path)
    raw = target.read_bytes()
    try:
        # Strict decoding: rewriting a file we misread would corrupt it.
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return tool_error(f"{path} is not valid UTF-8 text; edit_file will not rewrite it")
    count = text.count(old)
    if count == 0:
        return tool_error(f"old_string not found in {path}")
    if count > 1 and not replace_all:
        return tool_error(
            f"old_string appears {count} times in {path}; add surrounding context to make it "
            "unique, or pass replace_all=true to replace every occurrence",
            occurrences=count,
        )
    text = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    target.write_bytes(text.encode("utf-8"))
    return tool_result(path=display_path(target), replacements=count if replace_all else 1)


def _entry_info(entry: os.DirEntry[str]) -> dict[str, Any]:
    if entry.is_symlink():
        kind = "symlink"
    elif entry.is_dir(follow_symlinks=False):
        kind = "dir"
    elif entry.is_file(follow_symlinks=False):
        kind = "file"
    else:
        kind = "other"
    size = None
    if kind == "file":
        with contextlib.suppress(OSError):  # deleted between scandir and stat
            size = entry.stat(follow_symlinks=False).st_size
    return {"name": entry.name, "type": kind, "size": size}


@guarded
def list_directory(args: dict[str, Any], **_: Any) -> str:
    path = str_arg(args, "path", ".")
    target = resolve_in_workspace(path, must_exist=True)
    if not target.is_dir():
        return tool_error(f"{path} is not a directory")
    with os.scandir(target) as it:
        entries = sorted(it, key=lambda e: e.name)
    shown = [_entry_info(e) for e in entries[:MAX_LIST_ENTRIES]]
    return tool_result(
        path=display_path(target),
        entries=shown,
        total=len(entries),
        truncated=len(entries) > len(shown),
    )


def _candidate_files(start: Path, name_glob: str) -> Iterator[Path]:
    """Files under ``start`` whose name matches the glob, in a stable order."""
    if start.is_file():
        yield start
        return
    for dirpath, dirnames, filenames in os.walk(start):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS)
        for name in sorted(filenames):
            if fnmatch.fnmatch(name, name_glob):
                yield Path(dirpath, name)


def _searchable(path: Path, root: Path) -> bool:
    # os.walk does not descend into linked dirs, but a linked *file* could still
    # point outside the workspace and leak its contents.
    if path.is_symlink() and not is_inside(path.resolve(), root):
        return False
    try:
        return path.stat().st_size <= MAX_SEARCH_FILE_BYTES and not _is_binary(path)
    except OSError:
        return False  # unreadable or vanished mid-walk: skip, as grep -s would


@guarded
def search_files(args: dict[str, Any], **_: Any) -> str:
    pattern = str_arg(args, "pattern")
    path = str_arg(args, "path", ".")
    name_glob = str_arg(args, "glob", "*") or "*"
    max_results = int_arg(args, "max_results", 200, minimum=1, maximum=MAX_SEARCH_RESULTS)
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        return tool_error(f"invalid regex {pattern!r}: {exc}")
    start = resolve_in_workspace(path, must_exist=True)
    root = workspace_root()

    matches: list[str] = []
    files_searched = 0
    truncated = False
    for file in _candidate_files(start, name_glob):
        if truncated:
            break
        if not _searchable(file, root):
            continue
        files_searched += 1
        shown = display_path(file, root)
        with file.open(encoding="utf-8", errors="replace") as fh:
            for number, line in enumerate(fh, start=1):
                if regex.search(line):
                    if len(matches) >= max_results:
                        truncated = True
                        break
                    matches.append(f"{shown}:{number}:{_clip_line(line.rstrip())}")
    return tool_result(
        matches=matches, count=len(matches), files_searched=files_searched, truncated=truncated
    )
