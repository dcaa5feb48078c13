"""The public face: ``toolreg`` exports exactly ``__all__``, under its own name."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import textwrap
import types

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import toolreg

#: Public attributes that need an extra (``mcp``), so ``__all__`` leaves them out.
OPTIONAL = {"McpManager", "ReconnectPolicy"}


def test_the_exported_names_are_exactly_all_and_the_optional_ones():
    public = {
        name
        for name in dir(toolreg)
        if not name.startswith("_") and not isinstance(getattr(toolreg, name), types.ModuleType)
    }
    assert public == set(toolreg.__all__) - {"__version__"} | OPTIONAL
    assert not OPTIONAL & set(toolreg.__all__)
    assert len(toolreg.__all__) == len(set(toolreg.__all__))


def core_modules() -> set[str]:
    """Top-level modules an install of toolreg-core alone has: its dependencies' closure."""
    provides: dict[str, set[str]] = {}
    for module, dists in importlib.metadata.packages_distributions().items():
        for dist in dists:
            provides.setdefault(canonicalize_name(dist), set()).add(module)
    seen: set[str] = set()
    todo = ["toolreg-core"]
    while todo:
        dist = todo.pop()
        if dist in seen:
            continue
        seen.add(dist)
        for line in importlib.metadata.requires(dist) or ():
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(canonicalize_name(req.name))
    return {module for dist in seen for module in provides.get(dist, ())} | {"toolreg"}


#: Run first in a fresh interpreter: any top-level module outside the standard
#: library and toolreg-core's dependencies cannot be imported, as if no extra
#: (and nothing else) were installed.
NO_EXTRAS = """
import sys

ALLOWED = set({allowed!r}) | set(sys.stdlib_module_names)


class NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] not in ALLOWED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, NotInstalled())
try:
    import mcp
except ImportError:
    pass
else:
    raise AssertionError("the blocker let mcp through")
"""


def run_without_extras(code: str) -> None:
    script = NO_EXTRAS.format(allowed=sorted(core_modules())) + textwrap.dedent(code)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)


def test_star_import_works_with_no_extra_installed():
    run_without_extras(
        """
        from toolreg import *
        import toolreg

        missing = [name for name in toolreg.__all__ if name not in globals()]
        assert not missing, missing
        assert "mcp" not in sys.modules
        for name in ("McpManager", "ReconnectPolicy"):
            try:
                getattr(toolreg, name)
            except ImportError as exc:
                assert "toolreg-core[mcp]" in str(exc), exc
            else:
                raise AssertionError(f"toolreg.{name} loaded without the MCP SDK")
        try:
            import toolreg.serve
        except ImportError as exc:
            assert "toolreg-core[mcp]" in str(exc), exc
        else:
            raise AssertionError("toolreg.serve loaded without the MCP SDK")
        """
    )


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
