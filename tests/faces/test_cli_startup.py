"""What a ``toolreg`` command loads: only what it uses (see benchmarks/bench_startup.py).

Each test runs the command in a fresh interpreter, twice: the first run fills
the discovery caches, as any earlier run would have, and the second is checked.
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

#: Loaded on first use by whoever needs them: no command that loads no pack,
#: reads no config file and calls no web or terminal tool needs any of them.
NOT_WITHOUT_PACKS = (
    "pluggy",
    "tomllib",
    "tomli",
    "importlib_metadata",
    "importlib.metadata",
    "packaging",
    "http.client",
    "urllib.request",
    "ssl",
    "email",
    "subprocess",
    "mcp",
    "toolreg._mcp.manager",
    "toolreg._mcp_serve.http_guard",
    # what only a pack or a configured plugin folder needs (admission too, below)
    "toolreg._loaders.import_guard",
    "toolreg._loaders.pack_modules",
    "toolreg._discovery.local_plugins",
)
#: An installed pack is judged even when $TOOLREG_PLUGINS leaves it off (the report
#: says why it did not load): only a venv with no pack at all skips admission.
if not entry_points(group="toolreg.tools"):
    NOT_WITHOUT_PACKS = (*NOT_WITHOUT_PACKS, "toolreg._policy.admission")
#: The other commands' modules: a command imports its own alone.
OTHER_COMMANDS = tuple(
    f"toolreg.cli.{m}"
    for m in (
        "_serve",
        "_doctor",
        "_plugin_commands",
        "_config_check",
        "_pip_commands",
        "_completion",
        "_scaffold",
    )
)
#: Listing reads no arguments (no validator), runs no search, asks no time zone and
#: opens no file by path (config discovery probes with os.path). It never dispatches:
#: the dispatcher, its worker pools and their thread machinery, and the argument
#: validator with its acceptors come with the first call.
NOT_FOR_LISTING = (
    *NOT_WITHOUT_PACKS,
    *OTHER_COMMANDS,
    *("fastjsonschema", "regex", "zoneinfo", "uuid", "decimal", "pathlib", "urllib.parse"),
    *("toolreg._dispatch", "concurrent.futures", "queue", "asyncio"),
    *("toolreg._schemas.validation", "toolreg._schemas.simple_schemas"),
)

SCRIPT = """
import io, sys
from toolreg.cli import main
sys.stdout, real = io.StringIO(), sys.stdout
code = main(sys.argv[1:])
sys.stdout = real
assert code == 0, code
print("\\n".join(sorted(sys.modules)))
"""


def loaded_by(tmp_path: Path, *argv: str) -> set[str]:
    # No config anywhere: an empty working directory and config home. No installed
    # pack either ($TOOLREG_PLUGINS empty), so the figures hold in a venv where
    # `make demo` installed the example packs.
    env = {k: v for k, v in os.environ.items() if k != "TOOLREG_CONFIG"}
    env["TOOLREG_PLUGINS"] = ""
    env["XDG_CONFIG_HOME"] = str(tmp_path)
    env["TOOLREG_WORKSPACE"] = str(tmp_path)
    cmd = [sys.executable, "-c", SCRIPT, *argv]
    for _ in range(2):
        out = subprocess.run(
            cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True
        )
    return set(out.stdout.split())


def unwanted(loaded: set[str], names: tuple[str, ...]) -> set[str]:
    return {m for m in loaded if any(m == n or m.startswith(n + ".") for n in names)}


def test_list_loads_no_config_reader_pluggy_validator_or_network_stack(tmp_path):
    loaded = loaded_by(tmp_path, "list", "--json")
    assert {"toolreg.builtin_tools.web_tools", "toolreg.builtin_tools.terminal_tool"} <= loaded
    assert not unwanted(loaded, NOT_FOR_LISTING)


def test_a_call_loads_what_its_tool_uses(tmp_path):
    loaded = loaded_by(tmp_path, "call", "current_time", '{"timezone": "Europe/Paris"}')
    # its time zone, its arguments checked, and the dispatcher that list never makes
    assert {"zoneinfo", "fastjsonschema", "toolreg._dispatch.dispatch"} <= loaded
    assert not unwanted(loaded, (*NOT_WITHOUT_PACKS, *OTHER_COMMANDS))
