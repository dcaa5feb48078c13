"""Process isolation end to end: real wheels in the session venv, real child processes.

The hostile pack ``toolreg-usurper`` grants itself consent through private API
(``registry._callers.policies.bind``) and patches the conflict judge, then overrides
``terminal``. In-process that works, which is the point of the first test:
the gate is a consent check for well-behaved code. Under
``isolation = "process"`` the same code runs in another process and changes
nothing in the host.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dists import PackVenv

USURPER = "toolreg-usurper"
SQLITE = "toolreg-sqlite"


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "toolreg.toml"
    path.write_text(text)
    return path


def isolated(plugin_id: str, extra: str = "") -> str:
    return f'[plugins.entries.{plugin_id}]\nisolation = "process"\n{extra}'


def run_host(venv: PackVenv, config: Path, body: str, plugins: str, **env: str) -> dict:
    """Load built-ins and packs under ``config`` in a fresh host process, run ``body``.

    ``body`` is indented code that fills the dict ``out``, printed as JSON.
    """
    code = (
        "import json, os, sys, time, threading\n"
        "import toolreg\n"
        "from toolreg import discover_builtin_tools, load_config, load_plugins, registry\n"
        "from toolreg import apply_config, is_tool_error\n"
        f"config = load_config({str(config)!r})\n"
        "discover_builtin_tools()\n"
        "report = load_plugins(config)\n"
        "apply_config(config, registry)\n"
        "out = {'report': {o.id: o.to_dict() for o in report}, 'host_pid': os.getpid()}\n"
        f"{body}\n"
        "toolreg.get_plugin_host().unload_all()\n"
        "print(json.dumps(out))\n"
    )
    return venv.python_json(code, TOOLREG_PLUGINS=plugins, **env)


def test_private_api_takes_consent_in_process(pack_venv):
    """The hostile pack's attack is real: in the host process it overrides terminal."""
    done = pack_venv.run("plugins", "--json", TOOLREG_PLUGINS=USURPER)
    item = {i["id"]: i for i in json.loads(done.stdout)}[USURPER]
    assert (item["status"], item["isolation"]) == ("loaded", "none")
    # Its patched judge calls every registration an override, the takeover included.
    assert "terminal" in item["tools_overridden"]


def test_isolated_pack_cannot_take_consent(pack_venv, tmp_path):
    config = write_config(tmp_path, isolated(USURPER))
    out = run_host(
        pack_venv,
        config,
        """
from toolreg._core import gate as _gate
from toolreg._core import table as _table
out['owner'] = registry.get_owner('terminal')
out['terminal'] = json.loads(registry.dispatch('terminal', {'command': 'echo builtin'}))
out['whoami'] = json.loads(registry.dispatch('whoami', {}))
out['whoami_owner'] = registry.get_owner('whoami')
out['policy'] = repr(registry.get_plugin_policy('usurper_pack'))
out['judge'] = [_gate.judge.__qualname__, _table.judge is _gate.judge]
out['modules'] = [m for m in sys.modules if m.startswith('usurper_pack')]
""",
        USURPER,
    )
    item = out["report"][USURPER]
    assert (item["status"], item["isolation"]) == ("loaded", "process")
    assert item["tools_added"] == ["napper", "whoami"] and item["tools_overridden"] == []
    (refusal,) = item["refused"]
    assert refusal["tool"] == "terminal"
    assert f"plugins.entries.{USURPER}.allow_tool_override" in refusal["reason"]
    assert out["owner"] == "builtin"
    assert out["terminal"]["stdout"].strip() == "builtin"
    assert out["whoami_owner"] == USURPER
    assert out["whoami"]["pid"] != out["host_pid"], "the handler runs in the pack's process"
    assert out["policy"] == "None", "no policy of the pack is bound in the host"
    assert out["judge"] == ["judge", True], "the host's judge is its own"
    assert out["modules"] == [], "the pack's code was never imported into the host"


def test_operator_consent_still_works_and_unload_ends_the_process(pack_venv, tmp_path):
    config = write_config(tmp_path, isolated(USURPER, "allow_tool_override = true\n"))
    out = run_host(
        pack_venv,
        config,
        """
out['terminal'] = registry.dispatch('terminal', {'command': 'echo builtin'})
child = json.loads(registry.dispatch('whoami', {}))['pid']
toolreg.unload_plugin('toolreg-usurper')
out['after'] = [registry.get_owner('terminal'), registry.get_entry('whoami') is None]
try:
    os.kill(child, 0)
    out['child_alive'] = True
except ProcessLookupError:
    out['child_alive'] = False
""",
        USURPER,
    )
    assert out["report"][USURPER]["tools_overridden"] == ["terminal"]
    assert out["terminal"] == "pwned", "with consent, the pack's terminal runs (in its process)"
    assert out["after"] == ["builtin", True], "unloading restores the built-in"
    assert out["child_alive"] is False


def test_example_sqlite_pack_works_isolated(pack_venv, tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    import sqlite3

    with sqlite3.connect(workspace / "shop.db") as db:
        db.execute("CREATE TABLE items (name TEXT, price REAL)")
        db.execute("INSERT INTO items VALUES ('tea', 2.5)")
    config = write_config(tmp_path, isolated("toolreg-sqlite"))
    out = run_host(
        pack_venv,
        config,
        """
db = {'database': 'shop.db'}
out['tables'] = json.loads(registry.dispatch('sqlite_list_tables', db))
out['rows'] = json.loads(
    registry.dispatch('sqlite_query', {**db, 'sql': 'SELECT name, price FROM items'}))
out['write'] = registry.dispatch('sqlite_query', {**db, 'sql': 'DELETE FROM items'})
out['bad_args'] = registry.dispatch('sqlite_query', db)
out['toolset'] = registry.get_tool_names_for_toolset('sqlite')
out['owner'] = registry.get_owner('sqlite_query')
out['hints'] = dict(registry.get_entry('sqlite_query').annotations)
out['output_schema'] = registry.get_entry('sqlite_list_tables').output_schema
""",
        "toolreg-sqlite",
        TOOLREG_WORKSPACE=str(workspace),
    )
    item = out["report"]["toolreg-sqlite"]
    assert (item["status"], item["isolation"]) == ("loaded", "process")
    assert out["toolset"] == ["sqlite_describe_table", "sqlite_list_tables", "sqlite_query"]
    assert out["owner"] == "toolreg-sqlite"
    assert "items" in json.dumps(out["tables"])
    assert out["rows"]["rows"] == [["tea", 2.5]]
    # The pack's own tool_errors arrive as the pack wrote them, not wrapped twice.
    write = json.loads(out["write"])
    assert isinstance(write["error"], str) and not write["error"].startswith('{"error"')
    bad = json.loads(out["bad_args"])
    assert bad["error_type"] == "invalid_arguments" and "sql" in bad["error"]
    # The pack's MCP hints and output schema crossed the process boundary.
    assert out["hints"] == {"title": "Query SQLite", "readOnlyHint": True, "openWorldHint": False}
    assert out["output_schema"]["required"] == ["tables"]


def test_name_patterns_and_toolset_switches_apply(pack_venv, tmp_path):
    config = write_config(
        tmp_path,
        isolated("toolreg-sqlite", 'tools = ["sqlite_list_*"]\n')
        + isolated(USURPER)
        + '[toolsets]\ndisabled = ["usurper"]\n',
    )
    out = run_host(
        pack_venv,
        config,
        "out['names'] = registry.get_all_tool_names()",
        f"toolreg-sqlite,{USURPER}",
    )
    sqlite = out["report"]["toolreg-sqlite"]
    assert sqlite["tools_added"] == ["sqlite_list_tables"]
    refused = {r["tool"]: r["reason"] for r in sqlite["refused"]}
    assert set(refused) == {"sqlite_describe_table", "sqlite_query"}
    assert "plugins.entries.toolreg-sqlite.tools" in refused["sqlite_query"]
    assert "sqlite_query" not in out["names"] and "sqlite_list_tables" in out["names"]
    assert not {"whoami", "napper"} & set(out["names"]), "[toolsets] turned 'usurper' off"


def test_environment_is_minimal_and_cwd_is_the_workspace(pack_venv, tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    body = "out['whoami'] = json.loads(registry.dispatch('whoami', {}))"
    secrets = {"USURPER_SECRET": "s3cret", "OTHER_SECRET": "hush", "LANG": "C.UTF-8"}
    config = write_config(tmp_path, isolated(USURPER))
    closed = run_host(
        pack_venv, config, body, USURPER, TOOLREG_WORKSPACE=str(workspace), **secrets
    )["whoami"]
    allowed = {
        "PATH", "HOME", "LANG", "TOOLREG_WORKSPACE",
        "PYTHONPATH", "PYTHONHOME", "TOOLREG_CACHE_DIR",
    } | ({"SYSTEMROOT"} if sys.platform == "win32" else set())  # fmt: skip
    assert set(closed["env"]) <= allowed, set(closed["env"]) - allowed
    assert {"PATH", "HOME", "LANG", "TOOLREG_WORKSPACE"} <= set(closed["env"])
    assert closed["secret"] is None
    assert Path(closed["cwd"]) == workspace.resolve()

    config = write_config(tmp_path, isolated(USURPER, 'env = ["USURPER_SECRET"]\n'))
    (tmp_path / "cwd").mkdir()
    opened = pack_venv.python_json(
        f"""
        import json, os
        import toolreg
        from toolreg import load_config, load_plugins, registry
        load_plugins(load_config({str(config)!r}))
        print(registry.dispatch('whoami', {{}}))
        toolreg.get_plugin_host().unload_all()
        """,
        cwd=tmp_path / "cwd",
        TOOLREG_PLUGINS=USURPER,
        **secrets,
    )
    assert opened["secret"] == "s3cret", "a variable the operator lists is passed"
    assert "OTHER_SECRET" not in opened["env"]
    assert Path(opened["cwd"]) == (tmp_path / "cwd").resolve(), "no TOOLREG_WORKSPACE: the cwd"


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_killed_process_fails_the_call_in_flight_and_is_restarted(pack_venv, tmp_path):
    config = write_config(tmp_path, isolated(USURPER))
    pidfile = tmp_path / "napper.pid"
    out = run_host(
        pack_venv,
        config,
        f"""
import signal
results = []
call = threading.Thread(target=lambda: results.append(registry.dispatch(
    'napper', {{'pidfile': {str(pidfile)!r}, 'seconds': 60}})))
call.start()
deadline = time.monotonic() + 30
while not os.path.exists({str(pidfile)!r}) and time.monotonic() < deadline:
    time.sleep(0.02)
killed = int(open({str(pidfile)!r}).read())
os.kill(killed, signal.SIGKILL)
call.join(30)
out['in_flight'] = results
out['killed'] = killed
out['down'] = registry.availability('whoami')
deadline = time.monotonic() + 30
while time.monotonic() < deadline:  # until the restarted process answers
    answer = registry.dispatch('whoami', {{}})
    if not is_tool_error(answer):
        break
    time.sleep(0.05)
out['after'] = json.loads(answer)
""",
        USURPER,
    )
    (result,) = out["in_flight"]
    error = json.loads(result)["error"]
    assert error == "isolated pack toolreg-usurper closed while napper ran"
    if not out["down"][0]:  # the restart may already have happened; if not, it says why
        assert "isolated pack toolreg-usurper" in out["down"][1]
    assert out["after"]["pid"] not in (out["killed"], out["host_pid"]), "a new process answers"


def test_isolated_audit_pack_blocks_and_observes_calls(pack_venv, tmp_path):
    log = tmp_path / "audit.jsonl"
    config = write_config(
        tmp_path,
        isolated("toolreg-audit")
        + f'settings = {{ log_path = {json.dumps(str(log))}, block = ["http_request"] }}\n',
    )
    out = run_host(
        pack_venv,
        config,
        """
out['blocked'] = registry.dispatch('http_request', {'url': 'http://127.0.0.1:9'})
out['allowed'] = registry.dispatch('current_time', {'timezone': 'UTC'})
""",
        "toolreg-audit",
    )
    item = out["report"]["toolreg-audit"]
    assert item["isolation"] == "process"
    assert item["hooks"] == ["toolreg_configure", "toolreg_post_tool_call", "toolreg_pre_tool_call"]
    blocked = json.loads(out["blocked"])
    assert blocked["error_type"] == "blocked" and "audit policy" in blocked["error"]
    assert "UTC" in out["allowed"]
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["tool"], r["blocked"]) for r in records] == [
        ("http_request", True),
        ("current_time", False),
    ]


def test_a_failing_forwarded_hook_blocks_the_call(pack_venv, tmp_path):
    config = write_config(tmp_path, isolated("toolreg-badhook"))
    done = pack_venv.run(
        "--config", str(config), "call", "current_time", '{"timezone": "UTC"}',
        TOOLREG_PLUGINS="toolreg-badhook",
    )  # fmt: skip
    assert done.returncode == 1
    error = json.loads(done.stdout)["error"]
    assert "toolreg-badhook" in error and "hook exploded" in error


def test_plugins_report_for_isolated_packs(pack_venv, tmp_path):
    config = write_config(
        tmp_path,
        isolated("toolreg-audit") + isolated("toolreg-broken") + isolated("toolreg-selfgrant"),
    )
    env = {"TOOLREG_PLUGINS": "toolreg-audit,toolreg-broken,toolreg-selfgrant,toolreg-sqlite"}
    done = pack_venv.run("--config", str(config), "plugins", "--json", **env)
    assert done.returncode == 0, done.stderr
    report = {item["id"]: item for item in json.loads(done.stdout)}
    assert {
        pid: item["isolation"] for pid, item in report.items() if pid in env["TOOLREG_PLUGINS"]
    } == {
        "toolreg-audit": "process",
        "toolreg-broken": "process",
        "toolreg-selfgrant": "process",
        "toolreg-sqlite": "none",
    }
    broken = report["toolreg-broken"]
    assert broken["status"] == "failed" and "ModuleNotFoundError" in broken["reason"]
    selfgrant = report["toolreg-selfgrant"]
    assert (
        selfgrant["status"] == "refused"
        and "may not change plugin policies" in (selfgrant["reason"])
    )
    assert all(isinstance(item["hooks"], list) for item in report.values())
    table = pack_venv.run("--config", str(config), "plugins", **env).stdout
    header, *rows = table.splitlines()
    assert header.split()[:6] == ["PLUGIN", "VERSION", "STATUS", "ISOLATION", "TOOLS", "HOOKS"]
    audit = next(row for row in rows if row.startswith("toolreg-audit "))
    assert "process" in audit and "configure, post_tool_call, pre_tool_call" in audit


ALIASED = """
[toolsets]
{which} = ["db"]

[toolsets.aliases]
db = "sqlite"

[plugins.entries.toolreg-sqlite]
isolation = "process"
"""

#: Host code: the pack's tools, then again once its process was killed and restarted.
RESTART = """
import signal
out['before'] = registry.get_tool_names_for_toolset('sqlite')
def children():
    found = []
    for pid in os.listdir('/proc'):
        if pid.isdigit():
            try:
                stat = open(f'/proc/{pid}/stat').read()
            except OSError:
                continue
            if int(stat.rsplit(')', 1)[1].split()[1]) == os.getpid():
                found.append(int(pid))
    return found
(child,) = children()
os.kill(child, signal.SIGKILL)
deadline = time.monotonic() + 30
while time.monotonic() < deadline and [c for c in children() if c != child] == []:
    time.sleep(0.05)
time.sleep(3)  # the new process lists its tools
out['restarted'] = [c for c in children() if c != child] != []
out['after'] = registry.get_tool_names_for_toolset('sqlite')
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_enabled_through_a_config_alias_keeps_an_isolated_packs_tools(pack_venv, tmp_path):
    config = write_config(tmp_path, ALIASED.format(which="enabled"))
    out = run_host(pack_venv, config, RESTART, SQLITE)
    assert out["report"][SQLITE]["status"] == "loaded"
    assert set(out["before"]) >= {"sqlite_query"}, "enabled through an alias keeps the tools"
    assert out["restarted"] and set(out["after"]) == set(out["before"])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_disabled_through_a_config_alias_stays_off_after_a_restart(pack_venv, tmp_path):
    config = write_config(tmp_path, ALIASED.format(which="disabled"))
    out = run_host(pack_venv, config, RESTART, SQLITE)
    assert out["before"] == []
    assert out["restarted"] and out["after"] == [], "off by its alias, also after a restart"


SNOOP = "toolreg-snoop"
DUMPABLE = """
import ctypes
out['dumpable'] = ctypes.CDLL(None).prctl(3, 0, 0, 0, 0)  # PR_GET_DUMPABLE
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="non-dumpable is Linux's")
def test_only_a_host_that_isolates_a_pack_becomes_non_dumpable(pack_venv, tmp_path):
    in_process = run_host(pack_venv, write_config(tmp_path, ""), DUMPABLE, SNOOP)
    assert in_process["report"][SNOOP]["isolation"] == "none"
    assert in_process["dumpable"] == 1, "a host that isolates nothing keeps its core dumps"
    isolating = run_host(pack_venv, write_config(tmp_path, isolated(SNOOP)), DUMPABLE, SNOOP)
    assert isolating["report"][SNOOP]["status"] == "loaded"
    assert isolating["dumpable"] == 0


def as_a_regular_user() -> list[str]:
    """What to put before a command so that it runs as a user without root's reach.

    root reads every process's environment and memory (CAP_SYS_PTRACE), dumpable
    or not: the host's defence is for a regular user's packs. Run as root (in a
    container, say), the host runs as ``nobody``, allowed to read (not write)
    root's files so that it finds the pack venv; the pack's process inherits
    that, which only makes it a stronger snoop.
    """
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("run as root, and without setpriv to run the host as a regular user")
    return [
        setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
        "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search",
    ]  # fmt: skip


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="non-dumpable is Linux's")
def test_an_isolated_pack_cannot_read_the_hosts_environment(pack_venv, tmp_path):
    token = secrets.token_urlsafe(24)
    config = write_config(tmp_path, isolated(SNOOP))
    done = subprocess.run(
        [*as_a_regular_user(), str(pack_venv.toolreg), "call", "--config", str(config),
         "snoop", "-"],
        input=json.dumps({"marker": token}),
        capture_output=True,
        text=True,
        env=pack_venv.env(TOOLREG_PLUGINS=SNOOP, TOOLREG_SERVE_TOKEN=token),
        cwd=pack_venv.root,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["parent_read"] == "PermissionError", found
    assert not found["parent_holds"]
    assert found["parent"] not in found["readable"], "the host is out of the walk's reach"
    assert found["holding"] == [], "no process the pack can read holds the token"
    assert token not in done.stdout


@pytest.mark.parametrize("trusted", [False, True])
def test_an_isolated_packs_read_only_hint_counts_only_when_trusted(pack_venv, tmp_path, trusted):
    """The hints the child sent feed ``ask_unless_read_only`` as an in-process pack's do."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    import sqlite3

    with sqlite3.connect(workspace / "shop.db") as db:
        db.execute("CREATE TABLE items (name TEXT)")
    table = "[permissions]\nask_unless_read_only = true\n"
    if trusted:
        table += 'trust_hints = ["toolreg-sqlite"]\n'
    config = write_config(tmp_path, isolated(SQLITE) + table)
    out = run_host(
        pack_venv,
        config,
        """
out['tables'] = registry.dispatch('sqlite_list_tables', {'database': 'shop.db'})
out['hint'] = registry.get_entry('sqlite_list_tables').annotations.get('readOnlyHint')
""",
        SQLITE,
        TOOLREG_WORKSPACE=str(workspace),
    )
    assert out["report"][SQLITE]["isolation"] == "process"
    assert out["hint"] is True
    if trusted:
        assert "items" in out["tables"]
    else:
        result = json.loads(out["tables"])
        assert (result["code"], result["rule"]) == ("approval_required", "ask_unless_read_only")
        assert "readOnlyHint from an untrusted source, toolreg-sqlite" in result["error"]
