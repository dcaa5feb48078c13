"""Running the ``toolreg`` CLI: in-process through ``main``, or the shared pack venv's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dists import PackVenv
from toolreg.cli import main

EXAMPLES = "toolreg-sqlite,toolreg-sandbox,toolreg-audit"


def plugins(venv: PackVenv, wanted: str, config: Path | None = None, **env: str) -> dict:
    args = ["plugins", "--json"] + (["--config", str(config)] if config else [])
    done = venv.run(*args, TOOLREG_PLUGINS=wanted, **env)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return {item["id"]: item for item in json.loads(done.stdout)}


def tools(venv: PackVenv, wanted: str, config: Path | None = None, **env: str) -> dict:
    args = ["list", "--json"] + (["--config", str(config)] if config else [])
    done = venv.run(*args, TOOLREG_PLUGINS=wanted, **env)
    assert done.returncode == 0, done.stderr
    return {item["name"]: item for item in json.loads(done.stdout)}


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "toolreg.toml"
    path.write_text(text)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run ``main`` in-process; return (exit code, stdout, stderr)."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(err: str, *fragments: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("toolreg: error: "), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0]
