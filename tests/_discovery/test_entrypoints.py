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

from toolreg._discovery.dist_info import read_dist_info, requires_toolreg
from toolreg._discovery.entrypoints import CACHE_FILE_NAME, GROUP, PackRecord, find_packs


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
    make_dist(site, "plain", tools={"p": "p"}, requires=("requests>=2", "toolreg-core>=0.1,<0.2"))
    marker = 'toolreg-core>=1; python_version >= "3.10"'
    make_dist(site, "marked", tools={"m": "m"}, requires=(marker,))
    make_dist(site, "spelled", tools={"s": "s"}, requires=("Toolreg_Core[mcp] >=0.1",))
    # "toolreg" on PyPI is an unrelated project: requiring it says nothing about us.
    make_dist(
        site, "lookalike", tools={"x": "x"}, requires=("toolregistry>=2", "toolreg>=9", "toolreg-x")
    )
    make_dist(site, "none", tools={"n": "n"})
    found = {p.plugin_id: p.requires_toolreg for p in find_packs(path=[str(site)])}
    assert found == {
        "lookalike": None,
        "marked": marker,
        "none": None,
        "plain": "toolreg-core>=0.1,<0.2",
        "spelled": "Toolreg_Core[mcp] >=0.1",
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


def test_cache_hit_is_checked_against_the_dist_info(site: Path, cache_dir: Path) -> None:
    dist_info = make_dist(site, "pack", tools={"one": "pack.one"})
    first = find_packs(path=[str(site)])
    assert (cache_dir / CACHE_FILE_NAME).is_file()
    assert find_packs(path=[str(site)]) == first
    # Rewriting a file in place leaves every mtime in the key alone: the hit is
    # still checked against the file, so the answer follows the file.
    (dist_info / "entry_points.txt").write_text(f"[{GROUP}]\ntwo = pack.two\n")
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
    site: Path, cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    make_dist(site, "good", tools={"t": "good"})
    no_metadata = make_dist(site, "nometa", tools={"t": "nometa"})
    (no_metadata / "METADATA").unlink()
    (no_metadata / "METADATA").mkdir()  # present but unreadable
    bad_eps = make_dist(site, "badeps", tools={"t": "badeps"})
    (bad_eps / "entry_points.txt").write_text(f"[{GROUP}]\nno equals sign here\n")
    for _ in range(2):  # a scan that met a broken distribution is not cached: it warns again
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="toolreg.discovery"):
            assert ids(find_packs(path=[str(site)])) == ["good"]
        warned = " ".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
        assert str(no_metadata) in warned and str(bad_eps) in warned
    assert not (cache_dir / CACHE_FILE_NAME).exists()


# -- a cache is only an optimisation: what a forged one cannot do --------------------------


def cached_records(cache_dir: Path) -> list[list]:
    return json.loads((cache_dir / CACHE_FILE_NAME).read_text())["keys"][0][1]


def forge(cache_dir: Path, change) -> None:
    """Rewrite this environment's cached records as an attacker would (the key stays right)."""
    data = json.loads((cache_dir / CACHE_FILE_NAME).read_text())
    data["keys"][0][1] = change(data["keys"][0][1])
    (cache_dir / CACHE_FILE_NAME).write_text(json.dumps(data))


def by_id(records: list[list], plugin_id: str) -> list:
    return next(r for r in records if r[0] == plugin_id)


def borrow_entry_point(records: list[list]) -> list[list]:
    by_id(records, "sandbox")[3] = by_id(records, "greedy")[3]
    return records


def rename(records: list[list]) -> list[list]:
    by_id(records, "greedy")[0:2] = ["trusted", "trusted"]  # to borrow trusted's consent
    return records


def other_version(records: list[list]) -> list[list]:
    by_id(records, "greedy")[2] = "9.9"
    return records


def other_requirement(records: list[list]) -> list[list]:
    by_id(records, "greedy")[4] = "toolreg-core>=99"
    return records


def missing_dist_info(records: list[list]) -> list[list]:
    ghost = ["ghost", "ghost", "1.0", [["g", "ghost"]], None, "/nonexistent/ghost-1.0.dist-info"]
    return [*records, ghost]


def moved_dist_info(records: list[list]) -> list[list]:
    by_id(records, "greedy")[5] = by_id(records, "sandbox")[5]
    return records


@pytest.mark.parametrize(
    ("change", "rule"),
    [
        (lambda records: [r for r in records if r[0] != "audit"], "pack-unlisted"),
        (lambda records: [], "pack-unlisted"),
        (borrow_entry_point, "pack-entry"),
        (rename, "pack-entry"),
        (other_version, "pack-entry"),
        (other_requirement, "pack-entry"),
        (missing_dist_info, "pack-entry"),
        (moved_dist_info, "pack-entry"),
        (lambda records: [*records, records[0]], "pack-entry"),
    ],
    ids=[
        "drop-a-hooks-only-pack", "drop-all", "borrow-entry-point", "rename", "version",
        "requires-toolreg", "missing-dist-info", "moved-dist-info", "listed-twice",
    ],
)  # fmt: skip
def test_forged_pack_cache_changes_nothing(
    site: Path, cache_dir: Path, cache_problems: dict, change, rule: str
) -> None:
    make_dist(site, "audit", tools={"audit": "audit_hooks"})
    make_dist(site, "greedy", "1.0", {"greedy": "greedy_pack"}, requires=("toolreg-core>=0.1",))
    make_dist(site, "sandbox", "2.0", {"sandbox": "sandbox_pack"})
    truth = find_packs(path=[str(site)], use_cache=False)
    assert find_packs(path=[str(site)]) == truth
    forge(cache_dir, change)

    assert find_packs(path=[str(site)]) == truth

    (problem,) = cache_problems.values()
    assert (problem["file"], problem["rule"]) == (str(cache_dir / CACHE_FILE_NAME), rule)
    assert find_packs(path=[str(site)]) == truth  # the rescan rewrote the entry
    assert len(cache_problems) == 1


def test_shadowed_copy_is_not_a_pack_the_cache_hides(tmp_path: Path, cache_problems: dict) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for directory in (first, second):
        directory.mkdir()
    make_dist(first, "shadowed", "2.0")
    make_dist(second, "shadowed", "1.0", {"t": "shadowed"})
    for _ in range(2):  # cold, then a hit that checks out: the copy on second is not looked at
        assert find_packs(path=[str(first), str(second)]) == []
    assert cache_problems == {}


@pytest.mark.parametrize("layout", ["two-in-one-folder", "zip-on-path", "upper-case-suffix"])
def test_layouts_the_check_cannot_read_turn_the_cache_off(
    site: Path, cache_dir: Path, tmp_path: Path, layout: str
) -> None:
    make_dist(site, "pack", "1.0", {"t": "pack"})
    path = [str(site)]
    if layout == "two-in-one-folder":
        make_dist(site, "pack", "2.0")
    elif layout == "zip-on-path":
        (tmp_path / "extra.zip").write_bytes(b"PK\x05\x06" + bytes(18))
        path.append(str(tmp_path / "extra.zip"))
    else:
        make_dist(site, "other", "1.0").rename(site / "other-1.0.DIST-INFO")
    assert [p.plugin_id for p in find_packs(path=path)] == ["pack"]
    assert not (cache_dir / CACHE_FILE_NAME).exists()


@pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")
def test_pack_cache_others_can_write_is_ignored(
    site: Path, cache_dir: Path, cache_problems: dict
) -> None:
    make_dist(site, "audit", tools={"audit": "audit_hooks"})
    find_packs(path=[str(site)])
    forge(cache_dir, lambda records: [])
    (cache_dir / CACHE_FILE_NAME).chmod(0o664)
    forged = (cache_dir / CACHE_FILE_NAME).read_bytes()

    assert ids(find_packs(path=[str(site)])) == ["audit"]

    assert [p["rule"] for p in cache_problems.values()] == ["mode"]
    assert (cache_dir / CACHE_FILE_NAME).read_bytes() == forged, "nothing written into it"


def test_forged_pack_cache_in_a_real_venv(pack_venv, tmp_path: Path) -> None:
    """The two attacks on real wheels: hide toolreg-audit, borrow toolreg-sandbox's consent."""
    cache = tmp_path / "private-cache"
    config = tmp_path / "toolreg.toml"
    config.write_text("[plugins.entries.toolreg-sandbox]\nallow_tool_override = true\n")
    env = {
        "TOOLREG_CACHE_DIR": str(cache),
        "TOOLREG_PLUGINS": "toolreg-sandbox,toolreg-audit,toolreg-greedy",
    }

    def report(*command: str) -> dict:
        done = pack_venv.run("--config", str(config), *command, "--json", **env)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def hide_audit_and_borrow_consent(records: list[list]) -> list[list]:
        greedy = by_id(records, "toolreg-greedy")
        by_id(records, "toolreg-sandbox")[3] = greedy[3]  # greedy's code, sandbox's consent
        return [r for r in records if r[0] not in ("toolreg-audit", "toolreg-greedy")]

    honest = {item["id"]: item for item in report("plugins")}
    assert honest["toolreg-audit"]["status"] == "loaded"
    assert honest["toolreg-greedy"]["status"] == "refused"
    forge(cache, hide_audit_and_borrow_consent)

    assert {item["id"]: item for item in report("plugins")} == honest

    forge(cache, hide_audit_and_borrow_consent)
    (problem,) = report("doctor")["caches"]
    assert problem["file"] == str(cache / CACHE_FILE_NAME)
    assert problem["rule"] in ("pack-unlisted", "pack-entry")


@pytest.mark.parametrize(
    ("metadata", "entry_points"),
    [
        ("Name: plain\nVersion: 1.0\n\nName: not-a-header\n", "[toolreg.tools]\na = b\n"),
        ("Name: crlf\r\nVersion: 1\r\nRequires-Dist: toolreg-core>=0.1\r\n\r\nbody", "[x]\r\n"),
        ("name: Lower_Case\nVERSION: 2\nrequires-dist: ToolReg ; extra == 'x'\n", ""),
        ("Name: folded\n  still-name\nVersion: 1\n", "[toolreg.tools]\na=b\n"),
        ("Name: twice\nName: second\nVersion: 1\nVersion: 2\n", "[[toolreg.tools]]\na=b=c\n"),
        ("Name: \tspaced  \nVersion: 1\n", "# c\n\n  [toolreg.tools]  \n  x  =  y  \n;z=w\n"),
        ("Name: sections\nVersion: 1\n", "top = level\n[toolreg.tools\n[ toolreg.tools ]\nq=r\n"),
        ("Version: 1\n", "[toolreg.tools]\na = b\n"),
        ("Name: noeq\nVersion: 1\n", "[toolreg.tools]\nno equals sign\n"),
        ("\ufeffName: bom\nVersion: 1\n", "[toolreg.tools]\na = b\n"),
        ("From nobody\nName: mbox\nVersion: 1\n", "[toolreg.tools]\na = b\n"),
    ],
)
def test_the_checks_readers_agree_with_importlib_metadata_or_decline(
    site: Path, metadata: str, entry_points: str
) -> None:
    import importlib_metadata

    dist_info = site / "probe-1.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_bytes(metadata.encode())
    (dist_info / "entry_points.txt").write_bytes(entry_points.encode())

    mine = read_dist_info(str(dist_info), GROUP)

    if isinstance(mine, str):
        return  # declining only costs a rescan
    dist = importlib_metadata.PathDistribution(dist_info)
    try:
        eps = tuple(sorted((ep.name, ep.value) for ep in dist.entry_points if ep.group == GROUP))
    except ValueError:
        # This importlib_metadata (9.x, on Python 3.10) refuses the value: the scan
        # reports the distribution as broken and caches nothing, so no hit is
        # ever checked against it.
        return
    meta = dist.metadata
    assert mine.entry_points == eps
    assert (mine.distribution, mine.version) == (meta["Name"], meta["Version"])
    assert mine.requires_toolreg == requires_toolreg(meta.get_all("Requires-Dist") or [])


WARM_PROBE = textwrap.dedent(
    """
    import json, sys
    opened = []
    sys.addaudithook(lambda event, args: event == "open" and opened.append(str(args[0])))
    from toolreg._discovery.entrypoints import find_packs
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
        make_dist(site, f"pack{i}", tools={"t": f"pack{i}.tools"}, requires=("toolreg-core>=0.1",))
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
    # The cache once, then each pack's own files, which the hit is checked against.
    opened = sorted(os.path.relpath(p, site) for p in warm["opened"][1:])
    assert os.path.basename(warm["opened"][0]) == CACHE_FILE_NAME
    files = ("METADATA", "entry_points.txt")
    assert opened == sorted(f"pack{i}-1.0.dist-info/{name}" for i in range(3) for name in files)


PACK_PROJECT = """\
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "Toolreg_Demo"
version = "0.3.0"
dependencies = ['toolreg-core>=0.1; python_version >= "3.10"']

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
    # Built with this venv's hatchling: no index needed, no build environment to set up.
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation"]
    cmd += ["--target", str(target), str(project), "--disable-pip-version-check"]
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
    assert pack.requires_toolreg.replace('"', "'") == "toolreg-core>=0.1; python_version >= '3.10'"
    assert pack.namespaces == ("toolreg_demo",)
    assert Path(pack.path).parent == target
