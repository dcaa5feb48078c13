"""What an isolated pack's process starts with: the minimal environment, the workspace."""

from __future__ import annotations

import os
from pathlib import Path

from toolreg._loaders.isolated_environment import child_environment, keep_only, workspace


def test_only_the_minimal_set_and_the_listed_names_pass(tmp_path):
    parent = {
        "PATH": "/bin",
        "HOME": "/home/op",
        "LANG": "C.UTF-8",
        "API_TOKEN": "t0ken",
        "AWS_SECRET_ACCESS_KEY": "hush",
        "PYTHONPATH": "/opt/lib",
        "TOOLREG_WORKSPACE": str(tmp_path),
    }
    env = child_environment(["API_TOKEN", "NOT_SET_ANYWHERE"], environ=parent)
    assert env == {
        "PATH": "/bin",
        "HOME": "/home/op",
        "LANG": "C.UTF-8",
        "API_TOKEN": "t0ken",
        "PYTHONPATH": "/opt/lib",
        "TOOLREG_WORKSPACE": str(tmp_path.resolve()),
    }


def test_workspace_defaults_to_the_current_directory():
    env = child_environment([], environ={"PATH": "/bin", "SECRET": "x"})
    assert env == {"PATH": "/bin", "TOOLREG_WORKSPACE": str(Path(os.getcwd()).resolve())}
    assert workspace({"TOOLREG_WORKSPACE": ""}) == Path(os.getcwd()).resolve()


def test_keep_only_removes_everything_else():
    environ = {"PATH": "/bin", "LOGNAME": "op", "USER": "op", "TOKEN": "x"}
    keep_only(["PATH", "TOKEN"], environ=environ)  # type: ignore[arg-type]
    assert environ == {"PATH": "/bin", "TOKEN": "x"}
