"""The public face: ``toolreg`` exports exactly ``__all__``, under its own name."""

from __future__ import annotations

import subprocess
import sys
import types

import toolreg


def test_the_exported_names_are_exactly_all():
    public = {
        name
        for name, value in vars(toolreg).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    lazy = {"McpManager", "ReconnectPolicy"}  # resolved on first use (the MCP SDK)
    assert public | lazy == set(toolreg.__all__) - {"__version__"}
    assert len(toolreg.__all__) == len(set(toolreg.__all__))


def test_exported_definitions_report_module_toolreg():
    for name in toolreg.__all__:
        value = getattr(toolreg, name)
        if isinstance(value, type) or hasattr(value, "__code__"):
            assert value.__module__ == "toolreg", name
    assert repr(toolreg.ToolRegistry) == "<class 'toolreg.ToolRegistry'>"


def test_types_public_functions_return_are_exported():
    host = toolreg.PluginHost(toolreg.ToolRegistry(), toolreg.Config())
    assert isinstance(host, toolreg.PluginHost)
    reg = toolreg.ToolRegistry()
    reg.register("t", "ts", {}, lambda args: "x", timeout=1.0)
    assert isinstance(reg.get_options("t"), toolreg.ToolOptions)


def test_the_mcp_types_load_only_when_asked_for():
    code = (
        "import sys, toolreg\n"
        "assert 'mcp' not in sys.modules\n"
        "policy = toolreg.ReconnectPolicy(initial_delay=0.1)\n"
        "assert type(policy).__module__ == 'toolreg' and 'mcp' in sys.modules\n"
        "try:\n"
        "    toolreg.NoSuchThing\n"
        "except AttributeError as exc:\n"
        "    assert 'NoSuchThing' in str(exc)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
