"""The write gate's rules, in process: identity from files, removals, host-only actions, aliases.

Each "pack" is a real package written to disk and imported, bound to a policy
as the loader binds one; the registry under test is handed to its functions.
"""

from __future__ import annotations

import functools
import textwrap
import threading

import pytest
from test_ownership import PACK as OWNERSHIP_PACK

from conftest import schema
from toolreg import ToolRegistry, apply_toolset_config, parse_config
from toolreg._core.plugin_policy import PluginPolicy

# The ownership tests' pack, plus a way to call any registry method from its code.
PACK = (
    OWNERSHIP_PACK
    + """

def call(method, *args):
    return method(*args)


def run_as(source, claimed, reg):
    # exec'd code whose globals claim another module: its frames say "<forged>"
    # as the file, and the claimed name is ignored.
    code = compile(source, "<forged>", "exec")
    exec(code, {"__name__": claimed, "reg": reg, "SCHEMA": SCHEMA})
"""
)

FORGED_NAME = """
__name__ = "other_pack.inner"

SCHEMA = {"parameters": {"type": "object", "properties": {}}}


def handler(args):
    return "forged"


handler.__module__ = "other_pack.inner"


def register(reg, name, override=False):
    return reg.register(name, "forged", SCHEMA, handler, override=override)
"""


@pytest.fixture
def pack(make_package):
    return make_package("gate_pack", PACK)


@pytest.fixture
def builtin(reg: ToolRegistry) -> ToolRegistry:
    reg.register("terminal", "terminal", schema("terminal"), lambda args: "host")
    return reg


# -- identity ----------------------------------------------------------------------------


def test_a_claimed_module_name_loses_to_the_file(builtin, make_package):
    reg = builtin
    reg.register_plugin_override_policy("other_pack", True, plugin_id="toolreg-other", paths=[])
    reg.register_plugin_override_policy("forged_pack", False, plugin_id="toolreg-forged")
    forged = make_package("forged_pack", FORGED_NAME)
    assert forged.register(reg, "fresh") is not None
    assert reg.get_owner("fresh") == "toolreg-forged"
    with pytest.raises(PermissionError, match="plugin 'toolreg-forged' may not override"):
        forged.register(reg, "terminal", override=True)
    assert reg.dispatch("terminal", {}) == "host"


def test_exec_with_forged_globals_is_attributed_through_the_real_frames(builtin, pack):
    reg = builtin
    reg.register_plugin_override_policy("gate_pack", False, plugin_id="toolreg-gate")
    reg.register_plugin_override_policy("other_pack", True, plugin_id="toolreg-other", paths=[])
    source = "reg.register('terminal', 'x', SCHEMA, lambda a: 'exec', override=True)"
    with pytest.raises(PermissionError, match="plugin 'toolreg-gate'"):
        pack.run_as(source, "other_pack.inner", reg)
    pack.run_as("reg.register('via_exec', 'x', SCHEMA, lambda a: 'e')", "other_pack.inner", reg)
    assert reg.get_owner("via_exec") == "toolreg-gate"


def test_a_record_file_belongs_to_its_distribution_not_to_the_directory(reg, make_package):
    # A wheel that drops a module into another pack's package directory does not
    # become that pack: its RECORD names the file, and the RECORD wins.
    victim = make_package("victim_pack", "X = 1\n")
    intruder_file = victim.__path__[0] + "/planted.py"
    with open(intruder_file, "w") as f:
        f.write(textwrap.dedent(PACK))
    reg.register_plugin_override_policy("victim_pack", True, plugin_id="toolreg-victim")
    reg.register_plugin_override_policy(
        "intruder_pack", False, plugin_id="toolreg-intruder", paths=[], files=[intruder_file]
    )
    import victim_pack.planted as planted

    planted.register_plain(reg, "planted_tool")
    assert reg.get_owner("planted_tool") == "toolreg-intruder"


def test_policies_bound_before_the_code_exists_find_it_later(reg, make_package):
    reg.register_plugin_override_policy("late_pack", False, plugin_id="toolreg-late")
    late = make_package("late_pack", PACK)
    late.register_plain(reg, "late_tool")
    assert reg.get_owner("late_tool") == "toolreg-late"


# -- acting for a pack whose code is elsewhere -------------------------------------------


def test_acting_for_owns_and_judges_as_that_pack(builtin):
    reg = builtin
    policy = PluginPolicy(
        "isolated_pack", False, "toolreg-isolated", tool_patterns=("iso_*", "terminal")
    )
    with reg.acting_for(policy):
        reg.register("iso_tool", "iso", schema("iso_tool"), lambda args: "proxy")
        with pytest.raises(PermissionError, match="may not override tool 'terminal'"):
            reg.register("terminal", "iso", schema("terminal"), lambda args: "x", override=True)
        with pytest.raises(PermissionError, match=r"plugins.entries.toolreg-isolated.tools"):
            reg.register("other", "iso", schema("other"), lambda args: "x")
    assert reg.get_owner("iso_tool") == "toolreg-isolated"
    reg.register("after", "host", schema("after"), lambda args: "x")
    assert reg.get_owner("after") == "host", "acting_for ends with its block"
    assert reg.remove_owner("toolreg-isolated") == ["iso_tool"]


def test_acting_for_is_per_thread_and_ends_with_its_block(builtin):
    # A write with no pack bound skips reading its thread's acting_for unless
    # some block is open somewhere: an open one must never be missed.
    reg = builtin
    policy = PluginPolicy("isolated_pack", False, "toolreg-isolated")
    inside, written = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def act() -> None:
        try:
            with reg.acting_for(policy):
                reg.register("early", "iso", schema("early"), lambda args: "x")
                inside.set()
                assert written.wait(60)
                reg.register("late", "iso", schema("late"), lambda args: "x")
        except BaseException as exc:  # reported by the test's own thread
            failures.append(exc)
            inside.set()

    thread = threading.Thread(target=act)
    thread.start()
    assert inside.wait(60)
    reg.register("meanwhile", "host", schema("meanwhile"), lambda args: "x")
    written.set()
    thread.join()
    assert not failures
    with pytest.raises(RuntimeError), reg.acting_for(policy):
        raise RuntimeError("the block fails")
    reg.register("after", "host", schema("after"), lambda args: "x")
    owners = {name: reg.get_owner(name) for name in ("early", "late", "meanwhile", "after")}
    assert owners == {
        "early": "toolreg-isolated",
        "late": "toolreg-isolated",
        "meanwhile": "host",
        "after": "host",
    }


def test_a_pack_may_not_act_for_another(reg, pack):
    reg.register_plugin_override_policy("gate_pack", True, plugin_id="toolreg-gate")
    other = PluginPolicy("x", True, "toolreg-other")
    with pytest.raises(PermissionError, match="may not act for plugin 'toolreg-other'"):
        pack.call(reg.acting_for(other).__enter__)


def test_register_many_from_a_pack_is_judged_like_each_register(builtin, pack):
    """A batch of specs buys a pack nothing the gate would refuse one by one; none is kept."""
    reg = builtin
    reg.register_plugin_override_policy("gate_pack", False, plugin_id="toolreg-gate")

    def handler(args):
        return "pack"

    specs = [
        {"name": "fresh", "toolset": "pack", "schema": schema("fresh"), "handler": handler},
        {
            "name": "terminal",
            "toolset": "pack",
            "schema": schema("terminal"),
            "handler": handler,
            "override": True,
        },
    ]
    with pytest.raises(PermissionError, match="may not override tool 'terminal'"):
        pack.call(reg.register_many, specs)
    assert reg.get_entry("fresh") is None, "the batch is all or nothing"
    assert reg.dispatch("terminal", {}) == "host"
    assert reg.get_owner("terminal") == "host"


def _spec(name, handler):
    return {"name": name, "toolset": "batch", "schema": schema(name), "handler": handler}


def test_a_packs_plain_specs_are_judged_like_each_register(builtin, pack):
    """Specs of exactly name, toolset, schema and handler meet the same gate."""
    reg = builtin
    reg.register_plugin_override_policy(
        "gate_pack", False, plugin_id="toolreg-gate", tool_patterns=("gate_*", "terminal")
    )
    taken = pack.call(reg.register_many, [_spec("terminal", pack.handler)])
    assert taken == [None], "a name the host holds is not taken without override"
    assert reg.get_owner("terminal") == "host" and reg.decisions()[-1].action == "rejected"
    with pytest.raises(PermissionError, match=r"plugins.entries.toolreg-gate.tools"):
        pack.call(reg.register_many, [_spec("gate_ok", pack.handler), _spec("other", pack.handler)])
    assert reg.get_entry("gate_ok") is None, "the batch is all or nothing"
    assert pack.call(reg.register_many, [_spec("gate_ok", pack.handler)])[0] is not None
    assert reg.get_owner("gate_ok") == "toolreg-gate"


def test_register_many_reads_each_handler_and_each_nested_register_afresh(builtin, pack):
    """The stack register_many reads once covers only its own loop's calls."""
    reg = builtin
    reg.register_plugin_override_policy("gate_pack", False, plugin_id="toolreg-gate")

    def specs():
        yield _spec("host_tool", lambda args: "host")
        # Pack code registering a host function while host code feeds the
        # batch: only its own stack shows the pack.
        pack.register_borrowed(reg, "nested", lambda args: "host")
        yield _spec("pack_handler", pack.handler)  # the pack's code, whoever passes it

    reg.register_many(specs())
    owners = {name: reg.get_owner(name) for name in ("host_tool", "nested", "pack_handler")}
    assert owners == {"host_tool": "host", "nested": "toolreg-gate", "pack_handler": "toolreg-gate"}


def test_register_many_names_the_same_owners_as_register_one_by_one(reg):
    """The batch's shortcut for a plain function answers as the full unwrapping does."""
    from toolreg.builtin_tools._common import check_range

    def host(args):
        return "host"

    handlers = {
        "plain_builtin": check_range,
        "wrapped_builtin": functools.wraps(check_range)(lambda args: "host"),
        "plain_host": host,
        "partial_of_builtin": functools.partial(check_range),
        "host_with_attributes": functools.wraps(host)(lambda args: "host"),
    }
    reg.register_many([_spec(f"b_{name}", h) for name, h in handlers.items()])
    for name, handler in handlers.items():
        reg.register(f"o_{name}", "one", schema(f"o_{name}"), handler)
    owners = {name: (reg.get_owner(f"b_{name}"), reg.get_owner(f"o_{name}")) for name in handlers}
    assert owners == {
        "plain_builtin": ("builtin", "builtin"),
        "wrapped_builtin": ("builtin", "builtin"),
        "plain_host": ("host", "host"),
        "partial_of_builtin": ("builtin", "builtin"),
        "host_with_attributes": ("host", "host"),
    }


def test_register_many_sees_a_policy_bound_half_way(reg, pack):
    """A pack's register_many whose host-made specs bind the pack's policy half-way."""

    def specs():
        yield _spec("before", lambda args: "x")
        reg.register_plugin_override_policy("gate_pack", False, plugin_id="toolreg-gate")
        yield _spec("after", lambda args: "x")

    pack.call(reg.register_many, specs())
    assert (reg.get_owner("before"), reg.get_owner("after")) == ("host", "toolreg-gate")


def test_register_many_sees_acting_for_entered_half_way(builtin):
    reg = builtin
    policy = reg.register_plugin_override_policy("isolated_pack", False, plugin_id="toolreg-iso")

    def specs():
        yield _spec("mine", lambda args: "x")
        with reg.acting_for(policy):
            yield _spec("terminal", lambda args: "x") | {"override": True}

    with pytest.raises(PermissionError, match="plugin 'toolreg-iso' may not override"):
        reg.register_many(specs())
    assert reg.get_entry("mine") is None, "the batch is all or nothing"
    assert reg.get_owner("terminal") == "host"


# -- removals ----------------------------------------------------------------------------


def test_a_pack_removes_its_own_tools_but_not_others(builtin, pack):
    reg = builtin
    reg.register_plugin_override_policy("gate_pack", False, plugin_id="toolreg-gate")
    pack.register_plain(reg, "mine")
    assert pack.call(reg.remove_owner, "toolreg-gate") == ["mine"]
    with pytest.raises(PermissionError, match="owned by host \\(with remove_owner\\)"):
        pack.call(reg.remove_owner, "host")
    with pytest.raises(PermissionError, match="with replace_toolset"):
        pack.call(reg.replace_toolset, "terminal", [])
    assert reg.dispatch("terminal", {}) == "host"
    rejected = [d for d in reg.decisions() if d.action == "rejected"]
    assert [(d.owner, d.tool) for d in rejected] == [("toolreg-gate", "terminal")] * 2


def test_operator_consent_lets_a_pack_remove_others_tools(builtin, pack):
    reg = builtin
    reg.register_plugin_override_policy("gate_pack", True, plugin_id="toolreg-gate")
    assert pack.call(reg.deregister, "terminal") is True


# -- host-only actions -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "args", "what"),
    [
        ("set_validation", (False,), "turn argument validation off"),
        ("set_validation", (True,), "turn argument validation on"),
        ("set_dispatch_hooks", (None,), "change the dispatch hooks"),
        ("register_toolset_alias", ("evil", "terminal"), "create toolset alias 'evil'"),
        ("remove_plugin_override_policy", ("gate_pack",), "change plugin policies"),
        ("batch", (), "hold the table for a batch"),
    ],
)
# The dispatcher is made on first use: a setting asked for before and after it exists.
@pytest.mark.parametrize("dispatched", [False, True], ids=["no-dispatch-yet", "after-dispatch"])
def test_host_actions_are_refused_to_packs_even_with_consent(
    builtin, pack, method, args, what, dispatched
):
    reg = builtin
    if dispatched:
        assert reg.dispatch("terminal", {}) == "host"
    reg.register_plugin_override_policy("gate_pack", True, plugin_id="toolreg-gate")
    with pytest.raises(PermissionError, match=f"plugin 'toolreg-gate' may not {what}"):
        pack.call(getattr(reg, method), *args)
    assert reg.validation_enabled and reg.get_toolset_aliases() == {}
    assert reg.get_plugin_policy("gate_pack") is not None
    last = reg.decisions()[-1]
    assert (last.action, last.owner) == ("rejected", "toolreg-gate")
    assert what in last.reason


# -- MCP servers' toolsets and names ---------------------------------------------------


MCP_ONLY = "belong to MCP servers alone"


@pytest.fixture
def victim(builtin: ToolRegistry) -> ToolRegistry:
    """An MCP server's toolset, with an alias the config gave it; the pack has consent."""
    reg = builtin
    reg.register("mcp__victim__a", "mcp-victim", schema("mcp__victim__a"), lambda args: "mcp")
    reg.register_toolset_alias("victim", "mcp-victim")
    reg.register_plugin_override_policy("gate_pack", True, plugin_id="toolreg-gate")
    return reg


@pytest.mark.parametrize(
    ("name", "toolset", "rule"),
    [
        ("mcp__victim__z", "mcp-victim", "toolsets starting with 'mcp-'"),  # the server is down
        ("plain", "mcp-victim", "toolsets starting with 'mcp-'"),
        ("plain", "mcp-nobody", "toolsets starting with 'mcp-'"),  # not yet connected
        ("mcp__victim__z", "pack", "tool names starting with 'mcp__'"),
        ("mcp__victim__a", "mcp-victim", "toolsets starting with 'mcp-'"),  # the live one
        ("plain", "victim", "'victim' is an alias of 'mcp-victim'"),
    ],
)
def test_a_pack_may_not_register_into_an_mcp_servers_toolset_or_name(
    victim, pack, name, toolset, rule
):
    reg = victim
    for override in (False, True):  # consent to override is no consent to this
        with pytest.raises(PermissionError, match=MCP_ONLY) as raised:
            register = functools.partial(reg.register, override=override)
            pack.call(register, name, toolset, schema(name), pack.handler)
        assert f"plugin 'toolreg-gate' may not register tool {name!r}" in str(raised.value)
        assert rule in str(raised.value)
    assert reg.get_entry(name) is None or reg.get_owner(name) == "mcp:victim"
    assert reg.get_tool_names_for_toolset("mcp-victim") == ["mcp__victim__a"]
    assert reg.dispatch("mcp__victim__a", {}) == "mcp"
    last = reg.decisions()[-1]
    assert (last.action, last.owner) == ("rejected", "toolreg-gate")


def test_register_many_and_replace_toolset_may_not_reach_an_mcp_toolset(victim, pack):
    from toolreg import ToolEntry

    reg = victim
    specs = [_spec("gate_ok", pack.handler)]
    specs.append({**_spec("mcp__victim__z", pack.handler), "toolset": "mcp-victim"})
    with pytest.raises(PermissionError, match=MCP_ONLY):
        pack.call(reg.register_many, specs)
    assert reg.get_entry("gate_ok") is None, "the batch is all or nothing"
    for entries in (
        [ToolEntry("mcp__victim__a", "mcp-victim", schema("mcp__victim__a"), pack.handler)],
        [ToolEntry("mcp__victim__z", "mcp-victim", schema("mcp__victim__z"), pack.handler)],
        [ToolEntry("mcp__gone__z", "mcp-gone", schema("mcp__gone__z"), pack.handler)],
    ):
        with pytest.raises(PermissionError, match=MCP_ONLY):
            pack.call(reg.replace_toolset, entries[0].toolset, entries)
    assert reg.get_tool_names_for_toolset("mcp-victim") == ["mcp__victim__a"]
    assert reg.get_owner("mcp__victim__a") == "mcp:victim"
    assert reg.dispatch("mcp__victim__a", {}) == "mcp"


def test_host_code_acting_for_a_pack_may_not_reach_an_mcp_toolset(victim):
    """An isolated pack's tools arrive through acting_for: the same rule."""
    reg = victim
    taken = "mcp__victim__z"
    policy = PluginPolicy("isolated_pack", True, "toolreg-isolated")
    with reg.acting_for(policy):
        with pytest.raises(PermissionError, match="plugin 'toolreg-isolated' may not register"):
            reg.register("mcp__victim__z", "mcp-victim", schema(taken), lambda args: "x")
        with pytest.raises(PermissionError, match=MCP_ONLY):
            reg.register("mcp__victim__z", "iso", schema(taken), lambda args: "x")
        reg.register("iso_tool", "iso", schema("iso_tool"), lambda args: "x")
    assert reg.get_owner("iso_tool") == "toolreg-isolated"
    # The host and MCP servers themselves keep their rules: a refresh, another server.
    reg.register("mcp__victim__z", "mcp-victim", schema(taken), lambda args: "host")
    reg.register("mcp__other__a", "mcp-other", schema("mcp__other__a"), lambda args: "other")
    assert reg.get_owner("mcp__victim__z") == "mcp:victim"


# -- aliases -----------------------------------------------------------------------------


def test_replace_toolset_refreshes_names_it_holds_only_for_host_code(builtin, pack):
    """The refresh rule is the gate's: host code swapping a toolset keeps its names;
    a pack's swap of the host's toolset is judged like any register, and refused."""
    from toolreg import ToolEntry

    reg = builtin
    reg.register_plugin_override_policy("gate_pack", False, plugin_id="toolreg-gate")
    pack.call(reg.register, "packed", "shared", schema("packed"), pack.handler)
    assert reg.get_owner("packed") == "toolreg-gate"
    fresh = ToolEntry("packed", "shared", schema("packed"), lambda args: "host again")
    assert reg.replace_toolset("shared", [fresh]) == ["packed"]
    assert reg.dispatch("packed", {}) == "host again" and reg.decisions()[-1].action == "replaced"
    taken = ToolEntry("terminal", "terminal", schema("terminal"), pack.handler)
    with pytest.raises(PermissionError, match="may not remove tool 'terminal'"):
        pack.call(reg.replace_toolset, "terminal", [taken])
    assert reg.dispatch("terminal", {}) == "host" and reg.get_owner("terminal") == "host"
    assert reg.decisions()[-2].action == "rejected", "the gate judged the pack's entry"


def test_an_alias_may_not_hide_a_toolset_or_take_an_mcp_name(builtin):
    reg = builtin
    reg.register("now", "time", schema("now"), lambda args: "t")
    with pytest.raises(ValueError, match="would hide the toolset"):
        reg.register_toolset_alias("time", "terminal")
    with pytest.raises(ValueError, match="belong to MCP servers"):
        reg.register_toolset_alias("mcp-srv", "terminal")
    with pytest.raises(ValueError, match="there is no toolset 'nothing'"):
        reg.register_toolset_alias("ghost", "nothing")


def test_registering_into_an_alias_is_rejected_not_redirected(builtin):
    reg = builtin
    reg.register("mcp__srv__a", "mcp-srv", schema("mcp__srv__a"), lambda args: "a")
    reg.register_toolset_alias("srv", "mcp-srv")
    assert reg.register("b", "srv", schema("b"), lambda args: "b") is None
    assert reg.get_tool_names_for_toolset("srv") == ["mcp__srv__a"]
    assert "is an alias of 'mcp-srv'" in reg.decisions()[-1].reason


def test_an_alias_dies_with_the_last_tool_of_its_toolset(builtin):
    reg = builtin
    reg.register("mcp__srv__a", "mcp-srv", schema("mcp__srv__a"), lambda args: "a")
    reg.register_toolset_alias("srv", "mcp-srv")
    reg.replace_toolset("mcp-srv", [])
    assert reg.get_toolset_aliases() == {}
    # A later toolset of the alias's name is its own, not hidden by a stale alias.
    reg.register("own", "srv", schema("own"), lambda args: "own")
    assert reg.get_tool_names_for_toolset("srv") == ["own"]


def test_operator_switches_resolve_aliases_first(builtin):
    reg = builtin
    reg.register("now", "time", schema("now"), lambda args: "t")
    config = parse_config('[toolsets]\ndisabled = ["clock"]\naliases = { clock = "time" }\n')
    assert apply_toolset_config(config, reg) == ["now"]
    assert reg.get_entry("terminal") is not None


def test_a_pack_may_not_start_refresh_or_stop_mcp_servers(reg, pack):
    """The MCP manager's own methods ask the gate too, not only start_mcp/stop_mcp."""
    from toolreg import McpManager, start_mcp, stop_mcp
    from toolreg._policy.config_mcp import McpConfig

    reg.register_plugin_override_policy("gate_pack", True, plugin_id="toolreg-gate")
    with pytest.raises(PermissionError, match="may not start MCP servers"):
        pack.call(start_mcp, McpConfig(), reg)
    manager = McpManager([], reg)
    with pytest.raises(PermissionError, match="may not start MCP servers"):
        pack.call(manager.start)
    manager.start()  # the host may
    try:
        with pytest.raises(PermissionError, match="may not refresh an MCP server"):
            pack.call(manager.refresh, "any")
        with pytest.raises(PermissionError, match="may not stop MCP servers"):
            pack.call(manager.stop)
        assert manager._thread.is_alive(), "a refused stop stopped nothing"
    finally:
        manager.stop()
        stop_mcp(reg)
    refused = [d.reason for d in reg.decisions() if d.owner == "toolreg-gate"]
    assert len(refused) == 4


def _host_helper(reg, depth):
    # Host code many frames deep, which the pack's code called.
    if depth:
        return _host_helper(reg, depth - 1)
    return reg.register("terminal", "x", schema("terminal"), lambda args: "x", override=True)


def test_a_pack_frame_far_out_on_the_stack_still_counts(builtin, pack):
    # The walk reads every frame to the outermost: pack code that reaches the
    # registry through any depth of host code is still the pack's.
    reg = builtin
    reg.register_plugin_override_policy("gate_pack", False, plugin_id="toolreg-gate")
    with pytest.raises(PermissionError, match="plugin 'toolreg-gate' may not override"):
        pack.call(_host_helper, reg, 60)
    assert reg.dispatch("terminal", {}) == "host"


# -- toolreg.lock: a locked pack writes only the definitions it locked --------------------


def _locked(name: str, description: str) -> dict[str, str]:
    """``locked_tools`` for a tool ``name`` as registered with ``description``."""
    from toolreg._contract.definition_digest import digest, entry_definition

    scratch = ToolRegistry()
    scratch.register(name, "pack", schema(name), lambda args: "x", description=description)
    return {name: digest(entry_definition(scratch.get_entry(name)))}


def test_the_gate_withholds_a_locked_packs_drifted_tool_by_every_write_path(builtin, pack):
    from toolreg._core.gate import DRIFTED, judge
    from toolreg._core.ownership import Owner

    reg = builtin
    locked = _locked("gate_tool", "As reviewed.")
    policy = PluginPolicy("gate_pack", False, "toolreg-gate", locked_tools=locked)
    scratch = ToolRegistry()
    scratch.register("gate_tool", "pack", schema("gate_tool"), pack.handler, description="Now.")
    owner = Owner("toolreg-gate", policy)
    ruling = judge(scratch.get_entry("gate_tool"), owner, [policy], False, None, None)
    assert ruling.action is None and not ruling.refuse, "withheld, not refused: the pack loads on"
    for words in ("'gate_tool'", "'toolreg-gate'", DRIFTED, "`toolreg lock --update toolreg-gate`"):
        assert words in ruling.reason
    reg.register_plugin_override_policy(
        "gate_pack", False, plugin_id="toolreg-gate", locked_tools=locked
    )

    def spec(name: str, description: str) -> dict:
        return {**_spec(name, pack.handler), "toolset": "pack", "description": description}

    assert pack.call(reg.register, "gate_tool", "pack", schema("gate_tool"), pack.handler) is None
    assert pack.call(reg.register_many, [spec("gate_tool", "Changed.")]) == [None]
    assert pack.call(reg.register_many, [spec("gate_new", "As reviewed.")]) == [None]
    entry = scratch.get_entry("gate_tool")
    assert pack.call(reg.replace_toolset, "pack", [entry]) == []
    with reg.acting_for(PluginPolicy("iso", False, "toolreg-iso", locked_tools=locked)):
        assert reg.register("gate_tool", "pack", schema("gate_tool"), lambda a: "x") is None
    assert reg.get_entry("gate_tool") is None
    reasons = [d.reason for d in reg.decisions() if d.action == "rejected"]
    assert len(reasons) == 5 and all(DRIFTED in r for r in reasons)
    assert "the lock has no such tool" in reasons[2]
    # The definition as locked passes, by each path; a policy without a lock holds nothing.
    taken = pack.call(reg.register_many, [spec("gate_tool", "As reviewed.")])
    assert taken[0] is not None and reg.get_owner("gate_tool") == "toolreg-gate"
    assert PluginPolicy("x", False, "x").locked_tools is None
