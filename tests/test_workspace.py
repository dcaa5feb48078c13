"""Workspace confinement: relative paths resolve under the root and nothing escapes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from builtin_tools._workspace import (
    WorkspaceError,
    display_path,
    resolve_in_workspace,
    workspace_root,
)
from conftest import needs_symlinks


def test_relative_path_resolves_under_root(workspace: Path) -> None:
    assert resolve_in_workspace("a/b.txt", must_exist=False) == workspace / "a" / "b.txt"


def test_dot_is_the_root(workspace: Path) -> None:
    assert resolve_in_workspace(".", must_exist=True) == workspace


def test_absolute_path_inside_is_allowed(workspace: Path) -> None:
    (workspace / "f.txt").write_text("x")
    assert resolve_in_workspace(str(workspace / "f.txt"), must_exist=True) == workspace / "f.txt"


def test_dotdot_that_stays_inside_is_allowed(workspace: Path) -> None:
    (workspace / "sub").mkdir()
    assert resolve_in_workspace("sub/../f.txt", must_exist=False) == workspace / "f.txt"


@pytest.mark.parametrize("path", ["..", "../outside/secret.txt", "sub/../../outside"])
def test_dotdot_escape_is_refused(workspace: Path, outside: Path, path: str) -> None:
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        resolve_in_workspace(path, must_exist=False)


def test_absolute_path_outside_is_refused(workspace: Path, outside: Path) -> None:
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        resolve_in_workspace(str(outside / "secret.txt"), must_exist=True)


def test_sibling_with_common_prefix_is_refused(workspace: Path) -> None:
    # "/tmp/ws-evil" starts with the string "/tmp/ws" but is not inside it.
    sibling = workspace.parent / (workspace.name + "-evil")
    sibling.mkdir()
    with pytest.raises(WorkspaceError):
        resolve_in_workspace(str(sibling), must_exist=True)


def test_home_shorthand_outside_is_refused(
    workspace: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(outside))
    monkeypatch.setenv("USERPROFILE", str(outside))
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        resolve_in_workspace("~/secret.txt", must_exist=False)


@needs_symlinks
def test_symlink_pointing_outside_is_refused(workspace: Path, outside: Path) -> None:
    (workspace / "link").symlink_to(outside)
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        resolve_in_workspace("link/secret.txt", must_exist=True)


@needs_symlinks
def test_dangling_symlink_pointing_outside_is_refused(workspace: Path, outside: Path) -> None:
    # Writing through this link would create a file outside the root.
    (workspace / "dangling").symlink_to(outside / "not-yet.txt")
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        resolve_in_workspace("dangling", must_exist=False)


@needs_symlinks
def test_symlink_within_workspace_is_followed(workspace: Path) -> None:
    (workspace / "real").mkdir()
    (workspace / "alias").symlink_to(workspace / "real")
    assert resolve_in_workspace("alias/x", must_exist=False) == workspace / "real" / "x"


@needs_symlinks
def test_root_given_through_a_symlink_is_resolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real-root"
    real.mkdir()
    (tmp_path / "root-link").symlink_to(real)
    monkeypatch.setenv("TOOLREG_WORKSPACE", str(tmp_path / "root-link"))
    assert workspace_root() == real.resolve()
    # A path spelled through the link is still inside the (resolved) root.
    spelled = str(tmp_path / "root-link" / "f.txt")
    assert resolve_in_workspace(spelled, must_exist=False) == real.resolve() / "f.txt"


def test_missing_path_with_must_exist(workspace: Path) -> None:
    with pytest.raises(WorkspaceError, match="does not exist"):
        resolve_in_workspace("nope.txt", must_exist=True)
    assert resolve_in_workspace("nope.txt", must_exist=False) == workspace / "nope.txt"


@pytest.mark.parametrize("bad", ["", "   ", "a\x00b"])
def test_malformed_paths_are_refused(workspace: Path, bad: str) -> None:
    with pytest.raises(WorkspaceError):
        resolve_in_workspace(bad, must_exist=False)


def test_root_defaults_to_cwd_and_is_read_at_call_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOLREG_WORKSPACE", raising=False)
    monkeypatch.chdir(tmp_path)
    assert workspace_root() == tmp_path.resolve()
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.setenv("TOOLREG_WORKSPACE", str(other))
    assert workspace_root() == other.resolve()


def test_root_that_is_not_a_directory_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLREG_WORKSPACE", str(tmp_path / "missing"))
    with pytest.raises(WorkspaceError, match="not a directory"):
        resolve_in_workspace("x", must_exist=False)


def test_workspace_error_is_a_value_error() -> None:
    assert issubclass(WorkspaceError, ValueError)


def test_display_path_is_relative_posix(workspace: Path) -> None:
    assert display_path(workspace / "a" / "b.txt") == "a/b.txt"
    assert display_path(workspace) == "."
