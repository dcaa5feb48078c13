"""The plugin host in-process: dispatch hooks, fail-closed, unload.

Packs here are real packages imported from disk; the pack records are built by
hand, since finding them through entry points has its own tests
(test_entrypoints.py) and the end-to-end ones install real wheels
(test_plugins.py).
"""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

from conftest import pack_record as record
from toolreg import ToolRegistry, parse_config
from toolreg._loaders.plugins import PluginHost

HOOKS = """
import time
from toolreg import hookimpl, registry

CALLS = []

registry.register("echo", "{name}", {{}}, lambda args: "echo:" + str(args.get("x", "")))


@hookimpl
def toolreg_configure(settings):
    CALLS.append(("configure", dict(settings)))


@hookimpl
def toolreg_pre_tool_call(name, args):
    mode = args.get("mode")
    if mode == "block":
        return "no, said {name}"
    if mode == "block-dict":
        return {{"block": True, "message": "dict block"}}
    if mode == "raise-pre":
        raise RuntimeError("pre exploded")
    if mode == "slow":
        time.sleep(2)
    if mode == "exit-pre":
        raise SystemExit(9)
    if mode == "unprintable-verdict":
        return Unprintable()
    if mode == "tamper":
        registry.set_validation(False)
    return None


@hookimpl
def toolreg_post_tool_call(name, args, result):
    CALLS.append(("post", name, result))
    if args.get("mode") == "raise-post":
        raise RuntimeError("post exploded")
    if args.get("mode") == "exit-post":
        raise SystemExit(8)


@hookimpl
def toolreg_transform_tool_result(name, args, result):
    if args.get("mode") == "transform":
        return result.upper()
    if args.get("mode") == "transform-dict":
        return {{"not": "multimodal"}}
    if args.get("mode") == "transform-multimodal":
        return {{"_multimodal": True, "content": [{{"type": "text", "text": result}}]}}
    if args.get("mode") == "transform-evil-str":
        return EvilStr("replaced")
    return None


class Unprintable:
    def __str__(self):
        raise RuntimeError("cannot say why")


class EvilStr(str):
    def __str__(self):
        raise RuntimeError("str exploded")
"""


@pytest.fixture(autouse=True)
def autoload(monkeypatch):
    """The suite turns pack autoload off; these tests hand the host their packs."""
    monkeypatch.delenv("TOOLREG_DISABLE_PLUGIN_AUTOLOAD", raising=False)


@pytest.fixture
def hooked(make_package):
    make_package("hook_pack", HOOKS.format(name="hook_pack"), load=False)
    reg = ToolRegistry()
    config = parse_config(
        "[plugins]\nhook_timeout = 0.5\n[plugins.entries.hook-pack.settings]\nlevel = 3\n"
    )
    host = PluginHost(reg, config)
    report = host.load_all(packs=[record("hook_pack")])
    assert report["hook-pack"].status == "loaded", report["hook-pack"].reason
    return reg, host, sys.modules["hook_pack"]


def test_no_hooks_means_the_plain_dispatch_method(make_package):
    source = 'from toolreg import registry\nregistry.register("p", "p", {}, str)\n'
    make_package("plain_pack", source, load=False)
    reg = ToolRegistry()
    PluginHost(reg, parse_config("")).load_all(packs=[record("plain_pack")])
    assert reg.get_entry("p") is not None
    assert reg._dispatcher._dispatch_hooks is None, (
        "no pack implements a dispatch hook: no hook layer"
    )


def test_a_refusal_after_loading_shows_in_the_report_and_changes_nothing(hooked):
    reg, host, _ = hooked
    result = json.loads(reg.dispatch("echo", {"mode": "tamper"}))
    assert result["error_type"] == "blocked"  # the hook raised: fail closed
    assert "may not turn argument validation off" in result["error"]
    assert reg.validation_enabled
    outcome = host.report["hook-pack"]
    assert outcome.status == "loaded"
    assert [r["reason"] for r in outcome.refused] == [
        "plugin 'hook-pack' may not turn argument validation off: that is for the host "
        "application, never for plugin code"
    ]


def test_configure_receives_the_operator_settings(hooked):
    _, _, module = hooked
    assert ("configure", {"level": 3}) in module.CALLS


@pytest.mark.parametrize(
    ("mode", "message"), [("block", "no, said hook_pack"), ("block-dict", "dict block")]
)
def test_pre_hook_blocks_without_running_the_handler(hooked, mode, message):
    reg, _, module = hooked
    result = json.loads(reg.dispatch("echo", {"mode": mode}))
    assert result["error"] == message and result["error_type"] == "blocked"
    assert not [c for c in module.CALLS if c[0] == "post"], "blocked calls never ran"


def test_post_hook_sees_the_result_and_transform_replaces_it(hooked):
    reg, _, module = hooked
    assert reg.dispatch("echo", {"x": "hi"}) == "echo:hi"
    assert ("post", "echo", "echo:hi") in module.CALLS
    assert reg.dispatch("echo", {"x": "hi", "mode": "transform"}) == "ECHO:HI"


def test_transform_may_return_a_multimodal_dict_but_no_other_dict(hooked):
    reg, _, _ = hooked
    multimodal = reg.dispatch("echo", {"x": "hi", "mode": "transform-multimodal"})
    assert multimodal == {"_multimodal": True, "content": [{"type": "text", "text": "echo:hi"}]}
    blocked = json.loads(reg.dispatch("echo", {"x": "hi", "mode": "transform-dict"}))
    assert blocked["error_type"] == "blocked" and "hook-pack" in blocked["error"]


@pytest.mark.parametrize(
    ("mode", "fragment"),
    [("raise-pre", "pre exploded"), ("raise-post", "post exploded"), ("slow", "within 0.5s")],
)
def test_failing_or_slow_hooks_fail_closed_and_are_reported(hooked, mode, fragment):
    reg, host, _ = hooked
    result = json.loads(reg.dispatch("echo", {"mode": mode}))
    assert fragment in result["error"] and "hook-pack" in result["error"]
    failure = host.hook_failures()[-1]
    assert failure.plugin_id == "hook-pack" and failure.tool == "echo"


def test_async_dispatch_runs_the_hooks_too(hooked):
    reg, _, _ = hooked
    result = asyncio.run(reg.adispatch("echo", {"mode": "block"}))
    assert json.loads(result)["error"] == "no, said hook_pack"
    assert asyncio.run(reg.adispatch("echo", {"x": 1})) == "echo:1"


def test_unload_removes_tools_and_the_hook_layer(hooked):
    reg, host, _ = hooked
    assert host.unload("hook-pack") is True
    assert reg.get_entry("echo") is None
    assert reg._dispatcher._dispatch_hooks is None, "the hook layer goes with its pack"
    assert host.unload("hook-pack") is False


def test_unknown_hook_name_fails_the_pack(make_package):
    make_package(
        "typo_pack",
        "from toolreg import hookimpl\n\n@hookimpl\ndef toolreg_pre_tool_cal(name):\n    pass\n",
        load=False,
    )
    report = PluginHost(ToolRegistry(), parse_config("")).load_all(packs=[record("typo_pack")])
    assert report["typo-pack"].status == "failed"
    assert "toolreg_pre_tool_cal" in report["typo-pack"].reason


@pytest.mark.parametrize("mode", ["exit-pre", "exit-post"])
@pytest.mark.parametrize("is_async", [False, True])
def test_a_hook_calling_sys_exit_blocks_the_call_and_never_exits(hooked, mode, is_async):
    reg, host, _ = hooked
    call = asyncio.run(reg.adispatch("echo", {"mode": mode})) if is_async else None
    result = json.loads(call or reg.dispatch("echo", {"mode": mode}))
    assert result["error_type"] == "blocked" and "SystemExit" in result["error"]
    assert host.hook_failures()[-1].error.startswith("SystemExit")
    assert reg.dispatch("echo", {"x": "still"}) == "echo:still"


def test_a_verdict_that_cannot_be_printed_still_blocks(hooked):
    reg, _, _ = hooked
    result = json.loads(reg.dispatch("echo", {"mode": "unprintable-verdict"}))
    assert result["error_type"] == "blocked" and "unprintable" in result["error"]


def test_a_transform_returning_a_str_subclass_gives_a_plain_str(hooked):
    reg, _, _ = hooked
    out = reg.dispatch("echo", {"mode": "transform-evil-str"})
    assert type(out) is str and out == "replaced"


def test_a_hook_sys_exit_with_no_deadline_never_exits_either(make_package):
    make_package("inline_exit_pack", HOOKS.format(name="inline_exit_pack"), load=False)
    reg = ToolRegistry()
    host = PluginHost(reg, parse_config("[plugins]\nhook_timeout = 0\n"))
    host.load_all(packs=[record("inline_exit_pack")])
    result = json.loads(reg.dispatch("echo", {"mode": "exit-pre"}))
    assert result["error_type"] == "blocked" and "SystemExit: 9" in result["error"]
