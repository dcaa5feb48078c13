"""What a ``toolreg`` command loads: only what it uses (see benchmarks/bench_startup.py).

Each test runs the command in a fresh interpreter, twice: the first run fills
the discovery caches, as any earlier run would have, and the second is checked.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

from pack_cli import run

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
    "toolreg._loaders.pack_modules",
    "toolreg._discovery.local_plugins",
    # the lock's check of installed packs
    "toolreg._loaders.pack_lock",
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
        "_search",
        "_config_check",
        "_pip_commands",
        "_scaffold",
    )
)
#: Listing reads no arguments (no validator), runs no search, asks no time zone and
#: opens no file by path (config discovery probes with os.path). It never dispatches:
#: the dispatcher, its worker pools and their thread machinery, and the argument
#: validator with its acceptors come with the first call. The built-ins' docstrings
#: are plain text (their parameters are described in Annotated), so no docstring
#: parser either; the parser's formatters ask the terminal's width without shutil.
#: A progress report's number check and a config file's seconds load numbers and math.
NOT_FOR_LISTING = (
    *NOT_WITHOUT_PACKS,
    *OTHER_COMMANDS,
    *("docstring_parser", "shutil", "numbers", "math"),
    "toolreg._core.plugin_policy",
    *("toolreg._search", "snowballstemmer"),
    # deferred loading's lists, and the merge of judged calls into the decision log
    *("toolreg._definitions.deferred", "heapq"),
    *("fastjsonschema", "regex", "zoneinfo", "uuid", "decimal", "pathlib", "urllib.parse"),
    *("toolreg._dispatch", "concurrent.futures", "queue", "asyncio"),
    *("toolreg._schemas.validation", "toolreg._schemas.simple_schemas"),
)

#: Dataclasses a listing may still define (each costs about half a millisecond to
#: create): a loaded pack's outcome, which lives with the report every load makes,
#: and a registration ``Decision``, which lives with the log every registry keeps.
#: ``PluginPolicy`` is defined only when a plugin is bound (its module is in
#: NOT_FOR_LISTING).
LISTING_DATACLASSES = {"PluginOutcome", "Decision"}

SCRIPT = """
import dataclasses, io, json, sys
from toolreg.cli import main
sys.stdout, real = io.StringIO(), sys.stdout
code = main(sys.argv[1:])
sys.stdout = real
assert code == 0, code
made = {
    value.__qualname__
    for name, module in list(sys.modules.items()) if name.startswith("toolreg")
    for value in list(vars(module).values())
    if isinstance(value, type) and dataclasses.is_dataclass(value)
    and value.__module__.startswith("toolreg")  # public names report module toolreg
}
print(json.dumps({"modules": sorted(sys.modules), "dataclasses": sorted(made)}))
"""


def loaded_by(tmp_path: Path, *argv: str) -> set[str]:
    """The modules a command imports."""
    return set(_run(tmp_path, *argv)["modules"])


def _run(tmp_path: Path, *argv: str) -> dict[str, list[str]]:
    return json.loads(_output(tmp_path, SCRIPT, *argv))  # type: ignore[no-any-return]


def _output(tmp_path: Path, script: str, *argv: str) -> str:
    """What ``script`` prints, run with ``argv`` in a fresh interpreter, the second time."""
    # No config anywhere: an empty working directory and config home. No installed
    # pack either ($TOOLREG_PLUGINS empty), so the figures hold in a venv where
    # `make demo` installed the example packs.
    env = {k: v for k, v in os.environ.items() if k != "TOOLREG_CONFIG"}
    env["TOOLREG_PLUGINS"] = ""
    env["XDG_CONFIG_HOME"] = str(tmp_path)
    env["TOOLREG_WORKSPACE"] = str(tmp_path)
    cmd = [sys.executable, "-c", script, *argv]
    for _ in range(2):
        out = subprocess.run(
            cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True
        )
    return out.stdout


def unwanted(loaded: set[str], names: tuple[str, ...]) -> set[str]:
    return {m for m in loaded if any(m == n or m.startswith(n + ".") for n in names)}


def test_list_loads_no_config_reader_pluggy_validator_or_network_stack(tmp_path):
    loaded = loaded_by(tmp_path, "list", "--json")
    assert {"toolreg.builtin_tools.web_tools", "toolreg.builtin_tools.terminal_tool"} <= loaded
    assert not unwanted(loaded, NOT_FOR_LISTING)


def test_list_defines_no_dataclass_but_the_known_few(tmp_path):
    # The config, the pack records and the report are NamedTuples or plain classes.
    made = set(_run(tmp_path, "list", "--json")["dataclasses"])
    assert made <= LISTING_DATACLASSES


def test_a_call_loads_what_its_tool_uses(tmp_path):
    loaded = loaded_by(tmp_path, "call", "current_time", '{"timezone": "Europe/Paris"}')
    # its time zone, its arguments checked, and the dispatcher that list never makes
    assert {"zoneinfo", "fastjsonschema", "toolreg._dispatch.dispatch"} <= loaded
    assert not unwanted(loaded, (*NOT_WITHOUT_PACKS, *OTHER_COMMANDS))


#: The console script, with load and list wrapped to say whether the collector runs.
GC_SCRIPT = """
import gc, sys
from toolreg.cli import _commands, run
real_load, real_list = _commands.load, _commands.cmd_list
def load(args):
    print("load", gc.isenabled(), flush=True)
    real_load(args)
def cmd_list(args):
    print("list", gc.isenabled(), gc.get_freeze_count() > 0, flush=True)
    return real_list(args)
_commands.load, _commands.cmd_list = load, cmd_list
sys.argv = ["toolreg", *sys.argv[1:]]
run()
"""


def test_the_console_script_loads_with_the_collector_paused_and_runs_with_it_on(tmp_path):
    out = _output(tmp_path, GC_SCRIPT, "list").splitlines()
    # paused while loading; the command itself runs with it on, start-up's objects frozen
    assert out[:2] == ["load False", "list True True"]
    assert "read_file" in "\n".join(out[2:])


def test_main_in_process_leaves_the_collector_alone(capsys):
    frozen = gc.get_freeze_count()
    assert run(capsys, "list", "--json")[0] == 0
    assert gc.isenabled() and gc.get_freeze_count() == frozen
