"""The server inside an isolated pack's process, driven in-process (no MCP transport)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("mcp")

from toolreg import PluginOutcome, is_tool_error  # noqa: E402
from toolreg._loaders.hook_runner import HookImpl, HookRunner  # noqa: E402
from toolreg._loaders.isolated_child_server import PackServer, StagingRegistry  # noqa: E402
from toolreg._loaders.isolated_wire import read_listing  # noqa: E402
from toolreg._mcp_serve.server import NotOffered  # noqa: E402

SCHEMA = {"parameters": {"type": "object", "properties": {}}}


def test_staging_registry_remembers_override_however_it_is_passed():
    registry = StagingRegistry()
    registry.register("a", "ts", SCHEMA, lambda args: "a", override=True)
    registry.register("b", "ts", SCHEMA, lambda args: "b")
    positional = (None, None, False, "", "", None, None, True)  # ... override=True
    registry.register("c", "ts", SCHEMA, lambda args: "c", *positional)
    assert registry.asked_override == {"a": True, "b": False, "c": True}


def hook(function) -> HookImpl:
    names = function.__code__.co_varnames[: function.__code__.co_argcount]
    return HookImpl("p", function, names)


def server(runner: HookRunner | None = None) -> PackServer:
    registry = StagingRegistry()
    outcome = PluginOutcome("p", "", "", "", hooks=["toolreg_pre_tool_call"])
    return PackServer(registry, outcome, runner)


def test_only_the_packs_own_tools_are_listed_with_meta():
    pack = server()
    registry = pack.registry
    registry.register("borrowed", "terminal", SCHEMA, lambda args: "not the pack's")
    policy = registry.register_plugin_override_policy("x", True, plugin_id="p", paths=[])
    with registry.acting_for(policy):
        registry.register("own", "ts", SCHEMA, lambda args: "own", override=True)
    manifest = read_listing("p", json.loads(pack.definitions_json()))
    assert [(t.name, t.toolset, t.override) for t in manifest.tools] == [("own", "ts", True)]
    assert manifest.status == "loaded"
    with pytest.raises(NotOffered):  # a tool the pack does not own is not offered
        pack.dispatch("borrowed", {})
    assert pack.dispatch("own", {}) == "own"


def test_forwarded_hooks_combine_like_the_parents_runner():
    seen = []
    runner = HookRunner(
        [hook(lambda name, args: None), hook(lambda name, args: "no " + name)],
        [hook(lambda name, args, result: seen.append(result))],
        [hook(lambda name, args, result: None), hook(lambda name, args, result: result * 2)],
        timeout=0,
    )
    pack = server(runner)
    value = {"name": "t", "args": {}, "result": "r"}

    def call(name: str) -> object:
        return json.loads(pack.dispatch(f"toolreg/hook/{name}", value))["value"]

    assert call("toolreg_pre_tool_call") == "no t", "None passes, the first message blocks"
    assert call("toolreg_post_tool_call") is None and seen == ["r"]
    assert call("toolreg_transform_tool_result") == "rr"


def test_a_raising_hook_and_an_unknown_hook_are_tool_errors():
    def explode(name, args):
        raise RuntimeError("hook exploded")

    pack = server(HookRunner([hook(explode)], [], [], timeout=0))
    answer = pack.dispatch("toolreg/hook/toolreg_pre_tool_call", {"name": "t", "args": {}})
    assert is_tool_error(answer) and "RuntimeError: hook exploded" in answer
    assert is_tool_error(pack.dispatch("toolreg/hook/toolreg_nope", {"name": "t", "args": {}}))
    assert is_tool_error(server(None).dispatch("toolreg/hook/toolreg_pre_tool_call", {}))


def test_the_pack_servers_dispatch_takes_what_serve_passes():
    """serve calls ``dispatch`` with every argument ``ToolServer.dispatch`` takes; an
    override that lags behind made every isolated call an internal error."""
    import inspect

    from toolreg._mcp_serve.server import ToolServer

    theirs = inspect.signature(ToolServer.dispatch).parameters
    inspect.signature(PackServer.dispatch).bind(*[None] * len(theirs))  # raises if not
