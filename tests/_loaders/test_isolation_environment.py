"""What an isolated pack's process starts with: the minimal environment, the workspace."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from toolreg._loaders import isolated_environment
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


@pytest.fixture
def untried(monkeypatch):
    """As if no isolated pack had started in this process yet."""
    monkeypatch.setattr(isolated_environment, "_hide_tried", False)


def test_a_host_that_cannot_hide_warns_once_and_goes_on(untried, monkeypatch, caplog):
    # A stand-in for prctl: the real one would leave this pytest worker non-dumpable.
    calls = []
    monkeypatch.setattr(
        isolated_environment,
        "_make_non_dumpable",
        lambda: calls.append(1) or "prctl: Operation not permitted",
    )
    with caplog.at_level(logging.DEBUG, logger="toolreg.plugins"):
        isolated_environment.hide_host_from_children()
        isolated_environment.hide_host_from_children()
    assert calls == [1], "tried once per process"
    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    assert "prctl: Operation not permitted" in record.getMessage()
    assert "can read its environment" in record.getMessage()


def test_only_linux_is_asked(monkeypatch):
    monkeypatch.setattr(isolated_environment.sys, "platform", "darwin")
    assert isolated_environment._make_non_dumpable() == "prctl is Linux's, this is darwin"
