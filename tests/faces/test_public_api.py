"""The public face: ``toolreg`` exports exactly ``__all__``, under its own name."""

from __future__ import annotations

import subprocess
import sys
import types

import toolreg


def test_the_exported_names_are_exactly_all():
    public = {
        name
        for name in dir(toolreg)
        if not name.startswith("_") and not isinstance(getattr(toolreg, name), types.ModuleType)
    }
    assert public == set(toolreg.__all__) - {"__version__"}
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


def modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter has loaded after ``code``, beyond its own start-up."""
    script = (
        "import sys\n"
        "before = set(sys.modules)\n"
        f"{code}\n"
        "print('\\n'.join(sorted(set(sys.modules) - before)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], check=True, timeout=60, capture_output=True, text=True
    )
    return set(out.stdout.split())


#: What the registry must not pull in: loading, config, hooks, validators,
#: docstrings, metadata, MCP and the network stack each load when first used.
NOT_FOR_THE_REGISTRY = {
    "pluggy",
    "tomllib",
    "tomli",
    "fastjsonschema",
    "regex",
    "docstring_parser",
    "importlib_metadata",
    "importlib.metadata",
    "packaging",
    "http.client",
    "ssl",
    "email",
    "subprocess",
    "mcp",
    "toolreg._loaders",
    "toolreg._policy",
    "toolreg._discovery",
    "toolreg._authoring",
    "toolreg._mcp",
    "toolreg._mcp_serve",
}


def unwanted(loaded: set[str]) -> set[str]:
    return {m for m in loaded if any(m == u or m.startswith(u + ".") for u in NOT_FOR_THE_REGISTRY)}


def test_import_toolreg_loads_nothing_but_its_version():
    assert modules_after("import toolreg") == {
        "toolreg",
        "toolreg._contract",
        "toolreg._contract.version",
    }


def test_a_registry_pointed_at_before_first_use_is_never_replaced_by_the_lazy_one():
    code = (
        "import toolreg\n"
        "mine = object()\n"
        "toolreg.registry = mine  # as a loader does, before anything touched the name\n"
        "assert toolreg.ToolRegistry.__module__ == 'toolreg'  # loads the registry module\n"
        "assert toolreg.registry is mine\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_the_registry_loads_neither_loaders_config_nor_validators_until_used():
    loaded = modules_after(
        "from toolreg import ToolRegistry\n"
        "reg = ToolRegistry()\n"
        "params = {'type': 'object', 'properties': {'n': {'type': 'integer'}}}\n"
        "reg.register('t', 'ts', {'parameters': params}, lambda args: 'ok', validate=False)\n"
        "assert reg.get_definitions() and reg.dispatch('t', {'n': 1}) == 'ok'\n"
    )
    assert "toolreg._registry.registry" in loaded
    assert not unwanted(loaded)

    validated = modules_after(
        "from toolreg import ToolRegistry\n"
        "reg = ToolRegistry()\n"
        "params = {'type': 'object', 'properties': {'n': {'type': 'integer'}}}\n"
        "reg.register('t', 'ts', {'parameters': params}, lambda args: 'ok')\n"
        "assert 'must be integer' in reg.dispatch('t', {'n': 'x'})\n"
    )
    assert "fastjsonschema" in validated  # the first validated call compiles its checker
