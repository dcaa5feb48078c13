"""Workspace confinement: paths open by descriptor under the root and nothing escapes it."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

import toolreg.workspace as workspace_module
from conftest import needs_symlinks
from toolreg.workspace import (
    Opened,
    WorkspaceError,
    create_or_truncate,
    open_directory,
    open_file_or_directory,
    open_regular_file,
    workspace_root,
    workspace_warning,
)

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")


def rel_of(opener: Callable[[str], Opened], path: str) -> str:
    opened = opener(path)
    os.close(opened.fd)
    return opened.rel


def same_file(opened: Opened, path: Path) -> bool:
    """Whether the descriptor is the very file at ``path`` (not just one with that name)."""
    try:
        return os.path.samestat(os.fstat(opened.fd), os.stat(path))
    finally:
        os.close(opened.fd)


def test_relative_path_resolves_under_root(workspace: Path) -> None:
    assert rel_of(create_or_truncate, "a/b.txt") == "a/b.txt"
    assert (workspace / "a" / "b.txt").is_file(), "missing parents are made"
    assert same_file(open_regular_file("a/b.txt"), workspace / "a" / "b.txt")


def test_dot_is_the_root(workspace: Path) -> None:
    assert rel_of(open_directory, ".") == "."
    assert same_file(open_directory("."), workspace)


def test_absolute_path_inside_is_allowed(workspace: Path) -> None:
    (workspace / "f.txt").write_text("x")
    assert rel_of(open_regular_file, str(workspace / "f.txt")) == "f.txt"
    assert rel_of(open_directory, str(workspace)) == "."


def test_dotdot_that_stays_inside_is_allowed(workspace: Path) -> None:
    (workspace / "sub").mkdir()
    (workspace / "f.txt").write_text("x")
    assert rel_of(open_regular_file, "sub/../f.txt") == "f.txt"
    assert rel_of(open_directory, "sub/..") == "."


@pytest.mark.parametrize("path", ["..", "../outside/secret.txt", "sub/../../outside", "../ws"])
def test_dotdot_escape_is_refused(workspace: Path, outside: Path, path: str) -> None:
    (workspace / "sub").mkdir()
    for opener in (open_file_or_directory, create_or_truncate):
        with pytest.raises(WorkspaceError, match="outside the workspace"):
            opener(path)


def test_absolute_path_outside_is_refused(workspace: Path, outside: Path) -> None:
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        open_regular_file(str(outside / "secret.txt"))
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        create_or_truncate(str(outside / "new.txt"))
    assert not (outside / "new.txt").exists()


def test_missing_outside_path_says_outside_not_missing(workspace: Path, outside: Path) -> None:
    # Otherwise the error would tell a model which paths exist outside the root.
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        open_regular_file(str(outside / "nope" / "x.txt"))


def test_sibling_with_common_prefix_is_refused(workspace: Path) -> None:
    # "/tmp/ws-evil" starts with the string "/tmp/ws" but is not inside it.
    sibling = workspace.parent / (workspace.name + "-evil")
    sibling.mkdir()
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        open_directory(str(sibling))


def test_home_shorthand_outside_is_refused(
    workspace: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(outside))
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        create_or_truncate("~/secret.txt")
    assert (outside / "secret.txt").read_text() == "top secret\n"


def test_unknown_user_home_is_a_clean_error(workspace: Path) -> None:
    with pytest.raises(WorkspaceError, match="cannot expand '~nosuchuser-toolreg'"):
        create_or_truncate("~nosuchuser-toolreg/x")
    assert list(workspace.iterdir()) == [], "no directory literally named '~...' is made"


@needs_symlinks
def test_symlink_pointing_outside_is_refused(workspace: Path, outside: Path) -> None:
    (workspace / "link").symlink_to(outside)
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        open_regular_file("link/secret.txt")


@needs_symlinks
def test_dangling_symlink_pointing_outside_is_refused(workspace: Path, outside: Path) -> None:
    # Writing through this link would create a file outside the root.
    (workspace / "dangling").symlink_to(outside / "not-yet.txt")
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        create_or_truncate("dangling")
    assert not (outside / "not-yet.txt").exists()


@needs_symlinks
def test_symlinks_within_workspace_are_followed(workspace: Path) -> None:
    (workspace / "real").mkdir()
    (workspace / "real" / "x").write_text("x")
    (workspace / "alias").symlink_to(workspace / "real")  # absolute target
    (workspace / "rel-alias").symlink_to("real")  # relative target
    (workspace / "file-link").symlink_to("real/x")
    assert rel_of(open_regular_file, "alias/x") == "real/x"
    assert rel_of(open_regular_file, "rel-alias/x") == "real/x"
    assert rel_of(open_regular_file, "file-link") == "real/x"
    assert rel_of(create_or_truncate, "alias/new") == "real/new"
    assert (workspace / "real" / "new").is_file()


@needs_symlinks
def test_link_that_climbs_out_through_dotdot_is_refused(workspace: Path, outside: Path) -> None:
    (workspace / "sub").mkdir()
    (workspace / "sub" / "up").symlink_to("../../outside")
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        open_regular_file("sub/up/secret.txt")


@needs_symlinks
def test_symlink_loop_is_a_clean_error(workspace: Path) -> None:
    (workspace / "a").symlink_to("b")
    (workspace / "b").symlink_to("a")
    with pytest.raises(WorkspaceError, match="too many levels of symbolic links"):
        open_regular_file("a")
    with pytest.raises(WorkspaceError, match="too many levels of symbolic links"):
        create_or_truncate("a/x")


@needs_symlinks
def test_root_given_through_a_symlink_is_resolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real-root"
    real.mkdir()
    (tmp_path / "root-link").symlink_to(real)
    monkeypatch.setenv("TOOLREG_WORKSPACE", str(tmp_path / "root-link"))
    assert workspace_root() == real.resolve()
    # A path spelled through the link is still inside the root.
    assert rel_of(create_or_truncate, str(tmp_path / "root-link" / "f.txt")) == "f.txt"
    assert rel_of(create_or_truncate, str(real / "g.txt")) == "g.txt"


def test_missing_path(workspace: Path) -> None:
    with pytest.raises(WorkspaceError, match="does not exist"):
        open_regular_file("nope.txt")
    with pytest.raises(WorkspaceError, match="does not exist"):
        open_directory("nope/deeper")


def test_kinds_are_checked(workspace: Path) -> None:
    (workspace / "d").mkdir()
    (workspace / "f.txt").write_text("x")
    with pytest.raises(WorkspaceError, match="is a directory"):
        open_regular_file("d")
    with pytest.raises(WorkspaceError, match="is a directory"):
        create_or_truncate("d")
    with pytest.raises(WorkspaceError, match="not a directory"):
        open_directory("f.txt")
    with pytest.raises(WorkspaceError, match="does not exist"):
        open_regular_file("f.txt/x")


@needs_fifo
def test_fifo_is_refused_without_waiting_for_a_writer(workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    for opener in (open_regular_file, open_file_or_directory, create_or_truncate):
        with pytest.raises(WorkspaceError, match="is a FIFO; only regular files"):
            opener("pipe")
    with pytest.raises(WorkspaceError, match="is a FIFO"):
        open_regular_file("pipe", writable=True)


@pytest.mark.parametrize("bad", ["", "   ", "a\x00b"])
def test_malformed_paths_are_refused(workspace: Path, bad: str) -> None:
    with pytest.raises(WorkspaceError):
        create_or_truncate(bad)


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
    assert rel_of(create_or_truncate, "f.txt") == "f.txt"
    assert (other / "f.txt").is_file() and not (tmp_path / "f.txt").exists()


def test_root_that_is_not_a_directory_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLREG_WORKSPACE", str(tmp_path / "missing"))
    with pytest.raises(WorkspaceError, match="not a directory"):
        create_or_truncate("x")


def test_workspace_error_is_a_value_error() -> None:
    assert issubclass(WorkspaceError, ValueError)


# --- the warning for a root nobody chose ----------------------------------------------------


@pytest.mark.parametrize("where", ["home", "slash"])
def test_warns_when_unset_and_cwd_is_home_or_slash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    monkeypatch.delenv("TOOLREG_WORKSPACE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path if where == "home" else "/")
    warning = workspace_warning()
    assert warning is not None
    assert "TOOLREG_WORKSPACE is not set" in warning
    assert repr(str(tmp_path.resolve()) if where == "home" else "/") in warning


def test_no_warning_when_set_or_in_a_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.delenv("TOOLREG_WORKSPACE", raising=False)
    assert workspace_warning() is None
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TOOLREG_WORKSPACE", str(tmp_path))
    assert workspace_warning() is None, "a home directory chosen on purpose is not warned about"


# --- a pack's use of the public module ------------------------------------------------------


def pack_read(path: str) -> str:
    """What a pack's read tool does: open through the jail, then read the descriptor."""
    opened = workspace_module.open_regular_file(path)
    with open(opened.fd, encoding="utf-8") as fh:
        return fh.read()


def pack_write(path: str, text: str) -> str:
    """What a pack's write tool does: open (or create) through the jail, then truncate."""
    opened = workspace_module.create_or_truncate(path)
    with open(opened.fd, "w", encoding="utf-8") as fh:
        fh.truncate(0)
        fh.write(text)
    return opened.rel


def test_the_public_module_is_what_the_builtins_use() -> None:
    import toolreg.builtin_tools._common
    import toolreg.builtin_tools._file_ops

    assert toolreg.builtin_tools._common.WorkspaceError is workspace_module.WorkspaceError
    assert toolreg.builtin_tools._file_ops.open_regular_file is workspace_module.open_regular_file
    assert all(hasattr(workspace_module, name) for name in workspace_module.__all__)


def test_a_pack_reads_and_writes_inside(workspace: Path) -> None:
    (workspace / "d").mkdir()
    assert pack_write("d/../d/notes.txt", "hello") == "d/notes.txt"
    assert pack_read(str(workspace / "d" / "notes.txt")) == "hello"


@needs_symlinks
@pytest.mark.parametrize(
    "path", ["../outside/secret.txt", "d/../../outside/secret.txt", "ABSOLUTE", "link/secret.txt",
             "file-link", "d/up/secret.txt"],
)  # fmt: skip
def test_a_pack_cannot_escape(workspace: Path, outside: Path, path: str) -> None:
    (workspace / "d").mkdir()
    (workspace / "link").symlink_to(outside)
    (workspace / "file-link").symlink_to(outside / "secret.txt")
    (workspace / "d" / "up").symlink_to("../../outside")
    path = str(outside / "secret.txt") if path == "ABSOLUTE" else path
    with pytest.raises(workspace_module.WorkspaceError, match="outside the workspace root"):
        pack_read(path)
    with pytest.raises(workspace_module.WorkspaceError, match="outside the workspace root"):
        pack_write(path, "overwritten")
    assert (outside / "secret.txt").read_text() == "top secret\n"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


@needs_symlinks
def test_a_pack_cannot_create_outside_through_a_linked_directory(
    workspace: Path, outside: Path
) -> None:
    (workspace / "link").symlink_to(outside)
    with pytest.raises(workspace_module.WorkspaceError, match="outside the workspace root"):
        pack_write("link/new/dirs/x.txt", "x")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"], "no directory was made"


@needs_fifo
def test_a_pack_is_never_handed_a_fifo(workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    with pytest.raises(workspace_module.WorkspaceError, match="only regular files"):
        pack_read("pipe")
