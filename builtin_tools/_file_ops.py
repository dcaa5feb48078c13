"""Handlers behind the ``file`` toolset's read, write, edit and list tools.

Kept apart from the registration table so each module stays small;
``_file_search`` holds ``search_files``. Every handler is wrapped by
``guarded``, so argument, workspace and OS errors come back as ``tool_error``
JSON rather than exceptions. Paths are opened through ``toolreg.workspace``, by
descriptor, and only regular files are read or written.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import IO, Any

from toolreg import tool_error, tool_result
from toolreg.workspace import create_or_truncate, open_directory, open_regular_file

from ._common import bool_arg, guarded, int_arg, str_arg

MAX_READ_LINES = 2000
MAX_LINE_CHARS = 2000  # one minified line must not eat the whole budget
MAX_READ_CHARS = 100_000
MAX_LIST_ENTRIES = 1000
MAX_EDIT_BYTES = 10_000_000  # edit_file holds the file in memory, twice
SNIFF_BYTES = 8192
_CHUNK_CHARS = 65536  # how much of an overlong line is held at once while it is counted


def is_binary(head: bytes) -> bool:
    """The same heuristic git and grep use: a NUL byte near the start means binary."""
    return b"\0" in head[:SNIFF_BYTES]


def clip_line(line: str, length: int | None = None) -> str:
    """The line, or its start and a marker saying how long it was (``length``, if longer)."""
    length = len(line) if length is None else length
    if length <= MAX_LINE_CHARS:
        return line
    return f"{line[:MAX_LINE_CHARS]}…[line truncated, {length} characters]"


def _bounded_lines(fh: IO[str]) -> Iterator[str]:
    """The file's lines without their endings, clipped, never holding a long line whole."""
    while True:
        line = fh.readline(MAX_LINE_CHARS + 1)
        if not line:
            return
        if line.endswith("\n"):
            yield clip_line(line[:-1])
            continue
        length = len(line)
        while length > MAX_LINE_CHARS:  # only an overlong line: count the rest, keep none
            more = fh.readline(_CHUNK_CHARS)
            if not more:
                break
            if more.endswith("\n"):
                length += len(more) - 1
                break
            length += len(more)
        yield clip_line(line, length)


@guarded
def read_file(args: dict[str, Any], **_: Any) -> str:
    path = str_arg(args, "path")
    offset = int_arg(args, "offset", 1, minimum=1, maximum=10**9)
    limit = int_arg(args, "limit", MAX_READ_LINES, minimum=1, maximum=MAX_READ_LINES)
    opened = open_regular_file(path)
    shown: list[str] = []
    chars = 0
    total = 0
    budget_hit = False
    # Universal-newline mode turns "\r\n" and "\r" into "\n", as before.
    with open(opened.fd, encoding="utf-8", errors="replace") as fh:
        if is_binary(os.pread(opened.fd, SNIFF_BYTES, 0)):
            return tool_error(f"{path} looks like a binary file; read_file only reads text")
        for total, text in enumerate(_bounded_lines(fh), start=1):
            if total < offset or len(shown) >= limit or budget_hit:
                continue
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
        path=opened.rel,
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
    data = str_arg(args, "content").encode("utf-8")  # before opening: a bad text creates nothing
    opened = create_or_truncate(path)
    # bytes, so "\n" is not rewritten to "\r\n" on Windows
    with open(opened.fd, "wb") as fh:
        fh.truncate(0)
        fh.write(data)
    return tool_result(path=opened.rel, bytes_written=len(data), created=opened.created)


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
    opened = open_regular_file(path, writable=True)
    with open(opened.fd, "r+b") as fh:
        raw = fh.read(MAX_EDIT_BYTES + 1)
        if len(raw) > MAX_EDIT_BYTES:
            return tool_error(
                f"{path} is larger than {MAX_EDIT_BYTES:,} bytes; edit_file will not load it"
            )
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
                f"old_string appears {count} times in {path}; add surrounding context to make "
                "it unique, or pass replace_all=true to replace every occurrence",
                occurrences=count,
            )
        text = text.replace(old, new) if replace_all else text.replace(old, new, 1)
        fh.seek(0)
        fh.write(text.encode("utf-8"))
        fh.truncate()
    return tool_result(path=opened.rel, replacements=count if replace_all else 1)


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
    opened = open_directory(path)
    try:
        with os.scandir(opened.fd) as it:
            entries = sorted(it, key=lambda e: e.name)
        shown = [_entry_info(e) for e in entries[:MAX_LIST_ENTRIES]]
    finally:
        os.close(opened.fd)
    return tool_result(
        path=opened.rel,
        entries=shown,
        total=len(entries),
        truncated=len(entries) > len(shown),
    )
