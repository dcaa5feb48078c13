"""The file toolset, exercised through its handlers and once through the registry."""

from __future__ import annotations

import json
import os
import shutil
import threading
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from conftest import (
    REDOS_PATTERN,
    REDOS_TEXT,
    builtin_registry,
    counting_thread,
    err,
    needs_symlinks,
    ok,
)
from toolreg import discover_builtin_tools, get_discovery_failures
from toolreg.builtin_tools import _file_ops, _file_search, file_tools
from toolreg.builtin_tools._file_ops import (
    MAX_READ_CHARS,
    edit_file,
    list_directory,
    read_file,
    write_file,
)
from toolreg.builtin_tools._file_search import search_files

# --- read / write -------------------------------------------------------------------------


def test_write_then_read_round_trip(workspace: Path) -> None:
    written = ok(write_file({"path": "notes/a.txt", "content": "héllo\nworld\n"}))
    assert written == {"path": "notes/a.txt", "bytes_written": 13, "created": True}
    assert (workspace / "notes" / "a.txt").read_bytes() == "héllo\nworld\n".encode()

    read = ok(read_file({"path": "notes/a.txt"}))
    assert read["content"] == "     1\théllo\n     2\tworld"
    assert read["total_lines"] == 2
    assert read["truncated"] is False
    assert read["next_offset"] is None


def test_overwrite_reports_not_created(workspace: Path) -> None:
    ok(write_file({"path": "a.txt", "content": "one"}))
    again = ok(write_file({"path": "a.txt", "content": "two"}))
    assert again["created"] is False
    assert (workspace / "a.txt").read_text() == "two"


def test_read_offset_and_limit(workspace: Path) -> None:
    (workspace / "ten.txt").write_text("".join(f"line{i}\n" for i in range(1, 11)))
    page = ok(read_file({"path": "ten.txt", "offset": 3, "limit": 4}))
    assert page["content"].splitlines() == [f"{i:6d}\tline{i}" for i in range(3, 7)]
    assert (page["start_line"], page["end_line"], page["total_lines"]) == (3, 6, 10)
    assert page["truncated"] is True
    assert page["next_offset"] == 7

    rest = ok(read_file({"path": "ten.txt", "offset": page["next_offset"]}))
    assert rest["content"].splitlines()[-1] == "    10\tline10"
    assert rest["truncated"] is False


def test_read_offset_past_end_is_an_error(workspace: Path) -> None:
    (workspace / "short.txt").write_text("a\nb\n")
    assert "past the end" in err(read_file({"path": "short.txt", "offset": 5}))


def test_read_empty_file(workspace: Path) -> None:
    (workspace / "empty.txt").write_text("")
    data = ok(read_file({"path": "empty.txt"}))
    assert data["content"] == ""
    assert data["total_lines"] == 0


def test_read_output_is_bounded_by_characters(workspace: Path) -> None:
    (workspace / "wide.txt").write_text(("x" * 199 + "\n") * 2000)
    data = ok(read_file({"path": "wide.txt"}))
    assert len(data["content"]) <= MAX_READ_CHARS
    assert data["truncated"] is True
    assert data["next_offset"] == data["end_line"] + 1 < 2000


def test_read_refuses_binary(workspace: Path) -> None:
    (workspace / "blob.bin").write_bytes(b"\x89PNG\r\n\x00\x00\x01")
    assert "binary" in err(read_file({"path": "blob.bin"}))


def test_read_errors_name_the_path(workspace: Path) -> None:
    (workspace / "adir").mkdir()
    assert "missing.txt" in err(read_file({"path": "missing.txt"}))
    assert "adir" in err(read_file({"path": "adir"}))
    assert "path" in err(read_file({}))
    assert "offset" in err(read_file({"path": "missing.txt", "offset": "soon"}))


def test_write_unencodable_text_is_a_tool_error(workspace: Path) -> None:
    assert "encoded" in err(write_file({"path": "s.txt", "content": "bad \ud800 surrogate"}))
    assert not (workspace / "s.txt").exists()


def test_write_refuses_directory_target(workspace: Path) -> None:
    (workspace / "adir").mkdir()
    assert "directory" in err(write_file({"path": "adir", "content": "x"}))


# --- edit -----------------------------------------------------------------------------------


def test_edit_single_occurrence(workspace: Path) -> None:
    (workspace / "c.py").write_text("a = 1\nb = 2\n")
    assert ok(edit_file({"path": "c.py", "old_string": "b = 2", "new_string": "b = 3"})) == {
        "path": "c.py",
        "replacements": 1,
    }
    assert (workspace / "c.py").read_text() == "a = 1\nb = 3\n"


def test_edit_missing_string(workspace: Path) -> None:
    (workspace / "c.py").write_text("a = 1\n")
    message = err(edit_file({"path": "c.py", "old_string": "zzz", "new_string": "y"}))
    assert "not found" in message and "c.py" in message


def test_edit_ambiguous_without_replace_all_changes_nothing(workspace: Path) -> None:
    (workspace / "c.py").write_text("x\nx\nx\n")
    result = json.loads(edit_file({"path": "c.py", "old_string": "x", "new_string": "y"}))
    assert "3 times" in result["error"]
    assert result["occurrences"] == 3
    assert (workspace / "c.py").read_text() == "x\nx\nx\n"


def test_edit_replace_all(workspace: Path) -> None:
    (workspace / "c.py").write_text("x\nx\nx\n")
    args = {"path": "c.py", "old_string": "x", "new_string": "y", "replace_all": True}
    assert ok(edit_file(args))["replacements"] == 3
    assert (workspace / "c.py").read_text() == "y\ny\ny\n"


def test_edit_preserves_crlf_line_endings(workspace: Path) -> None:
    (workspace / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    ok(edit_file({"path": "w.txt", "old_string": "two", "new_string": "2"}))
    assert (workspace / "w.txt").read_bytes() == b"one\r\n2\r\n"


def test_edit_rejects_empty_and_identical_strings(workspace: Path) -> None:
    (workspace / "c.py").write_text("a\n")
    assert "empty" in err(edit_file({"path": "c.py", "old_string": "", "new_string": "b"}))
    assert "identical" in err(edit_file({"path": "c.py", "old_string": "a", "new_string": "a"}))


def test_edit_refuses_non_utf8(workspace: Path) -> None:
    (workspace / "latin.txt").write_bytes("café".encode("latin-1"))
    assert "UTF-8" in err(edit_file({"path": "latin.txt", "old_string": "caf", "new_string": "x"}))
    assert (workspace / "latin.txt").read_bytes() == "café".encode("latin-1")


# --- escapes ------------------------------------------------------------------------------


def _escape_calls(path: str) -> list[tuple[str, Any, dict[str, Any]]]:
    return [
        ("read_file", read_file, {"path": path}),
        ("write_file", write_file, {"path": path, "content": "pwned"}),
        ("edit_file", edit_file, {"path": path, "old_string": "top", "new_string": "pwned"}),
        ("list_directory", list_directory, {"path": path}),
        ("search_files", search_files, {"pattern": "secret", "path": path}),
    ]


def _assert_all_refused(path: str, outside: Path) -> None:
    for name, handler, args in _escape_calls(path):
        message = err(handler(args))
        assert "outside the workspace" in message, (name, message)
        assert path in message, (name, message)
    assert (outside / "secret.txt").read_text() == "top secret\n"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_dotdot_escape_refused_by_every_tool(workspace: Path, outside: Path) -> None:
    _assert_all_refused("../outside/secret.txt", outside)


def test_absolute_outside_path_refused_by_every_tool(workspace: Path, outside: Path) -> None:
    _assert_all_refused(str(outside / "secret.txt"), outside)


@needs_symlinks
def test_symlink_escape_refused_by_every_tool(workspace: Path, outside: Path) -> None:
    (workspace / "link").symlink_to(outside)
    _assert_all_refused("link/secret.txt", outside)
    # Creating a new file through the link must fail too.
    assert "outside the workspace" in err(write_file({"path": "link/new.txt", "content": "x"}))
    assert not (outside / "new.txt").exists()


# --- list -----------------------------------------------------------------------------------


def test_list_directory_types_sizes_and_order(workspace: Path) -> None:
    (workspace / "b.txt").write_text("12345")
    (workspace / "a_dir").mkdir()
    if hasattr(os, "symlink"):
        (workspace / "c_link").symlink_to(workspace / "b.txt")
    data = ok(list_directory({}))
    entries = {e["name"]: e for e in data["entries"]}
    assert [e["name"] for e in data["entries"]] == sorted(entries)
    assert entries["b.txt"] == {"name": "b.txt", "type": "file", "size": 5}
    assert entries["a_dir"]["type"] == "dir"
    if hasattr(os, "symlink"):
        assert entries["c_link"]["type"] == "symlink"
    assert data["truncated"] is False
    assert data["total"] == len(entries)


def test_list_directory_on_a_file_is_an_error(workspace: Path) -> None:
    (workspace / "f.txt").write_text("x")
    assert "not a directory" in err(list_directory({"path": "f.txt"}))


# --- search ---------------------------------------------------------------------------------


@pytest.fixture
def tree(workspace: Path) -> Path:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("import os\ndef main():\n    return 42\n")
    (workspace / "src" / "notes.md").write_text("def in markdown\n")
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config.py").write_text("def hidden():\n")
    (workspace / "data.bin").write_bytes(b"def\x00binary")
    return workspace


def test_search_with_glob(tree: Path) -> None:
    data = ok(search_files({"pattern": r"def \w+", "glob": "*.py"}))
    assert data["matches"] == ["src/app.py:2:def main():"]
    assert data["truncated"] is False


def test_search_without_glob_skips_hidden_and_binary(tree: Path) -> None:
    data = ok(search_files({"pattern": "def"}))
    assert data["matches"] == ["src/app.py:2:def main():", "src/notes.md:1:def in markdown"]


def test_search_in_subdirectory_and_single_file(tree: Path) -> None:
    assert ok(search_files({"pattern": "42", "path": "src"}))["count"] == 1
    assert ok(search_files({"pattern": "import", "path": "src/app.py"}))["matches"] == [
        "src/app.py:1:import os"
    ]


def test_search_bad_regex(tree: Path) -> None:
    message = err(search_files({"pattern": "(unclosed"}))
    assert "invalid regex" in message and "(unclosed" in message
    assert "missing )" in message  # the re module's own explanation is passed on


def test_search_is_bounded(workspace: Path) -> None:
    (workspace / "many.txt").write_text("hit\n" * 50)
    data = ok(search_files({"pattern": "hit", "max_results": 10}))
    assert data["count"] == 10
    assert data["truncated"] is True


@needs_symlinks
def test_search_does_not_follow_file_links_outside(workspace: Path, outside: Path) -> None:
    (workspace / "leak.txt").symlink_to(outside / "secret.txt")
    assert ok(search_files({"pattern": "secret"}))["matches"] == []


@needs_symlinks
def test_search_skips_links_met_on_the_way_but_follows_the_one_it_is_given(
    workspace: Path,
) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "a.txt").write_text("needle\n")
    (workspace / "again.txt").symlink_to("src/a.txt")
    (workspace / "src-link").symlink_to("src")
    assert ok(search_files({"pattern": "needle"}))["matches"] == ["src/a.txt:1:needle"]
    assert ok(search_files({"pattern": "needle", "path": "src-link"}))["matches"] == [
        "src/a.txt:1:needle"
    ]


@needs_symlinks
def test_a_symlink_loop_anywhere_does_not_break_search(workspace: Path) -> None:
    (workspace / "deep" / "er").mkdir(parents=True)
    (workspace / "deep" / "er" / "loop").symlink_to("loop")
    (workspace / "a").symlink_to("b")
    (workspace / "b").symlink_to("a")
    (workspace / "deep" / "found.txt").write_text("needle\n")
    data = ok(search_files({"pattern": "needle"}))
    assert data["matches"] == ["deep/found.txt:1:needle"]
    assert "symbolic links" in err(search_files({"pattern": "x", "path": "a"}))


def test_search_matches_lines_without_their_endings(workspace: Path) -> None:
    (workspace / "w.txt").write_bytes(b"trailing  \r\n\r\nclean\nx\ry")
    data = ok(search_files({"pattern": r"\s+$"}))
    assert data["matches"] == ["w.txt:1:trailing"], "a blank line has no trailing space"
    assert ok(search_files({"pattern": "^y$"}))["matches"] == ["w.txt:5:y"]


@pytest.mark.parametrize("pattern", [REDOS_PATTERN, REDOS_PATTERN.replace("$", r"\Z")])
def test_backtracking_search_is_cut_off_while_other_threads_run(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, pattern: str
) -> None:
    # The second spelling cannot be searched file-wide, so it is matched line by line.
    monkeypatch.setattr(_file_search, "SEARCH_SECONDS", 0.5)
    (workspace / "a.txt").write_text(f"fine\n{REDOS_TEXT}\n")
    with counting_thread() as count:
        result = json.loads(search_files({"pattern": pattern}))
    assert "stopped in a.txt: matching took longer than 0.5 s" in result["error"]
    assert repr(pattern) in result["error"]
    assert count[0] > 1000, "the match must not hold the GIL"


# --- hostile workspace contents -------------------------------------------------------------

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")


@needs_fifo
def test_fifo_is_refused_by_read_and_edit_and_skipped_by_search(workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    (workspace / "note.txt").write_text("needle\n")
    assert "is a FIFO" in err(read_file({"path": "pipe"}))
    assert "is a FIFO" in err(edit_file({"path": "pipe", "old_string": "a", "new_string": "b"}))
    assert "is a FIFO" in err(write_file({"path": "pipe", "content": "x"}))
    assert "is a FIFO" in err(search_files({"pattern": "x", "path": "pipe"}))
    data = ok(search_files({"pattern": "needle"}))
    assert data["matches"] == ["note.txt:1:needle"] and data["files_searched"] == 1
    assert {e["name"]: e["type"] for e in ok(list_directory({}))["entries"]}["pipe"] == "other"


def test_read_of_one_huge_line_holds_a_bounded_amount_of_memory(workspace: Path) -> None:
    size = 20_000_000
    with (workspace / "long.txt").open("wb") as fh:
        fh.write(b"x" * size + b"\nsecond\n")
    tracemalloc.start()
    try:
        data = ok(read_file({"path": "long.txt", "limit": 1}))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000, f"peak {peak:,} bytes for a {size:,}-byte line"
    assert data["content"].endswith(f"…[line truncated, {size} characters]")
    assert data["total_lines"] == 2 and data["next_offset"] == 2


def test_edit_refuses_a_file_too_large_to_hold(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_file_ops, "MAX_EDIT_BYTES", 100)
    (workspace / "big.txt").write_text("a" * 101)
    assert "larger than 100 bytes" in err(
        edit_file({"path": "big.txt", "old_string": "a", "new_string": "b"})
    )
    assert (workspace / "big.txt").read_text() == "a" * 101


def test_unknown_user_home_is_a_tool_error_for_every_tool(workspace: Path) -> None:
    for name, handler, args in _escape_calls("~nosuchuser-toolreg/x"):
        assert "cannot expand '~nosuchuser-toolreg'" in err(handler(args)), name


@needs_symlinks
def test_swapping_a_directory_for_a_symlink_never_leaks(workspace: Path, outside: Path) -> None:
    """A thread keeps swapping d/ for a link to outside/ while reads and writes go through d/."""
    real = workspace / "d"
    real.mkdir()
    (real / "secret.txt").write_text("inside\n")
    link, parked = workspace / "link", workspace / "parked"
    link.symlink_to(outside)
    stop = threading.Event()
    swaps = [0]

    def put(src: Path, dst: Path) -> None:
        while True:
            try:
                return os.rename(src, dst)
            except OSError:  # write_file made a new d/ while it was away: clear it
                shutil.rmtree(dst, ignore_errors=True)

    def swap() -> None:
        while not stop.is_set():
            put(real, parked)
            put(link, real)  # d is a link to outside/
            put(real, link)
            put(parked, real)  # d is the directory again
            swaps[0] += 1

    swapper = threading.Thread(target=swap)
    swapper.start()
    outcomes: dict[str, int] = {"read": 0, "refused": 0, "leaked": 0}
    try:
        for _ in range(3000):
            result = read_file({"path": "d/secret.txt"})
            if "top secret" in result:
                outcomes["leaked"] += 1
            elif "inside" in result:
                outcomes["read"] += 1
            else:
                outcomes["refused"] += 1
        for _ in range(500):
            write_file({"path": "d/new.txt", "content": "pwned"})
            edit_file({"path": "d/secret.txt", "old_string": "top", "new_string": "pwned"})
    finally:
        stop.set()
        swapper.join()
    assert outcomes["leaked"] == 0, outcomes
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "top secret\n"
    # The race really ran: both states of d/ were seen.
    assert swaps[0] > 0 and outcomes["read"] > 0 and outcomes["refused"] > 0, outcomes


# --- registration ---------------------------------------------------------------------------


FILE_TOOLS = ["read_file", "write_file", "edit_file", "list_directory", "search_files"]


def test_table_registers_every_file_tool_with_a_strict_schema() -> None:
    reg = builtin_registry(file_tools)
    assert sorted(reg.get_tool_names_for_toolset("file")) == sorted(FILE_TOOLS)
    for name in FILE_TOOLS:
        entry = reg.get_entry(name)
        assert entry is not None and entry.toolset == "file"
        assert reg.get_owner(name) == "builtin"
        assert entry.description
        parameters = entry.schema["parameters"]
        assert parameters["additionalProperties"] is False
        assert set(parameters["required"]) <= set(parameters["properties"])
    assert reg.get_entry("edit_file").schema["parameters"]["required"] == [
        "path",
        "old_string",
        "new_string",
    ]


def test_discovery_imports_tool_modules_and_skips_helpers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLREG_CACHE_DIR", str(tmp_path / "cache"))
    package_dir = Path(file_tools.__file__).parent
    modules = discover_builtin_tools(package_dir)
    assert modules == [
        "toolreg.builtin_tools.file_tools",
        "toolreg.builtin_tools.terminal_tool",
        "toolreg.builtin_tools.time_tool",
        "toolreg.builtin_tools.web_tools",
    ]
    assert not [m for m in get_discovery_failures() if m.startswith("toolreg.builtin_tools.")]


def test_dispatch_through_registry(workspace: Path) -> None:
    reg = builtin_registry(file_tools)
    ok(reg.dispatch("write_file", {"path": "d.txt", "content": "via registry\n"}))
    assert "via registry" in ok(reg.dispatch("read_file", {"path": "d.txt"}))["content"]
    assert "outside the workspace" in err(reg.dispatch("read_file", {"path": "../x"}))


# -- MCP annotations ---------------------------------------------------------------------


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_annotations_say_what_each_tool_does_to_the_workspace(workspace: Path) -> None:
    reg = builtin_registry(file_tools)
    hints = {name: dict(reg.get_entry(name).annotations) for name in FILE_TOOLS}
    # All five stay inside the workspace: a closed world.
    assert all(h["openWorldHint"] is False and h["title"] for h in hints.values())

    (workspace / "a.txt").write_text("a\n")
    readers = {
        "read_file": {"path": "a.txt"},
        "list_directory": {},
        "search_files": {"pattern": "a"},
    }
    for name, args in readers.items():
        assert hints[name]["readOnlyHint"] is True, name
        before = _snapshot(workspace)
        ok(reg.dispatch(name, args))
        assert _snapshot(workspace) == before, f"{name} changed the workspace"

    for name in ("write_file", "edit_file"):
        assert hints[name]["readOnlyHint"] is False and hints[name]["destructiveHint"] is True
    # write_file overwrites (destructive), and the same call twice leaves the same file.
    assert hints["write_file"]["idempotentHint"] is True
    for _ in range(2):
        ok(reg.dispatch("write_file", {"path": "a.txt", "content": "b\n"}))
        assert (workspace / "a.txt").read_text() == "b\n"
    # edit_file is not idempotent: the same edit again can change the file again.
    assert hints["edit_file"]["idempotentHint"] is False
    edit = {"path": "a.txt", "old_string": "b", "new_string": "bc"}
    ok(reg.dispatch("edit_file", edit))
    ok(reg.dispatch("edit_file", edit))
    assert (workspace / "a.txt").read_text() == "bcc\n"
