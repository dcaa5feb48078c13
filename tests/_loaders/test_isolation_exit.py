"""An isolated pack's process exits quietly when its parent goes away.

A command that loads an isolated pack exits while the pack's process may still
be writing to it; the child must not print a ``BrokenPipeError`` traceback.
Its stderr is the command's stderr, and ``subprocess.run`` reads that pipe to
its end, so the child's last words are in ``done.stderr``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_isolation import isolated, write_config

pytest.importorskip("mcp")

SQLITE = "toolreg-sqlite"


def test_a_command_with_an_isolated_pack_leaves_no_traceback(pack_venv, tmp_path: Path) -> None:
    config = write_config(tmp_path, isolated(SQLITE))
    for _ in range(3):  # the race is usually lost; three tries make it near certain
        done = pack_venv.run("list", TOOLREG_PLUGINS=SQLITE, TOOLREG_CONFIG=str(config))
        assert done.returncode == 0, done.stderr
        assert "sqlite_query" in done.stdout
        assert "Traceback" not in done.stderr, done.stderr
        assert "BrokenPipeError" not in done.stderr, done.stderr
        assert "Exception ignored" not in done.stderr, done.stderr
