"""Hook names: the operator's ``hooks`` list withholds the others, and a misspelt one is named."""

from __future__ import annotations

import json
import logging

import pytest

from toolreg import ToolRegistry, parse_config
from toolreg._discovery.entrypoints import PackRecord
from toolreg._loaders.plugins import PluginHost

GUARD = """
from toolreg import hookimpl, registry

SEEN = []

registry.register("echo", "guard", {}, lambda args: "echo")


@hookimpl
def toolreg_pre_tool_call(name, args):
    return "blocked by the guard"


@hookimpl
def toolreg_post_tool_call(name, args, result):
    SEEN.append(name)


@hookimpl
def toolreg_configure(settings):
    SEEN.append("configured")
"""

TYPO = """
from toolreg import hookimpl


@hookimpl
def toolreg_pre_tool_cal(name, args):
    return "never"
"""


@pytest.fixture(autouse=True)
def autoload(monkeypatch):
    monkeypatch.delenv("TOOLREG_DISABLE_PLUGIN_AUTOLOAD", raising=False)


def record(module: str) -> PackRecord:
    return PackRecord(module.replace("_", "-"), module, "1.0", (("main", module),), None, "")


def load(make_package, source: str, config: str = "") -> tuple[ToolRegistry, PluginHost]:
    make_package("guard_pack", source, load=False)
    registry = ToolRegistry()
    host = PluginHost(registry, parse_config(config))
    host.load_all(packs=[record("guard_pack")])
    return registry, host


def test_without_a_hooks_list_every_hook_runs(make_package):
    registry, host = load(make_package, GUARD)
    result = json.loads(registry.dispatch("echo", {}))
    assert result["error_type"] == "blocked"
    outcome = host.report["guard-pack"]
    assert outcome.hooks == [
        "toolreg_configure", "toolreg_post_tool_call", "toolreg_pre_tool_call"
    ]  # fmt: skip
    assert outcome.hooks_withheld == []


def test_a_hooks_list_withholds_the_dispatch_hooks_it_leaves_out(make_package):
    config = '[plugins.entries.guard-pack]\nhooks = ["post_tool_call"]\n'
    registry, host = load(make_package, GUARD, config)
    import guard_pack

    assert registry.dispatch("echo", {}) == "echo"  # the pre hook would have blocked it
    assert guard_pack.SEEN == ["configured", "echo"]  # setup hooks always run
    outcome = host.report["guard-pack"]
    assert outcome.hooks == ["toolreg_configure", "toolreg_post_tool_call"]
    assert outcome.hooks_withheld == ["toolreg_pre_tool_call"]
    assert outcome.to_dict()["hooks_withheld"] == ["toolreg_pre_tool_call"]


def test_an_empty_hooks_list_withholds_every_dispatch_hook(make_package):
    registry, host = load(make_package, GUARD, "[plugins.entries.guard-pack]\nhooks = []\n")
    assert registry.dispatch("echo", {}) == "echo"
    assert registry._dispatcher._dispatch_hooks is None  # no hook layer at all
    assert host.report["guard-pack"].hooks == ["toolreg_configure"]


def test_a_misspelt_hook_in_config_is_warned_with_the_closest_and_withholds(make_package, caplog):
    config = '[plugins.entries.guard-pack]\nhooks = ["pre_tool_cal", "configure"]\n'
    with caplog.at_level(logging.WARNING, logger="toolreg.config"):
        registry, _ = load(make_package, GUARD, config)
    messages = [r.getMessage() for r in caplog.records if r.name == "toolreg.config"]
    assert messages == [
        "plugins.entries.guard-pack.hooks[0]: 'pre_tool_cal' is not a dispatch hook; "
        "did you mean 'pre_tool_call'?",
        "plugins.entries.guard-pack.hooks[1]: 'configure' is a setup hook, which always runs; "
        "hooks lists dispatch hooks: pre_tool_call, post_tool_call, transform_tool_result",
    ]
    assert registry.dispatch("echo", {}) == "echo"  # fail closed: the typo allows nothing


def test_a_misspelt_hook_implementation_fails_the_pack_naming_the_closest(make_package):
    _, host = load(make_package, TYPO)
    outcome = host.report["guard-pack"]
    assert outcome.status == "failed"
    assert "'toolreg_pre_tool_cal' (in guard_pack) is not a toolreg hook" in outcome.reason
    assert "did you mean 'toolreg_pre_tool_call'?" in outcome.reason
