"""Reading dist-info files: RECORD, read off real installed distributions."""

from __future__ import annotations

import os
from pathlib import Path

import pluggy

import toolreg
from toolreg._discovery.dist_info import core_record_files, installed_sources, is_editable


def dist_info(name: str) -> str:
    site = Path(pluggy.__file__).resolve().parents[1]
    return str(next(site.glob(f"{name}-*.dist-info")))


def test_a_regular_install_lists_its_sources_by_real_path():
    sources = installed_sources(dist_info("pluggy"))
    assert os.path.realpath(pluggy.__file__) in sources.files
    assert all(f.endswith(".py") for f in sources.files)
    assert sources.covers("pluggy") and not sources.covers("toolreg")


def test_an_editable_install_does_not_cover_its_namespace():
    # The test venv installs toolreg with `pip install -e`: its RECORD holds a
    # .pth or a finder, not toolreg's sources, so the namespace's directories
    # must stand in for it.
    info = dist_info("toolreg_core")
    sources = installed_sources(info)
    assert os.path.realpath(toolreg.__file__) not in sources.files
    assert not sources.covers("toolreg")


def test_a_missing_or_unreadable_record_lists_nothing(tmp_path: Path):
    assert installed_sources(str(tmp_path / "gone-1.0.dist-info")).files == frozenset()
    broken = tmp_path / "broken-1.0.dist-info"
    broken.mkdir()
    (broken / "RECORD").write_bytes(b"\xff\xfe not utf-8")
    assert installed_sources(str(broken)).files == frozenset()


def test_files_outside_site_packages_belong_to_the_pack_too(tmp_path: Path):
    site = tmp_path / "site"
    info = site / "pack-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "RECORD").write_text(
        "pack/__init__.py,sha256=x,1\n"
        "single.py,,\n"
        "../../bin/helper.py,,\n"
        "pack-1.0.dist-info/METADATA,,\n"
    )
    sources = installed_sources(str(info))
    root = os.path.realpath(tmp_path)
    assert sources.files == {
        os.path.join(root, "site", "pack", "__init__.py"),
        os.path.join(root, "site", "single.py"),
        os.path.join(os.path.dirname(root), "bin", "helper.py"),
    }
    assert sources.top_level == {"pack", "single"}


# -- toolreg-core's own RECORD: the built-ins' files --------------------------------------


def _site_with_planted_file(tmp_path: Path) -> Path:
    """A site-packages as pip leaves it after installing toolreg-core, then a wheel that
    puts a file into toolreg/builtin_tools/ (and lists it in its own RECORD)."""
    site = tmp_path / "site"
    (site / "toolreg" / "builtin_tools").mkdir(parents=True)
    for name in ("__init__.py", "builtin_tools/__init__.py", "builtin_tools/time_tool.py",
                 "builtin_tools/planted.py"):  # fmt: skip
        (site / "toolreg" / name).write_text("")
    core = site / "toolreg_core-0.1.0.dist-info"
    core.mkdir()
    (core / "RECORD").write_text(
        "toolreg/__init__.py,sha256=x,1\n"
        "toolreg/builtin_tools/__init__.py,sha256=x,1\n"
        "toolreg/builtin_tools/time_tool.py,sha256=x,1\n"
        "toolreg_core-0.1.0.dist-info/RECORD,,\n"
    )
    evil = site / "toolreg_core_evil-1.0.dist-info"  # toolreg-core-evil: not toolreg-core
    evil.mkdir()
    (evil / "RECORD").write_text(
        "toolreg/__init__.py,sha256=x,1\ntoolreg/builtin_tools/planted.py,sha256=x,1\n"
    )
    return site


def test_only_toolreg_cores_own_record_names_built_in_files(tmp_path: Path):
    site = _site_with_planted_file(tmp_path)
    builtins = str(site / "toolreg" / "builtin_tools")
    own = core_record_files(str(site / "toolreg"), "toolreg/builtin_tools/", "0.1.0")
    assert own == {os.path.join(builtins, "__init__.py"), os.path.join(builtins, "time_tool.py")}
    # Found by listing the folder too, when the version does not name it.
    assert core_record_files(str(site / "toolreg"), "toolreg/builtin_tools/", "9.9") == own


def test_a_record_that_does_not_list_toolreg_itself_is_not_toolregs(tmp_path: Path):
    """A toolreg_core-* folder whose RECORD misses toolreg/__init__.py describes some
    other toolreg than the one imported; with none, toolreg runs from a checkout."""
    site = _site_with_planted_file(tmp_path)
    (site / "toolreg_core-0.1.0.dist-info" / "RECORD").write_text(
        "toolreg/builtin_tools/planted.py,,\n"
    )
    assert core_record_files(str(site / "toolreg"), "toolreg/builtin_tools/", "0.1.0") is None
    checkout = tmp_path / "checkout" / "src" / "toolreg"
    checkout.mkdir(parents=True)
    assert core_record_files(str(checkout), "toolreg/builtin_tools/", "0.1.0") is None


def test_editable_installs_are_read_from_direct_url(tmp_path: Path):
    info = tmp_path / "x-1.0.dist-info"
    info.mkdir()
    assert not is_editable(str(info))
    (info / "direct_url.json").write_text('{"url": "file:///x", "dir_info": {"editable": true}}')
    assert is_editable(str(info))
    (info / "direct_url.json").write_text('{"url": "file:///x", "dir_info": {}}')
    assert not is_editable(str(info))
    (info / "direct_url.json").write_text("not json")
    assert not is_editable(str(info))
    assert is_editable(dist_info("toolreg_core")), "the test venv's toolreg is editable"
