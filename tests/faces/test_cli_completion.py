"""``toolreg completion SHELL``: scripts that the shells accept and that offer the real commands."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
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
        return bash_complete(path, *words)[0]

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


# -- tool names and toolsets: the script asks toolreg itself, as the line would run it


@pytest.fixture
def toolreg_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``toolreg`` executable first on PATH (this checkout's), no packs, no config."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    command = bin_dir / "toolreg"
    command.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m toolreg "$@"\n')
    command.chmod(0o755)
    source = str(Path(__file__).resolve().parents[2] / "src")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([source, os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), os.environ["PATH"]]))
    monkeypatch.setenv("TOOLREG_PLUGINS", "")
    monkeypatch.setenv("TOOLREG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TOOLREG_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    return command


def bash_complete(path: Path, *words: str) -> tuple[list[str], str]:
    """COMPREPLY for the line ``words`` (the last one being completed), and bash's stderr."""
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
    return done.stdout.split(), done.stderr


def test_bash_completes_tool_names_and_toolsets(capsys, tmp_path, toolreg_on_path):
    path = script(capsys, tmp_path, "bash")
    assert bash_complete(path, "toolreg", "call", "cur") == (["current_time"], "")
    shown, _ = bash_complete(path, "toolreg", "show", "")
    assert {"current_time", "terminal", "read_file"} <= set(shown)
    assert "time" not in shown  # tools, not toolsets
    assert bash_complete(path, "toolreg", "call", "-v", "te") == (["terminal"], "")
    assert bash_complete(path, "toolreg", "list", "--toolset", "ti") == (["time"], "")
    toolsets, _ = bash_complete(path, "toolreg", "serve", "--toolset", "")
    assert {"time", "file", "terminal", "web"} <= set(toolsets)
    assert "current_time" not in toolsets
    # A NAME elsewhere is no tool: the pack name of `new` is left alone.
    assert bash_complete(path, "toolreg", "new", "cur")[0] == []


def test_bash_completion_reads_the_config_the_line_names(capsys, tmp_path, toolreg_on_path):
    path = script(capsys, tmp_path, "bash")
    config = tmp_path / "narrow.toml"
    config.write_text('[toolsets]\nenabled = ["time"]\n')
    line = ("toolreg", "call", "--config", str(config), "")
    assert bash_complete(path, *line) == (["current_time"], "")
    (tmp_path / "toolreg.toml").write_text('[toolsets]\ndisabled = ["terminal"]\n')
    assert bash_complete(path, "toolreg", "show", "te")[0] == []  # ./toolreg.toml, as found


def test_bash_completion_stays_quiet_when_the_config_is_broken(capsys, tmp_path, toolreg_on_path):
    path = script(capsys, tmp_path, "bash")
    (tmp_path / "toolreg.toml").write_text("[plugins\n")
    assert bash_complete(path, "toolreg", "call", "cur") == ([], "")


def test_list_names_and_toolsets_print_one_per_line(capsys, tmp_path, toolreg_on_path):
    code, out, err = run(capsys, "list", "--names")
    assert (code, err) == (0, "")
    assert {"current_time", "terminal"} <= set(out.splitlines())
    code, out, err = run(capsys, "list", "--toolsets")
    assert (code, err) == (0, "")
    assert {"time", "terminal", "file", "web"} <= set(out.splitlines())
    help_code, help_out, _ = run(capsys, "list", "--help")
    assert help_code == 0 and "--names" not in help_out  # for the scripts, not for people


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_scripts_ask_toolreg_for_names(capsys, tmp_path, shell):
    text = script(capsys, tmp_path, shell).read_text()
    assert "_toolreg_names --names" in text and "_toolreg_names --toolsets" in text
    assert " list " in text and "2>/dev/null" in text
    tools, toolsets = {
        "zsh": (":NAME:_toolreg_tools", ":TS:_toolreg_toolsets"),
        "fish": ('-ka "(_toolreg_tools)" -d NAME', '-xka "(_toolreg_toolsets)"'),
    }[shell]
    assert text.count(tools) == 3  # show's, call's and permissions' NAME
    assert text.count(toolsets) == 3  # list's, search's and serve's --toolset
