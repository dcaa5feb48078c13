"""``toolreg completion SHELL``: scripts that the shells accept and that offer the real commands."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pack_cli import run
from toolreg.cli._app import build_parser

COMMANDS = sorted(
    next(a for a in build_parser()._actions if a.dest == "command").choices  # type: ignore[union-attr]
)


def script(capsys, tmp_path: Path, shell: str) -> Path:
    code, out, err = run(capsys, "completion", shell)
    assert code == 0, err
    path = tmp_path / f"toolreg.{shell}"
    path.write_text(out)
    return path


def shell_run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


def test_the_parser_has_the_commands_the_docs_name():
    assert {"list", "show", "call", "serve", "completion", "install", "config"} <= set(COMMANDS)


def test_bash_script_parses_and_completes_commands_and_options(capsys, tmp_path):
    path = script(capsys, tmp_path, "bash")
    assert shell_run("bash", "-n", str(path)).returncode == 0
    text = path.read_text()
    assert all(command in text for command in COMMANDS)

    def complete(*words: str) -> list[str]:
        line = " ".join(words)
        done = shell_run(
            "bash",
            "-c",
            f'source "{path}"; COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; '
            f'COMP_LINE="{line}"; COMP_POINT={len(line)}; '
            f'_shtab_toolreg toolreg "{words[-1]}" "{words[-2]}"; '
            'printf "%s\\n" "${COMPREPLY[@]}"',
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert complete("toolreg", "se") == ["search", "serve"]
    assert complete("toolreg", "ser") == ["serve"]
    assert "--format" in complete("toolreg", "list", "--f")
    assert complete("toolreg", "completion", "f") == ["fish"]


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_script_parses(capsys, tmp_path):
    path = script(capsys, tmp_path, "zsh")
    done = shell_run("zsh", "-n", str(path))
    assert done.returncode == 0, done.stderr
    text = path.read_text()
    assert text.startswith("#compdef toolreg")
    assert all(command in text for command in COMMANDS)


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_script_parses_and_completes(capsys, tmp_path):
    path = script(capsys, tmp_path, "fish")
    assert shell_run("fish", "--no-execute", str(path)).returncode == 0
    done = shell_run("fish", "-c", f'source "{path}"; complete -C "toolreg "')
    assert done.returncode == 0, done.stderr
    offered = {line.split("\t")[0] for line in done.stdout.splitlines()}
    assert set(COMMANDS) <= offered
    done = shell_run("fish", "-c", f'source "{path}"; complete -C "toolreg call --con"')
    assert done.stdout.startswith("--config")


def test_config_takes_a_path(capsys, tmp_path):
    text = script(capsys, tmp_path, "fish").read_text()
    config = next(line for line in text.splitlines() if "-l config" in line)
    assert "__fish_complete_path" in config


def test_an_unknown_shell_is_a_usage_error(capsys):
    code, _, err = run(capsys, "completion", "cmd.exe")
    assert code == 2
    assert "invalid choice" in err


def test_a_default_install_completes(pack_venv):
    # The pack venv has toolreg-core[mcp], without the completion extra.
    done = pack_venv.run("completion", "bash")
    assert done.returncode == 0, done.stderr
    assert "complete -o bashdefault -F _shtab_toolreg toolreg" in done.stdout
