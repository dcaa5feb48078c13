"""``scripts/demo.sh`` (``make demo``) and the README it illustrates.

The demo never sends a destructive command: it proves the sandbox with a
harmless one whose answer shows which ``terminal`` ran it, and calls
``terminal`` only once the sandbox pack replaced it. It shows what the README
leads with: the model's view of a tool, a call the schema rejects, and the
README's host example printing its result. The last test runs the whole demo
in a fresh venv holding toolreg and the example packs, as ``make demo`` does
(about a minute; marked ``install``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from toolreg._schemas.formats import FORMATS

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "scripts" / "demo.sh"
README = ROOT / "README.md"
NUMBERS = {5: "five", 6: "six", 7: "seven", 8: "eight"}


def terminal_commands(script: str) -> list[tuple[int, str]]:
    """(line number, command) of every ``toolreg call terminal`` in ``script``."""
    found = []
    for number, line in enumerate(script.splitlines()):
        call = re.search(r"call terminal '(\{.*\})'", line)
        if call:
            found.append((number, json.loads(call.group(1))["command"]))
    return found


def test_the_demo_sends_terminal_only_a_harmless_command() -> None:
    script = DEMO.read_text()
    calls = terminal_commands(script)
    assert calls, "the demo should still show the sandbox's terminal"
    for _, command in calls:
        words = shlex.split(command)
        # Whichever terminal answers, with a shell or without: echo, and tr in a pipe.
        assert words[0] == "echo", command
        assert not {";", "&&", "||", ">", ">>", "rm"} & set(words), command
        assert not re.search(r"\brm\b|;|&&|`|\$\(", command), command
    assert not re.search(r"\brm\s+-", script.replace('rm -rf "$ws"', ""))


def test_the_demo_checks_the_sandbox_replaced_terminal_before_calling_it() -> None:
    lines = DEMO.read_text().splitlines()
    check = next(i for i, line in enumerate(lines) if "plugins --json" in line)
    first_call = terminal_commands(DEMO.read_text())[0][0]
    assert check < first_call
    guard = "\n".join(lines[check:first_call])
    assert '"toolreg-sandbox"' in guard and "loaded terminal" in guard and "exit 1" in guard
    # And its answer is checked to be the sandbox's: the shell's words come back as text.
    after = "\n".join(lines[first_call:])
    assert "answered by $0 | tr a-z A-Z" in after and "exit 1" in after


def test_the_demo_shows_the_models_view_a_rejected_call_and_the_host_example() -> None:
    script = DEMO.read_text()
    assert re.search(r'"\$TOOLREG" show current_time', script)
    assert """call current_time '{"timezone": 5}' || true""" in script
    assert "## Embedding it in a host" in script and '"$HERE/README.md"' in script


def test_the_readme_and_the_docs_index_count_the_formats_right() -> None:
    count = NUMBERS[len(FORMATS)]
    readme = README.read_text()
    index = (ROOT / "docs" / "index.md").read_text()
    assert f"**{count.capitalize()} provider formats**" in readme
    for name in FORMATS:
        assert f"`{name}`" in readme
    assert f"the {count} shapes a definition comes in" in index
    wrong = [word for n, word in NUMBERS.items() if n != len(FORMATS)]
    for text in (readme, index):
        for word in wrong:
            assert not re.search(rf"\b{word}\b[^.]*\bformats?\b", text, re.I), word
            assert f"{word} shapes" not in text.lower()


def test_the_readme_says_how_to_run_the_venvs_toolreg_and_to_install_from_a_checkout() -> None:
    readme = README.read_text()
    try_it = readme.split("## Try it", 1)[1].split("\n## ", 1)[0]
    assert ".venv/bin/toolreg" in try_it and ". .venv/bin/activate" in try_it
    assert "pip install path/to/checkout" in try_it
    assert "pip install path/to/checkout" in (ROOT / "docs" / "index.md").read_text()


@pytest.mark.install
def test_the_demo_runs_in_a_venv_with_the_example_packs(tmp_path: Path) -> None:
    examples = sorted(p for p in (ROOT / "example_plugins").iterdir() if p.is_dir())
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--wheel-dir", str(wheels), str(ROOT), *map(str, examples)],
        check=True,
    )  # fmt: skip
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    toolreg_wheel = next(wheels.glob("toolreg_core-*.whl"))
    subprocess.run([*pip, "--disable-pip-version-check", str(toolreg_wheel)], check=True)
    packs = [str(w) for w in wheels.glob("*.whl") if w != toolreg_wheel]
    subprocess.run([*pip, "--no-deps", *packs], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLREG_", "PYTHON"))}
    env.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path))
    done = subprocess.run(
        ["bash", str(DEMO), str(venv / "bin")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert '"name": "current_time"' in out  # the model's view
    assert "invalid_arguments" in out and "timezone" in out  # the rejected call, with its reason
    assert re.search(r"^\d+ tool definitions for the model$", out, re.M)  # the host example
    assert "answered by $0 | tr a-z A-Z" in out
    assert "toolreg-sandbox's terminal answered" in out
