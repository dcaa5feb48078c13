"""Decisions read back from the log; PluginPolicy is defined on first use, under its old path too."""

from __future__ import annotations

import subprocess
import sys

import toolreg
from toolreg import ToolRegistry
from toolreg._core import decisions, ownership, plugin_policy


def test_the_old_import_paths_give_the_same_classes():
    assert decisions.Decision is toolreg.Decision
    assert ownership.PluginPolicy is plugin_policy.PluginPolicy is toolreg.PluginPolicy


def test_an_unknown_name_is_still_an_attribute_error():
    for module in (ownership,):
        try:
            module.NoSuchThing  # noqa: B018
        except AttributeError as exc:
            assert "NoSuchThing" in str(exc)
        else:
            raise AssertionError(f"{module.__name__} made up a NoSuchThing")


def test_a_registry_defines_plugin_policy_only_when_a_plugin_is_bound():
    code = """
import sys
from toolreg import ToolRegistry
r = ToolRegistry()
r.register("t", "s", {"name": "t", "description": "d", "parameters": {"type": "object"}}, str)
assert "toolreg._core.plugin_policy" not in sys.modules
(d,) = r.decisions()
from toolreg._core.decisions import Decision
assert type(d) is Decision and d.tool == "t", d
r.register_plugin_override_policy("somepack", False)
assert "toolreg._core.plugin_policy" in sys.modules
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_decisions_read_back_as_before():
    registry = ToolRegistry()
    schema = {"name": "t", "description": "d", "parameters": {"type": "object"}}
    registry.register("t", "s", schema, str)
    registry.register("t", "s", schema, str)
    first, second = registry.decisions()
    assert (first.action, second.action) == ("registered", "replaced")
    assert second.seq > first.seq and second.to_dict()["tool"] == "t"
    assert "replaced" not in second.to_dict() and second.replaced is not None
