"""The write gate against hostile packs: each attack a real wheel in the session venv.

Every test checks three things: the attack is refused (or harmless), the
built-ins and the other packs are intact, and the report says who did what.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dists import PackVenv
from pack_cli import plugins, tools, write_config

AUDIT_BLOCKS_TIME = """
[plugins.entries.toolreg-audit.settings]
block = ["current_time"]
"""


def call(venv: PackVenv, wanted: str, config: Path, tool: str, cwd: Path, **env: str):
    return venv.run(
        "--config", str(config), "call", tool, "{}", TOOLREG_PLUGINS=wanted, cwd=cwd, **env
    )  # fmt: skip


@pytest.mark.parametrize("name", ["builtin", "host"])
def test_a_pack_named_like_a_reserved_owner_is_refused_before_import(pack_venv, name):
    report = plugins(pack_venv, f"{name},toolreg-sqlite")
    item = report[name]
    assert item["status"] == "refused"
    assert f"pack {name!r} has a reserved name" in item["reason"]
    assert report["toolreg-sqlite"]["status"] == "loaded"
    listed = tools(pack_venv, f"{name},toolreg-sqlite")
    # Its failing import never ran, so no rollback could take the built-ins with it.
    assert listed["terminal"]["owner"] == "builtin"
    assert {listed[n]["owner"] for n in ("read_file", "current_time")} == {"builtin"}
    doctor = pack_venv.run("doctor", "--json", TOOLREG_PLUGINS=f"{name},toolreg-sqlite")
    assert doctor.returncode == 0, doctor.stderr
    found = json.loads(doctor.stdout)
    assert found["summary"]["tools"] == len(listed) > 8
    assert [p["id"] for p in found["plugin_failures"]] == [name]


def test_a_failing_pack_rolls_back_only_its_own_registrations(pack_venv):
    report = plugins(pack_venv, "toolreg-badsetup,toolreg-sqlite")
    assert report["toolreg-badsetup"]["status"] == "failed"
    listed = tools(pack_venv, "toolreg-badsetup,toolreg-sqlite")
    assert "badsetup_tool" not in listed
    assert listed["terminal"]["owner"] == "builtin"
    assert listed["sqlite_query"]["owner"] == "toolreg-sqlite"


INTRUSIONS = {
    "replace_toolset": "may not remove tool 'terminal' owned by builtin (with replace_toolset)",
    "remove_owner": "owned by builtin (with remove_owner)",
    "deregister": "may not remove tool 'terminal' owned by builtin (with deregister)",
    "set_dispatch_hooks": "may not change the dispatch hooks",
    "set_validation": "may not turn argument validation off",
    "set_permissions": "may not change the operator's permissions",
    "set_approver": "may not set the approver",
    "unload_plugin": "may not unload plugin 'toolreg-audit'",
    "reload_plugins": "may not unload plugins",
    "load_plugins": "may not load plugins",
    "alias": "may not create toolset alias 'evil'",
    "apply_config": "may not apply the operator config",
    "bind_policy": "may not change plugin policies",
}


@pytest.mark.parametrize("action", sorted(INTRUSIONS))
def test_a_pack_may_not_use_public_writes_on_what_it_does_not_own(pack_venv, tmp_path, action):
    wanted = "toolreg-audit,toolreg-intruder"
    config = write_config(tmp_path, AUDIT_BLOCKS_TIME)
    report = plugins(pack_venv, wanted, config, INTRUDE=action)
    intruder, audit = report["toolreg-intruder"], report["toolreg-audit"]
    assert intruder["status"] == "refused", intruder
    assert intruder["reason"].startswith("PermissionError: plugin 'toolreg-intruder'")
    assert INTRUSIONS[action] in intruder["reason"]
    assert intruder["tools_added"] == []
    # The other pack is exactly as it was: loaded, and still blocking.
    assert audit["status"] == "loaded"
    listed = tools(pack_venv, wanted, config, INTRUDE=action)
    assert listed["terminal"]["owner"] == "builtin"
    assert listed["current_time"]["toolset"] == "time"
    done = call(pack_venv, wanted, config, "current_time", tmp_path, INTRUDE=action)
    assert done.returncode == 1
    assert json.loads(done.stdout)["error_type"] == "blocked"


def test_a_claimed_module_name_does_not_borrow_another_packs_consent(pack_venv, tmp_path):
    config = write_config(
        tmp_path, "[plugins.entries.toolreg-sandbox]\nallow_tool_override = true\n"
    )
    wanted = "toolreg-sandbox,toolreg-tailgater"
    report = plugins(pack_venv, wanted, config)
    tailgater = report["toolreg-tailgater"]
    assert tailgater["status"] == "refused"
    assert "plugin 'toolreg-tailgater' may not override tool 'terminal'" in tailgater["reason"]
    assert report["toolreg-sandbox"]["status"] == "loaded"
    assert tools(pack_venv, wanted, config)["terminal"]["owner"] == "toolreg-sandbox"


def test_hooks_apply_to_a_dispatch_method_taken_before_packs_loaded(pack_venv, tmp_path):
    config = write_config(tmp_path, AUDIT_BLOCKS_TIME)
    result = pack_venv.python_json(
        f"""
        import asyncio, json
        import toolreg
        from toolreg import registry
        dispatch, adispatch = registry.dispatch, registry.adispatch
        toolreg.discover_builtin_tools()
        toolreg.load_plugins(toolreg.load_config({str(config)!r}))
        sync = json.loads(dispatch("current_time", {{}}))
        async_ = json.loads(asyncio.run(adispatch("current_time", {{}})))
        unbound = json.loads(toolreg.ToolRegistry.dispatch(registry, "current_time", {{}}))
        print(json.dumps([sync.get("error_type"), async_.get("error_type"),
                          unbound.get("error_type")]))
        """,
        cwd=tmp_path,
        TOOLREG_PLUGINS="toolreg-audit",
    )
    assert result == ["blocked", "blocked", "blocked"]


@pytest.mark.parametrize(
    ("isolation", "how"),
    [("none", "toolset"), ("none", "name"), ("process", "toolset"), ("process", "name"),
     ("process", "bypass")],
)  # fmt: skip
def test_a_pack_may_not_register_into_an_mcp_servers_toolset(pack_venv, tmp_path, isolation, how):
    """``mcp-*`` toolsets and ``mcp__*`` names are MCP servers' alone, consent or not:
    a pack holding ``mcp__victim__z`` would answer that server's calls while it is down.

    Isolated, the pack's own process refuses it first; with that process's gate
    taken out (``bypass``), the host refuses it as it registers the listing.
    """
    pack = "toolreg-mcpsquat"
    config = write_config(
        tmp_path,
        f'[plugins.entries.{pack}]\nisolation = "{isolation}"\nallow_tool_override = true\n'
        + ('env = ["MCPSQUAT"]\n' if isolation == "process" else ""),
    )
    wanted = f"{pack},toolreg-sqlite"
    # Not pack_cli.plugins: an isolated child may still print a BrokenPipeError as it
    # exits, which is another matter than this rule.
    done = pack_venv.run("plugins", "--json", "--config", str(config),
                         TOOLREG_PLUGINS=wanted, MCPSQUAT=how)  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = {entry["id"]: entry for entry in json.loads(done.stdout)}
    item = report[pack]
    rule = "names starting with 'mcp__'" if how == "name" else "toolsets starting with 'mcp-'"
    if how != "bypass":  # the pack's import raised: it is rolled back whole
        assert (item["status"], item["tools_added"]) == ("refused", [])
        reason = item["reason"]
    else:  # the host registers its process's listing tool by tool: that one is refused
        assert (item["status"], item["tools_added"]) == ("loaded", ["mcpsquat_tool"])
        (refusal,) = item["refused"]
        assert refusal["tool"] == "mcp__victim__z"
        reason = refusal["reason"]
    assert "plugin 'toolreg-mcpsquat' may not register tool 'mcp__victim__z'" in reason
    assert rule in reason and "belong to MCP servers alone" in reason
    assert report["toolreg-sqlite"]["status"] == "loaded"
    listed = tools(pack_venv, wanted, config, MCPSQUAT=how)
    assert "mcp__victim__z" not in listed
    assert listed["sqlite_query"]["owner"] == "toolreg-sqlite"
