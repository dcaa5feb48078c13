"""``toolreg -V``: toolreg's version and each installed pack's, read without importing packs."""

from __future__ import annotations

import sys

import pytest

from toolreg import __version__
from toolreg.cli import main


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version_names_toolreg_and_exits_0(capsys, flag):
    assert main([flag]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"toolreg {__version__} (toolreg-core, ")


def test_version_lists_every_installed_pack_without_importing_one(pack_venv):
    # toolreg-exit ends the process when imported, toolreg-hang sleeps ten minutes and
    # toolreg-broken raises: a complete answer, at once, means none was imported.
    done = pack_venv.run("-V", HANG_SECONDS="600")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"toolreg {__version__} ")
    packs = dict(line.split() for line in lines[2:])
    assert lines[1] == f"tool packs ({len(packs)}):"
    assert packs["toolreg-sqlite"] == "0.1.0"
    assert packs["toolreg-exit"] == packs["toolreg-hang"] == packs["toolreg-broken"] == "1.0.0"
    assert list(packs) == sorted(packs)
    assert "Traceback" not in done.stderr


def test_version_with_no_packs_says_so(capsys, monkeypatch):
    # Metadata is searched on sys.path: the standard library alone holds no pack.
    monkeypatch.setattr(sys, "path", [p for p in sys.path if "site-packages" not in p])
    assert main(["-V"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1:] == ["no tool packs installed (entry-point group toolreg.tools)"]
