"""RealPaths answers exactly as os.path.realpath does, cold or warm, on a tree full of symlinks.

Ownership compares the real paths of running code with those of the files a
pack's RECORD lists; one wrong answer would give a pack's code to no one (or
to another pack), so the cache must never differ from ``os.path.realpath``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolreg._core.real_paths import RealPaths

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX symlinks")

# Components the generated paths are made of: directories, files, symlinks of
# every kind (to a directory, absolute and relative, to a file, up the tree,
# dangling, in a loop), names that do not exist, ".", ".." and empty parts.
PARTS = [
    "real",
    "sub",
    "file.py",
    "abs_dir",
    "rel_dir",
    "file_link.py",
    "up",
    "dangling",
    "loop_a",
    "missing",
    ".",
    "..",
    "",
]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("real-paths")
    (root / "real" / "sub").mkdir(parents=True)
    (root / "real" / "file.py").write_text("")
    (root / "real" / "sub" / "file.py").write_text("")
    (root / "abs_dir").symlink_to(root / "real")
    (root / "rel_dir").symlink_to("real")
    (root / "real" / "sub" / "up").symlink_to("..")
    (root / "real" / "sub" / "rel_dir").symlink_to("../../rel_dir")
    (root / "file_link.py").symlink_to(root / "real" / "file.py")
    (root / "real" / "file_link.py").symlink_to("sub/file.py")
    (root / "dangling").symlink_to(root / "nowhere")
    (root / "loop_a").symlink_to("loop_b")
    (root / "loop_b").symlink_to("loop_a")
    return root


@settings(max_examples=400, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.sampled_from(PARTS), min_size=1, max_size=6), min_size=1, max_size=4))
def test_matches_realpath_cold_and_warm(tree: Path, paths: list[list[str]]) -> None:
    resolve = RealPaths()
    spelled = [str(tree) + os.sep + os.sep.join(parts) for parts in paths]
    for _ in range(2):  # the second round answers from what the first remembered
        for path in spelled:
            assert resolve(path) == os.path.realpath(path), path


def test_relative_paths_follow_the_working_directory(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    resolve = RealPaths()
    monkeypatch.chdir(tree / "rel_dir")
    assert resolve("file.py") == os.path.realpath("file.py") == str(tree / "real" / "file.py")
    monkeypatch.chdir(tree / "real" / "sub")
    assert resolve("file.py") == str(tree / "real" / "sub" / "file.py")


def test_the_root_and_trailing_separators(tree: Path) -> None:
    resolve = RealPaths()
    for path in ("/", str(tree) + "/abs_dir/", str(tree) + "//abs_dir//file.py"):
        assert resolve(path) == os.path.realpath(path)
