"""Tests for the on-disk scan-verdict cache used by built-in discovery."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolreg import discover_builtin_tools, registry
from toolreg._discovery import builtins as _discovery
from toolreg._discovery import cache_files as _cache_files
from toolreg._discovery import scan_cache as _scan_cache

TOOL_SRC = """\
from toolreg import registry


def _handler(args, **kwargs):
    return "ok"


registry.register(
    {name!r},
    "tcache",
    {{
        "name": {name!r},
        "description": "d",
        "parameters": {{"type": "object", "properties": {{}}}},
    }},
    _handler,
)
"""


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("TOOLREG_CACHE_DIR", str(d))
    return d


@pytest.fixture
def tools_dir(tmp_path: Path, cache_dir: Path) -> Iterator[Path]:
    """Two registering modules and one plain one that alpha imports; cleans up after."""
    d = tmp_path / "tools"
    d.mkdir()
    (d / "alpha.py").write_text(TOOL_SRC.format(name="tcache_alpha") + "from . import plain\n")
    (d / "beta.py").write_text(TOOL_SRC.format(name="tcache_beta"))
    (d / "plain.py").write_text("VALUE = 1\n")
    modules_before = set(sys.modules)
    yield d
    for name in ("tcache_alpha", "tcache_beta"):
        if registry.get_entry(name) is not None:
            registry.deregister(name)
    for name in set(sys.modules) - modules_before:
        if name.startswith("toolreg_ext_"):
            del sys.modules[name]


@pytest.fixture
def scan_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every AST scan discovery performs (wraps the real scan function)."""
    calls: list[str] = []
    real = _discovery._file_registers_tools

    def counting(path: str) -> bool:
        calls.append(os.path.basename(path))
        return real(path)

    monkeypatch.setattr(_discovery, "_file_registers_tools", counting)
    return calls


def expected(tools_dir: Path) -> list[str]:
    package = _discovery._synthetic_package(str(tools_dir.resolve()))
    return [f"{package}.alpha", f"{package}.beta"]


def read_cache(cache_dir: Path) -> dict[str, list[object]]:
    return json.loads((cache_dir / _scan_cache.CACHE_FILE_NAME).read_text())


def test_first_run_writes_cache(tools_dir: Path, cache_dir: Path) -> None:
    assert discover_builtin_tools(tools_dir) == expected(tools_dir)

    data = read_cache(cache_dir)
    resolved = tools_dir.resolve()
    assert set(data) == {str(resolved / n) for n in ("alpha.py", "beta.py", "plain.py")}
    st = (resolved / "alpha.py").stat()
    assert data[str(resolved / "alpha.py")] == [st.st_mtime_ns, st.st_size, True]
    assert data[str(resolved / "plain.py")][2] is False
    assert registry.get_entry("tcache_alpha") is not None


def test_warm_run_does_not_parse_or_rewrite(
    tools_dir: Path, cache_dir: Path, scan_calls: list[str]
) -> None:
    discover_builtin_tools(tools_dir)
    assert sorted(scan_calls) == ["alpha.py", "beta.py", "plain.py"]
    before = (cache_dir / _scan_cache.CACHE_FILE_NAME).stat()
    scan_calls.clear()

    assert discover_builtin_tools(tools_dir) == expected(tools_dir)

    assert scan_calls == []
    after = (cache_dir / _scan_cache.CACHE_FILE_NAME).stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_changed_file_is_rescanned_alone(tools_dir: Path, scan_calls: list[str]) -> None:
    discover_builtin_tools(tools_dir)
    scan_calls.clear()
    plain = tools_dir / "plain.py"
    st = plain.stat()
    os.utime(plain, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))

    discover_builtin_tools(tools_dir)
    assert scan_calls == ["plain.py"]

    scan_calls.clear()
    with plain.open("a") as f:  # same mtime is possible on coarse clocks; size differs
        f.write("# more\n")
    os.utime(plain, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    discover_builtin_tools(tools_dir)
    assert scan_calls == ["plain.py"]


def test_file_turning_into_tool_module_is_picked_up(tools_dir: Path) -> None:
    (tools_dir / "later.py").write_text("VALUE = 2\n")
    discover_builtin_tools(tools_dir)
    (tools_dir / "later.py").write_text(TOOL_SRC.format(name="tcache_gamma"))
    try:
        names = discover_builtin_tools(tools_dir)
        assert names[-1].endswith(".later")
        assert registry.get_entry("tcache_gamma") is not None
    finally:
        if registry.get_entry("tcache_gamma") is not None:
            registry.deregister("tcache_gamma")


def test_prunes_deleted_files_and_keeps_other_dirs(
    tools_dir: Path, cache_dir: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "thing.py").write_text("X = 1\n")
    discover_builtin_tools(other)
    discover_builtin_tools(tools_dir)
    (tools_dir / "plain.py").unlink()

    discover_builtin_tools(tools_dir)

    data = read_cache(cache_dir)
    resolved = tools_dir.resolve()
    assert str(resolved / "plain.py") not in data
    assert str(resolved / "alpha.py") in data
    assert str(other.resolve() / "thing.py") in data


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"[1, 2, 3]", b'{"/x.py": "nope"}', b"\xff\xfe\x00", b""],
    ids=["bad-json", "list", "bad-entry", "bad-bytes", "empty"],
)
def test_corrupt_cache_falls_back_to_scanning(
    tools_dir: Path, cache_dir: Path, content: bytes
) -> None:
    cache_dir.mkdir()
    (cache_dir / _scan_cache.CACHE_FILE_NAME).write_bytes(content)

    assert discover_builtin_tools(tools_dir) == expected(tools_dir)
    assert str(tools_dir.resolve() / "alpha.py") in read_cache(cache_dir)


def test_wrongly_shaped_entry_is_rescanned(
    tools_dir: Path, cache_dir: Path, scan_calls: list[str]
) -> None:
    discover_builtin_tools(tools_dir)
    path = cache_dir / _scan_cache.CACHE_FILE_NAME
    data = json.loads(path.read_text())
    data[str(tools_dir.resolve() / "beta.py")] = ["x", None]
    path.write_text(json.dumps(data))
    scan_calls.clear()

    assert discover_builtin_tools(tools_dir) == expected(tools_dir)
    assert scan_calls == ["beta.py"]


def test_cache_dir_that_is_a_file(
    tools_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory")
    monkeypatch.setenv("TOOLREG_CACHE_DIR", str(blocker))

    assert discover_builtin_tools(tools_dir) == expected(tools_dir)
    assert discover_builtin_tools(tools_dir) == expected(tools_dir)
    assert blocker.read_text() == "not a directory"


def test_cache_file_that_is_a_directory_leaves_no_temp_files(
    tools_dir: Path, cache_dir: Path
) -> None:
    (cache_dir / _scan_cache.CACHE_FILE_NAME).mkdir(parents=True)

    assert discover_builtin_tools(tools_dir) == expected(tools_dir)
    assert [p.name for p in cache_dir.iterdir()] == [_scan_cache.CACHE_FILE_NAME]


def test_read_only_dirs(tools_dir: Path, cache_dir: Path) -> None:
    # As root the permission bits are not enforced; discovery must work either way.
    cache_dir.mkdir()
    cache_dir.chmod(stat.S_IRUSR | stat.S_IXUSR)
    tools_dir.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        assert discover_builtin_tools(tools_dir) == expected(tools_dir)
        assert discover_builtin_tools(tools_dir) == expected(tools_dir)
    finally:
        cache_dir.chmod(stat.S_IRWXU)
        tools_dir.chmod(stat.S_IRWXU)


def test_atomic_write_leaves_only_cache_file(tools_dir: Path, cache_dir: Path) -> None:
    discover_builtin_tools(tools_dir)
    (tools_dir / "beta.py").unlink()  # forces a second (pruning) write
    discover_builtin_tools(tools_dir)
    assert [p.name for p in cache_dir.iterdir()] == [_scan_cache.CACHE_FILE_NAME]


def test_verdicts_directly(tmp_path: Path, cache_dir: Path) -> None:
    (tmp_path / "a.py").write_text("a")
    (tmp_path / "b.py").write_text("bb")
    files = [(n, (tmp_path / n).stat()) for n in ("a.py", "b.py")]
    seen: list[str] = []

    def scan(path: str) -> bool:
        seen.append(path)
        return path.endswith("a.py")

    assert _scan_cache.verdicts(str(tmp_path), files, scan) == [True, False]
    # From the cache, "registers nothing" is only a claim for the caller to settle.
    assert _scan_cache.verdicts(str(tmp_path), files, scan) == [True, None]
    assert len(seen) == 2
    assert _scan_cache.recheck(str(tmp_path), files[1:], scan) == [False]
    assert len(seen) == 3


def test_cache_dir_locations(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TOOLREG_CACHE_DIR", str(tmp_path / "explicit"))
    assert _cache_files.cache_dir() == str(tmp_path / "explicit")
    assert _scan_cache.cache_path() == str(tmp_path / "explicit" / "scan-v1.json")

    monkeypatch.delenv("TOOLREG_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _cache_files.cache_dir() == os.path.join(str(tmp_path / "xdg"), "toolreg")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert _cache_files.cache_dir() == os.path.join(str(tmp_path), ".cache", "toolreg")

    monkeypatch.setattr(sys, "platform", "darwin")
    assert _cache_files.cache_dir() == os.path.join(str(tmp_path), "Library", "Caches", "toolreg")

    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "local"))
    assert _cache_files.cache_dir() == os.path.join(str(tmp_path / "local"), "toolreg", "Cache")


# -- a cache is only an optimisation: what a forged or shared one cannot do -------------


def forge_verdicts(cache_dir: Path, directory: Path, verdict: bool) -> None:
    """Write the cache an attacker would: right mtimes and sizes, the verdict they want."""
    resolved = directory.resolve()
    entries = {}
    for path in sorted(resolved.glob("*.py")):
        st = path.stat()
        entries[str(path)] = [st.st_mtime_ns, st.st_size, verdict]
    cache_dir.mkdir(exist_ok=True, mode=0o700)
    (cache_dir / _scan_cache.CACHE_FILE_NAME).write_text(json.dumps(entries))


def test_forged_registers_nothing_cannot_hide_a_tool_module(
    tools_dir: Path, cache_dir: Path, cache_problems: dict
) -> None:
    forge_verdicts(cache_dir, tools_dir, False)

    assert discover_builtin_tools(tools_dir) == expected(tools_dir)

    assert registry.get_entry("tcache_alpha") is not None
    assert registry.get_entry("tcache_beta") is not None
    (problem,) = cache_problems.values()
    assert problem["rule"] == "verdict" and "alpha.py, beta.py" in problem["reason"]
    # The lie is corrected for the next start; plain.py stays a negative.
    data = read_cache(cache_dir)
    assert data[str(tools_dir.resolve() / "alpha.py")][2] is True
    assert data[str(tools_dir.resolve() / "plain.py")][2] is False


def test_forged_registers_nothing_cannot_hide_a_local_plugin(
    tmp_path: Path, cache_dir: Path, cache_problems: dict
) -> None:
    from toolreg._discovery.local_plugins import find_local_plugins

    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "hooks_only.py").write_text(
        "from toolreg import hookimpl\n\n\n@hookimpl\ndef toolreg_pre_tool_call(name, args):\n"
        "    return None\n"
    )
    (folder / "notes.py").write_text("X = 1\n")
    forge_verdicts(cache_dir, folder, False)

    assert [p.stem for p in find_local_plugins([folder.resolve()])] == ["hooks_only"]
    assert [p["rule"] for p in cache_problems.values()] == ["verdict"]


@pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")
@pytest.mark.parametrize("what", ["folder", "file"])
def test_cache_others_can_write_is_neither_read_nor_written(
    tools_dir: Path,
    cache_dir: Path,
    cache_problems: dict,
    caplog: pytest.LogCaptureFixture,
    what: str,
) -> None:
    forge_verdicts(cache_dir, tools_dir, False)
    target = cache_dir if what == "folder" else cache_dir / _scan_cache.CACHE_FILE_NAME
    target.chmod(0o777 if what == "folder" else 0o666)
    before = (cache_dir / _scan_cache.CACHE_FILE_NAME).read_bytes()

    with caplog.at_level("WARNING", logger="toolreg.discovery"):
        for _ in range(2):
            assert discover_builtin_tools(tools_dir) == expected(tools_dir)

    (problem,) = cache_problems.values()
    assert (problem["file"], problem["rule"]) == (str(target), "mode")
    assert (cache_dir / _scan_cache.CACHE_FILE_NAME).read_bytes() == before, "not written"
    warnings = [r for r in caplog.records if "Ignoring toolreg scan cache" in r.getMessage()]
    assert len(warnings) == 1, "one warning per process"
    assert sorted(p.name for p in cache_dir.iterdir()) == [_scan_cache.CACHE_FILE_NAME]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root")
def test_cache_another_user_owns_is_ignored(
    tools_dir: Path, cache_dir: Path, cache_problems: dict, scan_calls: list[str]
) -> None:
    discover_builtin_tools(tools_dir)
    os.chown(cache_dir / _scan_cache.CACHE_FILE_NAME, 12345, 12345)
    scan_calls.clear()

    assert discover_builtin_tools(tools_dir) == expected(tools_dir)

    assert sorted(scan_calls) == ["alpha.py", "beta.py", "plain.py"], "as if there were none"
    (problem,) = cache_problems.values()
    assert problem["rule"] == "owner" and "uid 12345" in problem["reason"]
    assert (cache_dir / _scan_cache.CACHE_FILE_NAME).stat().st_uid == 12345


def test_new_cache_folder_and_file_are_private(tools_dir: Path, cache_dir: Path) -> None:
    discover_builtin_tools(tools_dir)
    if os.name != "nt":
        assert stat.S_IMODE(cache_dir.stat().st_mode) == 0o700
        assert stat.S_IMODE((cache_dir / _scan_cache.CACHE_FILE_NAME).stat().st_mode) == 0o600
