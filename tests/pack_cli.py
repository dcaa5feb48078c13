"""Running the ``toolreg`` CLI of the shared pack venv, as an operator would."""

from __future__ import annotations

import json
from pathlib import Path

from dists import PackVenv

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
