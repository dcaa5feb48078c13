"""Tests for pack discovery: real dist-info directories on disk, and the on-disk cache."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from toolreg._entrypoints import CACHE_FILE_NAME, GROUP, PackRecord, find_packs


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Never touch the real user cache."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("TOOLREG_CACHE_DIR", str(directory))
    return directory


@pytest.fixture
def site(tmp_path: Path) -> Path:
    directory = tmp_path / "site"
    directory.mkdir()
    return directory


def make_dist(
    site: Path,
    name: str,
    version: str = "1.0",
    tools: dict[str, str] | None = None,
    *,
    requires: tuple[str, ...] = (),
    other_groups: dict[str, dict[str, str]] | None = None,
) -> Path:
    """Write an installed distribution the way an installer lays it out; return its dist-info."""
    dist_info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    dist_info.mkdir()
    metadata = [f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"]
    metadata += [f"Requires-Dist: {r}\n" for r in requires]
    (dist_info / "METADATA").write_text("".join(metadata) + "\nA long description.\n")
    groups = dict(other_groups or {})
    if tools is not None:
        groups[GROUP] = tools
    if groups:
        text = "".join(
            f"[{g}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n"
            for g, eps in groups.items()
        )
        (dist_info / "entry_points.txt").write_text(text)
    files = [p.name for p in dist_info.iterdir()] + ["RECORD"]
    (dist_info / "RECORD").write_text("".join(f"{dist_info.name}/{f},,\n" for f in files))
    return dist_info


def ids(packs: list[PackRecord]) -> list[str]:
    return [p.plugin_id for p in packs]


def test_packs_sorted_with_canonical_ids(site: Path) -> None:
    make_dist(site, "zeta", tools={"z": "zeta_tools"})
    foo = make_dist(site, "Toolreg_Foo", "2.3", {"foo": "toolreg_foo.tools:register"})
    make_dist(site, "alpha.pack", tools={"a": "alpha:tools"})
    packs = find_packs(path=[str(site)])
    assert ids(packs) == ["alpha-pack", "toolreg-foo", "zeta"]
    eps = (("foo", "toolreg_foo.tools:register"),)
    assert packs[1] == PackRecord("toolreg-foo", "Toolreg_Foo", "2.3", eps, None, str(foo))


def test_only_the_group_counts(site: Path) -> None:
    make_dist(site, "cli-only", other_groups={"console_scripts": {"x": "x:main"}})
    make_dist(site, "no-entry-points")
    scripts = {"console_scripts": {"mixed": "mixed.cli:main"}}
    make_dist(
        site, "mixed", "1", {"web": "mixed.web", "db": "mixed.db:tools"}, other_groups=scripts
    )
    (pack,) = find_packs(path=[str(site)])
    assert pack.plugin_id == "mixed"
    assert pack.entry_points == (("db", "mixed.db:tools"), ("web", "mixed.web"))
    assert ids(find_packs("console_scripts", path=[str(site)])) == ["cli-only", "mixed"]


def test_requires_toolreg(site: Path) -> None:
    make_dist(site, "plain", tools={"p": "p"}, requires=("requests>=2", "toolreg>=0.1,<0.2"))
    marker = 'toolreg>=1; python_version >= "3.10"'
    make_dist(site, "marked", tools={"m": "m"}, requires=(marker,))
    make_dist(site, "spelled", tools={"s": "s"}, requires=("Toolreg[mcp] >=0.1",))
    make_dist(site, "lookalike", tools={"x": "x"}, requires=("toolregistry>=2", "toolreg-x"))
    make_dist(site, "none", tools={"n": "n"})
    found = {p.plugin_id: p.requires_toolreg for p in find_packs(path=[str(site)])}
    assert found == {
        "lookalike": None,
        "marked": marker,
        "none": None,
        "plain": "toolreg>=0.1,<0.2",
        "spelled": "Toolreg[mcp] >=0.1",
    }


def test_namespaces(site: Path) -> None:
    tools = {"a": "pkg.mod:obj", "b": "pkg.other:x", "c": "solo", "d": "b.c", "e": "ext:f [extra]"}
    (pack,) = find_packs(path=[str(make_dist(site, "ns", tools=tools).parent)])
    assert pack.namespaces == ("b", "ext", "pkg", "solo")


def test_first_on_path_wins(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for directory in (first, second):
        directory.mkdir()
    make_dist(first, "dup", "2.0", {"new": "dup.new"})
    make_dist(second, "Dup", "1.0", {"old": "dup.old"})
    (pack,) = find_packs(path=[str(first), str(second)])
    assert (pack.version, pack.entry_points) == ("2.0", (("new", "dup.new"),))
    (pack,) = find_packs(path=[str(second), str(first)])
    assert (pack.version, pack.entry_points) == ("1.0", (("old", "dup.old"),))
    # A first copy without tool entry points shadows a later one that has some.
    make_dist(first, "shadowed", "2.0")
    make_dist(second, "shadowed", "1.0", {"t": "shadowed"})
    assert ids(find_packs(path=[str(first), str(second)])) == ["dup"]


def test_cache_hit_serves_records_until_the_dist_info_changes(site: Path, cache_dir: Path) -> None:
    dist_info = make_dist(site, "pack", tools={"one": "pack.one"})
    first = find_packs(path=[str(site)])
    assert (cache_dir / CACHE_FILE_NAME).is_file()
    # Rewriting a file in place leaves every mtime in the key alone, so this
    # proves the second answer came from the cache...
    (dist_info / "entry_points.txt").write_text(f"[{GROUP}]\ntwo = pack.two\n")
    assert find_packs(path=[str(site)]) == first
    # ...and touching the dist-info directory (as reinstalling does) invalidates it.
    st = dist_info.stat()
    os.utime(dist_info, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    (pack,) = find_packs(path=[str(site)])
    assert pack.entry_points == (("two", "pack.two"),)


def test_new_dist_invalidates(site: Path) -> None:
    make_dist(site, "one", tools={"t": "one"})
    assert ids(find_packs(path=[str(site)])) == ["one"]
    make_dist(site, "two", tools={"t": "two"})
    assert ids(find_packs(path=[str(site)])) == ["one", "two"]
    shutil.rmtree(site / "one-1.0.dist-info")
    assert ids(find_packs(path=[str(site)])) == ["two"]


def test_use_cache_false_neither_reads_nor_writes(site: Path, cache_dir: Path) -> None:
    make_dist(site, "one", tools={"t": "one"})
    assert ids(find_packs(path=[str(site)], use_cache=False)) == ["one"]
    assert not cache_dir.exists()


def test_several_environments_keep_their_keys(tmp_path: Path, cache_dir: Path) -> None:
    sites = []
    for i in range(10):
        sites.append(tmp_path / f"venv{i}")
        sites[-1].mkdir()
        make_dist(sites[-1], f"pack{i}", tools={"t": f"pack{i}"})
        find_packs(path=[str(sites[-1])])
    keys = json.loads((cache_dir / CACHE_FILE_NAME).read_text())["keys"]
    assert len(keys) == 8
    # Switching back to a kept environment is a hit: the file is only reordered.
    assert ids(find_packs(path=[str(sites[5])])) == ["pack5"]
    reordered = json.loads((cache_dir / CACHE_FILE_NAME).read_text())["keys"]
    assert reordered[0] == keys[4] and len(reordered) == 8


@pytest.mark.parametrize(
    "content",
    [b"\xff\xfe not json", b"[1, 2]", b'{"keys": 3}', b'{"keys": [["x"], 5]}', b""],
)
def test_corrupt_cache_is_ignored_and_replaced(site: Path, cache_dir: Path, content: bytes) -> None:
    make_dist(site, "one", tools={"t": "one"})
    cache_dir.mkdir()
    (cache_dir / CACHE_FILE_NAME).write_bytes(content)
    assert ids(find_packs(path=[str(site)])) == ["one"]
    assert json.loads((cache_dir / CACHE_FILE_NAME).read_text())["keys"][0][1][0][0] == "one"


def test_malformed_cache_entry_for_this_key_is_rescanned(site: Path, cache_dir: Path) -> None:
    make_dist(site, "one", tools={"t": "one"})
    find_packs(path=[str(site)])
    cache_file = cache_dir / CACHE_FILE_NAME
    data = json.loads(cache_file.read_text())
    data["keys"][0][1][0][3] = [["t"]]  # an entry point without a value
    cache_file.write_text(json.dumps(data))
    (pack,) = find_packs(path=[str(site)])
    assert pack.entry_points == (("t", "one"),)


@pytest.mark.parametrize("how", ["below-a-file", "cache-file-is-a-dir"])
def test_unusable_cache_location(
    site: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    if how == "below-a-file":  # nothing can be created below a regular file, even by root
        cache_dir.write_text("")
        monkeypatch.setenv("TOOLREG_CACHE_DIR", str(cache_dir / "cache"))
    else:
        (cache_dir / CACHE_FILE_NAME).mkdir(parents=True)
    make_dist(site, "one", tools={"t": "one"})
    assert ids(find_packs(path=[str(site)])) == ids(find_packs(path=[str(site)])) == ["one"]


def test_broken_dists_are_skipped_with_a_warning(
    site: Path, caplog: pytest.LogCaptureFixture
) -> None:
    make_dist(site, "good", tools={"t": "good"})
    no_metadata = make_dist(site, "nometa", tools={"t": "nometa"})
    (no_metadata / "METADATA").unlink()
    (no_metadata / "METADATA").mkdir()  # present but unreadable
    bad_eps = make_dist(site, "badeps", tools={"t": "badeps"})
    (bad_eps / "entry_points.txt").write_text(f"[{GROUP}]\nno equals sign here\n")
    for _ in range(2):  # cold, then warm: the warning is replayed from the cache
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="toolreg.discovery"):
            assert ids(find_packs(path=[str(site)])) == ["good"]
        warned = " ".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
        assert str(no_metadata) in warned and str(bad_eps) in warned


WARM_PROBE = textwrap.dedent(
    """
    import json, sys
    opened = []
    sys.addaudithook(lambda event, args: event == "open" and opened.append(str(args[0])))
    from toolreg._entrypoints import find_packs
    before = set(sys.modules)
    del opened[:]
    packs = find_packs(path=[sys.argv[1]])
    imported = sorted(set(sys.modules) - before)
    print(json.dumps({"ids": [p.plugin_id for p in packs], "imported": imported, "opened": opened}))
    """
)


def test_warm_path_imports_no_metadata_library_and_reads_no_metadata(
    site: Path, cache_dir: Path
) -> None:
    for i in range(3):
        make_dist(site, f"pack{i}", tools={"t": f"pack{i}.tools"}, requires=("toolreg>=0.1",))
    env = {**os.environ, "TOOLREG_CACHE_DIR": str(cache_dir)}

    def probe() -> dict:
        cmd = [sys.executable, "-c", WARM_PROBE, str(site)]
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
        return json.loads(out)

    cold, warm = probe(), probe()
    assert cold["ids"] == warm["ids"] == ["pack0", "pack1", "pack2"]
    assert any(p.endswith("METADATA") for p in cold["opened"])  # the probe does see reads
    heavy = {"importlib.metadata", "importlib_metadata", "packaging", "email", "zipfile"}
    assert not heavy & set(warm["imported"]), warm["imported"]
    assert [os.path.basename(p) for p in warm["opened"]] == [CACHE_FILE_NAME]


PACK_PROJECT = """\
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "Toolreg_Demo"
version = "0.3.0"
dependencies = ['toolreg>=0.1; python_version >= "3.10"']

[project.entry-points."toolreg.tools"]
demo = "toolreg_demo.tools:register"
"""


def test_real_pip_install_end_to_end(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "toolreg_demo").mkdir(parents=True)
    (project / "pyproject.toml").write_text(PACK_PROJECT)
    (project / "toolreg_demo" / "__init__.py").write_text("")
    (project / "toolreg_demo" / "tools.py").write_text("def register(registry): pass\n")
    target = tmp_path / "target"
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target"]
    cmd += [str(target), str(project), "--disable-pip-version-check"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.skip("pip install took too long (no index reachable?)")
    if done.returncode:
        pytest.skip(f"pip could not build the demo pack (offline?): {done.stderr[-300:]}")
    (pack,) = find_packs(path=[str(target)])
    assert (pack.plugin_id, pack.distribution) == ("toolreg-demo", "Toolreg_Demo")
    assert pack.version == "0.3.0"
    assert pack.entry_points == (("demo", "toolreg_demo.tools:register"),)
    # The backend may re-quote the marker; the requirement itself is kept whole.
    assert pack.requires_toolreg.replace('"', "'") == "toolreg>=0.1; python_version >= '3.10'"
    assert pack.namespaces == ("toolreg_demo",)
    assert Path(pack.path).parent == target
