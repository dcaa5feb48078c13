"""``search_files``: grep for the ``file`` toolset, by descriptor and within a time budget.

The tree is walked one directory descriptor at a time, never following a
symlink, so a link (or a loop of them) is skipped and a directory swapped for a
link mid-walk is not entered. Only regular files are opened; FIFOs, sockets and
devices are skipped unopened, and a file that changed kind since it was listed
is caught by ``fstat`` on the open descriptor. The pattern is matched within a
budget of ``SEARCH_SECONDS`` for the whole call and ``MATCH_SECONDS`` for any
one match.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Iterator
from typing import Any

from toolreg import tool_error, tool_result
from toolreg._schemas.bounded_regex import RegexTimeout, time_budget
from toolreg.workspace import DIR_FLAGS, FILE_FLAGS, Opened, open_file_or_directory

from ._common import guarded, int_arg, str_arg
from ._file_ops import SNIFF_BYTES, clip_line, is_binary
from ._line_search import LineMatcher

MAX_SEARCH_RESULTS = 1000
MAX_SEARCH_FILE_BYTES = 5_000_000  # bigger files are almost never what a regex search wants
MAX_SEARCH_DEPTH = 64  # each level holds one descriptor open
SEARCH_SECONDS = 10.0  # for the whole call
MATCH_SECONDS = 1.0  # for any one match: a 5 MB file takes well under 0.1 s unless it backtracks
SKIP_DIRS = frozenset({"node_modules", "__pycache__"})  # hidden dirs are skipped as well


def _files_under(
    dir_fd: int, prefix: str, name_glob: str, depth: int
) -> Iterator[tuple[str, int, str]]:
    """(display path, directory descriptor, name) of matching regular files, sorted, topdown."""
    with os.scandir(dir_fd) as it:
        entries = sorted(it, key=lambda e: e.name)
    subdirs: list[str] = []
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                if not entry.name.startswith(".") and entry.name not in SKIP_DIRS:
                    subdirs.append(entry.name)
            elif entry.is_file(follow_symlinks=False) and fnmatch.fnmatch(entry.name, name_glob):
                yield prefix + entry.name, dir_fd, entry.name
        except OSError:
            continue  # vanished mid-walk
    if depth >= MAX_SEARCH_DEPTH:
        return
    for name in subdirs:
        try:
            fd = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
        except OSError:
            continue  # removed, unreadable, or swapped for a symlink since it was listed
        try:
            yield from _files_under(fd, f"{prefix}{name}/", name_glob, depth + 1)
        finally:
            os.close(fd)


def _read_upto(fd: int, size: int) -> bytes:
    """The first ``size`` bytes (fewer at end of file), in as few reads as the OS allows."""
    chunks = []
    while size > 0:
        chunk = os.read(fd, size)
        if not chunk:
            break
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _text_of(fd: int) -> str | None:
    """The file's text with universal newlines, or None to skip it; closes ``fd``."""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_SEARCH_FILE_BYTES:
            return None
        # The size fstat saw: a file growing meanwhile is read as it was.
        data = _read_upto(fd, st.st_size)
    finally:
        os.close(fd)
    if is_binary(data[:SNIFF_BYTES]):
        return None
    text = data.decode("utf-8", errors="replace")
    if "\r" in text:  # what text mode's universal newlines did for read_file
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _texts(start: Opened, name_glob: str) -> Iterator[tuple[str, str]]:
    """(display path, text) of each file to search under ``start`` (or ``start`` itself)."""
    if stat.S_ISREG(start.st.st_mode):
        text = _text_of(os.dup(start.fd))
        if text is not None:
            yield start.rel, text
        return
    prefix = "" if start.rel == "." else f"{start.rel}/"
    for shown, dir_fd, name in _files_under(start.fd, prefix, name_glob, 0):
        try:
            fd = os.open(name, FILE_FLAGS, dir_fd=dir_fd)
        except OSError:
            continue  # a symlink swapped in (ELOOP), vanished, or unreadable: skip, as grep -s
        text = _text_of(fd)
        if text is not None:
            yield shown, text


@guarded
def search_files(args: dict[str, Any], **_: Any) -> str:
    pattern = str_arg(args, "pattern")
    path = str_arg(args, "path", ".")
    name_glob = str_arg(args, "glob", "*") or "*"
    max_results = int_arg(args, "max_results", 200, minimum=1, maximum=MAX_SEARCH_RESULTS)
    import regex  # loaded by the first search, not when the tool registers

    try:
        matcher = LineMatcher(pattern)
    except regex.error as exc:
        return tool_error(f"invalid regex {pattern!r}: {exc}")
    start = open_file_or_directory(path)
    matches: list[str] = []
    files_searched = 0
    truncated = False
    shown = start.rel
    try:
        with time_budget(SEARCH_SECONDS, per_match=MATCH_SECONDS):
            for shown, text in _texts(start, name_glob):
                files_searched += 1
                for number, line in matcher.matching_lines(text):
                    if len(matches) >= max_results:
                        truncated = True
                        break
                    matches.append(f"{shown}:{number}:{clip_line(line.rstrip())}")
                if truncated:
                    break
    except RegexTimeout as exc:
        return tool_error(
            f"search for {pattern!r} stopped in {shown}: matching took longer than "
            f"{exc.seconds:g} s. The pattern backtracks too much, or there is too much to "
            "search: simplify the pattern, or narrow path or glob.",
            files_searched=files_searched,
        )
    finally:
        os.close(start.fd)
    return tool_result(
        matches=matches, count=len(matches), files_searched=files_searched, truncated=truncated
    )
