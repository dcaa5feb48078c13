"""Tool packs end to end: real wheels, a real venv, real entry points, the real CLI.

Every hostile pack is installed at once; each test picks the packs it wants
with TOOLREG_PLUGINS, as an operator could.
"""

from __future__ import annotations

import json

import pytest

from dists import REPO
from pack_cli import EXAMPLES, plugins, tools, write_config


def test_report_shape_and_example_packs_without_consent(pack_venv):
    report = plugins(pack_venv, EXAMPLES)
    active = {pid for pid, item in report.items() if item["status"] != "disabled"}
    assert active == {"toolreg-audit", "toolreg-sandbox", "toolreg-sqlite"}
    assert report["toolreg-broken"]["reason"] == "not listed in TOOLREG_PLUGINS"
    assert list(report) == sorted(report), "packs load in a fixed order: by id"
    for item in report.values():
        assert set(item) == {
            "id", "distribution", "version", "entry_point", "status", "reason",
            "tools_added", "tools_overridden", "refused", "isolation", "hooks", "hooks_withheld",
            "drifted",
        }  # fmt: skip
        assert item["isolation"] == "none"
    sqlite = report["toolreg-sqlite"]
    assert sqlite["status"] == "loaded" and "sqlite_query" in sqlite["tools_added"]
    assert sqlite["entry_point"] == "sqlite = toolreg_sqlite"
    sandbox = report["toolreg-sandbox"]
    assert sandbox["status"] == "refused"
    assert "plugins.entries.toolreg-sandbox.allow_tool_override" in sandbox["reason"]
    assert report["toolreg-audit"]["status"] == "loaded"
    assert report["toolreg-audit"]["hooks"] == [
        "toolreg_configure", "toolreg_post_tool_call", "toolreg_pre_tool_call",
    ]  # fmt: skip
    assert sqlite["hooks"] == [] and report["toolreg-broken"]["hooks"] == []
    listed = tools(pack_venv, EXAMPLES)
    assert listed["terminal"]["owner"] == "builtin"
    assert listed["sqlite_query"]["owner"] == "toolreg-sqlite"


def test_sandbox_overrides_terminal_with_consent(pack_venv, tmp_path):
    config = write_config(
        tmp_path, "[plugins.entries.toolreg-sandbox]\nallow_tool_override = true\n"
    )
    report = plugins(pack_venv, EXAMPLES, config)
    assert report["toolreg-sandbox"]["status"] == "loaded"
    assert report["toolreg-sandbox"]["tools_overridden"] == ["terminal"]
    assert tools(pack_venv, EXAMPLES, config)["terminal"]["owner"] == "toolreg-sandbox"
    done = pack_venv.run(
        "--config", str(config), "call", "terminal", '{"command": "echo hi; rm -rf x"}',
        TOOLREG_PLUGINS=EXAMPLES, TOOLREG_WORKSPACE=str(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["stdout"].strip() == "hi; rm -rf x"


def test_broken_import_is_reported_and_others_load(pack_venv):
    report = plugins(pack_venv, "toolreg-broken,toolreg-sqlite")
    assert report["toolreg-broken"]["status"] == "failed"
    assert "ModuleNotFoundError" in report["toolreg-broken"]["reason"]
    assert report["toolreg-sqlite"]["status"] == "loaded"
    verbose = pack_venv.run("-v", "plugins", TOOLREG_PLUGINS="toolreg-broken")
    assert "Traceback" in verbose.stderr


def test_override_without_consent_is_refused_and_rolled_back(pack_venv, tmp_path):
    report = plugins(pack_venv, "toolreg-greedy")
    assert report["toolreg-greedy"]["status"] == "refused"
    assert "'read_file'" in report["toolreg-greedy"]["reason"]
    listed = tools(pack_venv, "toolreg-greedy")
    assert listed["read_file"]["owner"] == "builtin"
    assert "greedy_tool" not in listed, "a refused pack's other tools are rolled back"
    config = write_config(
        tmp_path, "[plugins.entries.toolreg-greedy]\nallow_tool_override = true\n"
    )
    report = plugins(pack_venv, "toolreg-greedy", config)
    assert report["toolreg-greedy"]["status"] == "loaded"
    assert report["toolreg-greedy"]["tools_overridden"] == ["read_file"]


@pytest.mark.parametrize("how", ["borrowed", "partial", "lambda", "wraps"])
def test_laundering_is_refused(pack_venv, how):
    report = plugins(pack_venv, "toolreg-launder", LAUNDER=how)
    assert report["toolreg-launder"]["status"] == "refused", report
    assert "allow_tool_override" in report["toolreg-launder"]["reason"]
    assert tools(pack_venv, "toolreg-launder", LAUNDER=how)["terminal"]["owner"] == "builtin"


def test_assigning_a_live_entrys_handler_takes_nothing_over(pack_venv, tmp_path):
    """``registry.get_entry("terminal").handler = evil`` from a pack denied overrides."""
    report = plugins(pack_venv, "toolreg-launder", LAUNDER="takeover")
    item = report["toolreg-launder"]
    assert item["status"] == "failed" and "read-only" in item["reason"], item
    assert tools(pack_venv, "toolreg-launder", LAUNDER="takeover")["terminal"]["owner"] == "builtin"
    done = pack_venv.run(
        "call", "terminal", '{"command": "echo still builtin"}',
        TOOLREG_PLUGINS="toolreg-launder", LAUNDER="takeover", TOOLREG_WORKSPACE=str(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["stdout"].strip() == "still builtin"


def test_reserved_namespace_is_refused_before_import(pack_venv):
    item = plugins(pack_venv, "toolreg-reserved")["toolreg-reserved"]
    assert item["status"] == "refused"
    assert "reserved module namespace 'builtin_tools'" in item["reason"]


def test_namespace_of_another_pack_is_refused(pack_venv):
    report = plugins(pack_venv, "toolreg-sqlite,toolreg-squatter")
    assert report["toolreg-sqlite"]["status"] == "loaded"
    assert report["toolreg-squatter"]["status"] == "refused"
    assert "belongs to pack 'toolreg-sqlite'" in report["toolreg-squatter"]["reason"]


def test_deregistering_a_builtin_is_refused(pack_venv):
    item = plugins(pack_venv, "toolreg-dereg")["toolreg-dereg"]
    assert item["status"] == "refused" and "'terminal'" in item["reason"]
    assert "terminal" in tools(pack_venv, "toolreg-dereg")


def test_two_packs_with_one_tool_name_first_wins(pack_venv):
    report = plugins(pack_venv, "toolreg-dup-b,toolreg-dup-a")
    assert report["toolreg-dup-a"]["tools_added"] == ["shared_tool"]
    loser = report["toolreg-dup-b"]
    assert loser["status"] == "loaded" and loser["tools_added"] == ["dup_b_only"]
    assert [r["tool"] for r in loser["refused"]] == ["shared_tool"]
    assert "dup_a" in loser["refused"][0]["reason"]
    done = pack_venv.run("call", "shared_tool", TOOLREG_PLUGINS="toolreg-dup-a,toolreg-dup-b")
    assert done.stdout.strip() == "from a"


def test_raising_hook_blocks_calls_and_is_reported(pack_venv):
    env = {"TOOLREG_PLUGINS": "toolreg-badhook"}
    done = pack_venv.run("call", "current_time", '{"timezone": "UTC"}', **env)
    assert done.returncode == 1
    assert "hook exploded" in json.loads(done.stdout)["error"]
    doctor = pack_venv.run("doctor", "--json", **env)
    assert doctor.returncode == 0
    # A fresh process has no failures yet; the report proves the hook is loaded.
    assert plugins(pack_venv, "toolreg-badhook")["toolreg-badhook"]["status"] == "loaded"


def test_raising_setup_hook_fails_and_rolls_back(pack_venv):
    item = plugins(pack_venv, "toolreg-badsetup")["toolreg-badsetup"]
    assert item["status"] == "failed" and "setup exploded" in item["reason"]
    assert "badsetup_tool" not in tools(pack_venv, "toolreg-badsetup")


def test_incompatible_pack_is_skipped_with_both_versions(pack_venv):
    item = plugins(pack_venv, "toolreg-future")["toolreg-future"]
    assert item["status"] == "incompatible"
    assert ">=99" in item["reason"] and "0.1.0" in item["reason"]


def test_malformed_schema_fails_the_pack(pack_venv):
    item = plugins(pack_venv, "toolreg-badschema")["toolreg-badschema"]
    assert item["status"] == "failed" and "'bad_tool'" in item["reason"]
    assert "fine_tool" not in tools(pack_venv, "toolreg-badschema")


def test_pack_cannot_grant_itself_consent(pack_venv):
    item = plugins(pack_venv, "toolreg-selfgrant")["toolreg-selfgrant"]
    assert item["status"] == "refused" and "may not change plugin policies" in item["reason"]


def test_bad_config_exits_2_with_one_line_and_no_report(pack_venv, tmp_path):
    config = write_config(tmp_path, "[plugins.entries.toolreg-sqlite]\nversion = 'banana'\n")
    done = pack_venv.run("plugins", "--json", "--config", str(config))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert str(config) in done.stderr and "plugins.entries.toolreg-sqlite.version" in done.stderr


def test_operator_switches(pack_venv, tmp_path):
    assert plugins(pack_venv, "")["toolreg-sqlite"]["status"] == "disabled"
    off = plugins(pack_venv, EXAMPLES, TOOLREG_DISABLE_PLUGIN_AUTOLOAD="1")
    assert {item["status"] for item in off.values()} == {"disabled"}
    config = write_config(tmp_path, '[plugins]\ndisabled = ["Toolreg_SQLite"]\n')
    assert plugins(pack_venv, EXAMPLES, config)["toolreg-sqlite"]["status"] == "disabled"


def test_version_pin_and_tool_patterns(pack_venv, tmp_path):
    config = write_config(tmp_path, '[plugins.entries.toolreg-sqlite]\nversion = ">=2"\n')
    item = plugins(pack_venv, "toolreg-sqlite", config)["toolreg-sqlite"]
    assert item["status"] == "incompatible" and "operator pin >=2" in item["reason"]
    config = write_config(tmp_path, '[plugins.entries.toolreg-sqlite]\ntools = ["sqlite_list_*"]\n')
    item = plugins(pack_venv, "toolreg-sqlite", config)["toolreg-sqlite"]
    assert item["status"] == "refused" and "plugins.entries.toolreg-sqlite.tools" in item["reason"]


def test_unload_restores_the_builtin_and_reload_keeps_one_registration(pack_venv, tmp_path):
    config = write_config(
        tmp_path, "[plugins.entries.toolreg-sandbox]\nallow_tool_override = true\n"
    )
    result = pack_venv.python_json(
        f"""
        import json
        import toolreg
        from toolreg import discover_builtin_tools, load_config, registry
        discover_builtin_tools()
        config = load_config({str(config)!r})
        toolreg.load_plugins(config)
        before = registry.get_owner("terminal")
        toolreg.unload_plugin("toolreg-sandbox")
        after = registry.get_owner("terminal")
        report = toolreg.reload_plugins()
        again = registry.get_owner("terminal")
        toolreg.reload_plugins()
        names = registry.get_all_tool_names()
        live = [n for n in names if registry.get_owner(n) == "toolreg-sqlite"]
        print(json.dumps([before, after, again, report.get("toolreg-sandbox").status, live]))
        """,
        TOOLREG_PLUGINS="toolreg-sandbox,toolreg-sqlite",
    )
    before, after, again, status, live = result
    assert (before, after, again, status) == (
        "toolreg-sandbox",
        "builtin",
        "toolreg-sandbox",
        "loaded",
    )
    assert sorted(live) == ["sqlite_describe_table", "sqlite_list_tables", "sqlite_query"]


def test_local_folder_plugin(pack_venv, tmp_path):
    folder = tmp_path / "local"
    folder.mkdir()
    (folder / "hello.py").write_text(
        "from toolreg import registry\n"
        "registry.register('hello', 'local', {}, lambda args: 'hello from a folder')\n"
    )
    (folder / "notes.py").write_text("X = 1\n")
    config = write_config(tmp_path, f'[plugins]\npaths = ["{folder}"]\n')
    report = plugins(pack_venv, "local:hello", config)
    assert report["local:hello"]["tools_added"] == ["hello"]
    assert "local:notes" not in report, "a file that neither registers nor hooks is not a plugin"
    assert tools(pack_venv, "local:hello", config)["hello"]["owner"] == "local:hello"


@pytest.mark.parametrize("pack", ["toolreg-sqlite", "toolreg-sandbox", "toolreg-audit"])
def test_example_pack_test_suites_pass(pack_venv, pack, tmp_path):
    import subprocess

    project = REPO / "example_plugins" / pack
    # Its own pyproject as the config, as in its own checkout (not this repo's options).
    done = subprocess.run(
        [str(pack_venv.python), "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "-c", str(project / "pyproject.toml"), str(project / "tests")],
        capture_output=True, text=True, env=pack_venv.env(), cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_a_pack_that_hangs_at_import_fails_and_the_rest_load(pack_venv, tmp_path):
    config = write_config(tmp_path, "[plugins]\nimport_timeout = 0.5\n")
    report = plugins(pack_venv, "toolreg-hang,toolreg-sqlite", config)
    hang = report["toolreg-hang"]
    assert hang["status"] == "failed" and "did not finish within 0.5 s" in hang["reason"]
    assert "import_timeout" in hang["reason"]
    assert report["toolreg-sqlite"]["status"] == "loaded"
    doctor = pack_venv.run(
        "doctor", "--json", "--config", str(config), TOOLREG_PLUGINS="toolreg-hang"
    )
    assert json.loads(doctor.stdout)["stuck_calls"]["import"]["stuck"] == 1


def test_what_a_timed_out_import_registers_later_is_refused(pack_venv, tmp_path):
    """The abandoned import runs on; its late registrations stay the pack's, and are refused."""
    config = write_config(tmp_path, "[plugins]\nimport_timeout = 0.2\n")
    result = pack_venv.python_json(
        f"""
        import json, time
        import toolreg
        from toolreg import discover_builtin_tools, load_config, registry, worker_stats
        discover_builtin_tools()
        report = toolreg.load_plugins(load_config({str(config)!r}))
        while worker_stats()["import"]["stuck"]:
            time.sleep(0.05)
        rejected = [d.tool for d in registry.decisions() if d.action == "rejected"]
        # Never unbound on the way: its namespace stays bound, to no tool names.
        policy = registry.get_plugin_policy("hang_pack")
        print(json.dumps([report.get("toolreg-hang").status, registry.get_owner("terminal"),
                          registry.get_entry("late_tool") is None, rejected,
                          [policy.plugin_id, policy.allowed, list(policy.tool_patterns)]]))
        """,
        TOOLREG_PLUGINS="toolreg-hang",
        HANG_SECONDS="1",
    )
    status, terminal_owner, no_late_tool, rejected, policy = result
    assert (status, terminal_owner, no_late_tool) == ("failed", "builtin", True)
    assert "late_tool" in rejected
    assert policy == ["toolreg-hang", False, []]


def test_a_pack_calling_os_exit_at_import_fails_instead_of_ending_the_command(pack_venv):
    done = pack_venv.run("plugins", "--json", TOOLREG_PLUGINS="toolreg-exit,toolreg-sqlite")
    assert done.returncode == 0 and done.stdout, "not a silent exit"
    report = {item["id"]: item for item in json.loads(done.stdout)}
    assert report["toolreg-exit"]["status"] == "failed"
    assert "os._exit(0)" in report["toolreg-exit"]["reason"]
    assert report["toolreg-sqlite"]["status"] == "loaded"


LOADING_IMPORTS = """
import json, sys
import toolreg
report = toolreg.load_plugins(toolreg.load_config())
optional = ("toolreg._loaders.hook_runner", "toolreg._discovery.local_plugins")
print(json.dumps([
    sorted(item.id for item in report if item.status == "loaded"),
    [name for name in optional if name in sys.modules],
    toolreg.get_plugin_host().hooks is not None,
]))
"""


def test_loading_imports_the_hook_runner_only_for_a_dispatch_hook(pack_venv):
    """No plugin folder: no folder scan. No dispatch hook: no hook runner, no hook layer."""
    loaded, imported, layer = pack_venv.python_json(
        LOADING_IMPORTS, TOOLREG_PLUGINS="toolreg-sqlite"
    )
    assert (loaded, imported, layer) == (["toolreg-sqlite"], [], False)
    both = "toolreg-audit,toolreg-sqlite"
    loaded, imported, layer = pack_venv.python_json(LOADING_IMPORTS, TOOLREG_PLUGINS=both)
    assert (loaded, imported, layer) == (both.split(","), ["toolreg._loaders.hook_runner"], True)


# -- an entry point names only code its own distribution installed ---------------------

# pack -> (entry point, the module it names, the module whose code would run first)
SQUATS = {
    "toolreg-threads": ("x", "threading", "threading"),  # the host's every command died
    "toolreg-asyncio": ("x", "asyncio", "asyncio"),  # it owned every MCP server's tools
    "toolreg-pluggy": ("x", "pluggy", "pluggy"),  # another distribution's
    "toolreg-nested": ("x", "toolreg_sqlite.nested", "toolreg_sqlite"),  # another pack's
    "toolreg-mimic": ("mimic", "mimic_pack", "mimic_pack"),  # its name, installed by another
}


@pytest.mark.parametrize("isolation", ["none", "process"])
@pytest.mark.parametrize("pack", sorted(SQUATS))
def test_an_entry_point_naming_code_its_distribution_did_not_install_is_refused(
    pack_venv, tmp_path, pack, isolation
):
    entry_point, module, runs = SQUATS[pack]
    config = write_config(
        tmp_path,
        f'[plugins.entries.{pack}]\nisolation = "{isolation}"\nallow_tool_override = true\n',
    )
    wanted = f"{pack},toolreg-sqlite,toolreg-audit"
    report = plugins(pack_venv, wanted, config)
    item = report[pack]
    assert item["status"] == "refused", item
    assert item["reason"].startswith(
        f"PermissionError: pack {pack!r}: entry point {entry_point!r} names module {module!r}, "
        f"and importing it runs module {runs!r}"
    )
    assert f"among the files distribution {pack!r} installed" in item["reason"]
    assert item["tools_added"] == []
    assert {report[p]["status"] for p in ("toolreg-sqlite", "toolreg-audit")} == {"loaded"}
    # Every command still works, with the built-ins and the other packs as they were.
    listed = tools(pack_venv, wanted, config)
    assert listed["terminal"]["owner"] == "builtin"
    assert listed["sqlite_query"]["owner"] == "toolreg-sqlite"
    assert not {"nested_tool", "mimic_tool"} & set(listed)
    done = pack_venv.run("--config", str(config), "call", "current_time", "{}",
                         TOOLREG_PLUGINS=wanted, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    doctor = pack_venv.run("--config", str(config), "doctor", "--json", TOOLREG_PLUGINS=wanted)
    assert doctor.returncode == 0, doctor.stderr
    assert [p["id"] for p in json.loads(doctor.stdout)["plugin_failures"]] == [pack]


def test_a_squatting_pack_leaves_mcp_and_aliases_to_their_owners(pack_venv, tmp_path):
    """With ``x = asyncio`` refused, an MCP toolset's tools stay the server's in the host."""
    config = write_config(tmp_path, "")
    out = pack_venv.python_json(
        f"""
        import json
        import toolreg
        from toolreg import registry
        toolreg.discover_builtin_tools()
        report = toolreg.load_plugins(toolreg.load_config({str(config)!r}))
        registry.register("mcp__srv__t", "mcp-srv",
                          {{"parameters": {{"type": "object", "properties": {{}}}}}},
                          lambda args: "server")
        registry.register_toolset_alias("srv", "mcp-srv")
        print(json.dumps({{"owner": registry.get_owner("mcp__srv__t"),
                           "alias": registry.resolve_toolset("srv"),
                           "status": {{o.id: o.status for o in report}}}}))
        """,
        TOOLREG_PLUGINS="toolreg-asyncio",
    )
    assert out == {
        "owner": "mcp:srv",
        "alias": "mcp-srv",
        "status": {**{p: "disabled" for p in out["status"]}, "toolreg-asyncio": "refused"},
    }


# -- a file installed into toolreg's built-ins folder ---------------------------------


def test_a_file_another_distribution_puts_among_the_builtins_is_not_a_builtin(pack_venv, tmp_path):
    """toolreg-planter installs toolreg/builtin_tools/zz_planted_tool.py, which registers
    ``terminal``: only the files toolreg-core's RECORD lists are built-ins."""
    planted = "toolreg.builtin_tools.zz_planted_tool"
    # The venv's own toolreg, from its wheel: not a checkout on an inherited PYTHONPATH.
    wheel = {"PYTHONPATH": ""}
    for wanted in ("toolreg-planter", ""):  # whether or not the pack itself loads
        listed = tools(pack_venv, wanted, **wheel)
        assert "planted_tool" not in listed
        assert listed["terminal"]["owner"] == "builtin"
        done = pack_venv.run(
            "call", "terminal", '{"command": "echo real"}',
            TOOLREG_PLUGINS=wanted, TOOLREG_WORKSPACE=str(tmp_path), **wheel,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["stdout"].strip() == "real"
        listing = pack_venv.run("list", TOOLREG_PLUGINS=wanted, **wheel)
        assert "1 tool module(s) failed to import" in listing.stderr
    report = plugins(pack_venv, "toolreg-planter", **wheel)["toolreg-planter"]
    assert (report["status"], report["tools_added"]) == ("loaded", [])
    doctor = pack_venv.run("doctor", "--json", TOOLREG_PLUGINS="", **wheel)
    (failure,) = json.loads(doctor.stdout)["import_failures"]
    assert failure["module"] == planted
    assert failure["error"].startswith("PermissionError: ")
    assert (
        "zz_planted_tool.py is not a built-in: toolreg-core's RECORD does not list it"
        in (failure["error"])
    )
    found = pack_venv.python_json(
        """
        import json, sys
        import toolreg
        print(json.dumps([toolreg.discover_builtin_tools(),
                          "toolreg.builtin_tools.zz_planted_tool" in sys.modules,
                          toolreg.__file__]))
        """,
        **wheel,
    )
    assert planted not in found[0] and "toolreg.builtin_tools.terminal_tool" in found[0]
    assert found[1] is False, "the planted file was never imported"
    assert "site-packages" in found[2], "the wheel's toolreg was tested"


@pytest.mark.parametrize("globals_of", ["own", "builtin"])
@pytest.mark.parametrize("via", ["check", "handler", "schema", "hook"])
def test_code_a_pack_hands_over_runs_later_as_the_packs(pack_venv, via, globals_of):
    """A callable a pack made at import from a file outside its RECORD (no exec;
    optionally with a built-in module's globals) and handed over as a check_fn,
    handler, schema override or hook, runs later from host code: its attempt to
    take ``terminal`` over is judged as the pack's, which has no consent."""
    found = pack_venv.python_json(
        """
        import json
        import toolreg
        from toolreg import discover_builtin_tools, registry
        discover_builtin_tools()
        item = toolreg.load_plugins()["toolreg-launder"]
        status = [item.status, item.reason]
        registry.get_definitions()  # probes check_fns, merges schema overrides
        if "launder_probe" in registry.get_all_tool_names():
            registry.dispatch("launder_probe", {})
        registry.dispatch("current_time", {})  # every dispatch hook runs
        answer = registry.dispatch("terminal", {"command": "echo builtin"})
        answer = json.loads(answer) if answer.startswith("{") else {"taken over": answer}
        refusals = [d.reason for d in registry.decisions() if d.action == "rejected"]
        print(json.dumps([status, registry.get_owner("terminal"), answer, refusals]))
        """,
        TOOLREG_PLUGINS="toolreg-launder",
        LAUNDER=f"deferred-{via}",
        LAUNDER_GLOBALS=globals_of,
    )
    status, owner, answer, refusals = found
    assert status[0] == "loaded", found
    assert owner == "builtin", found
    if via == "hook":  # refused, the hook raised: fail-closed, it blocks the call
        assert "PermissionError" in answer["error"], found
    else:
        assert answer["stdout"].strip() == "builtin", found
    assert any(
        "'toolreg-launder' may not override tool 'terminal'" in reason
        and "allow_tool_override" in reason
        for reason in refusals
    ), found
