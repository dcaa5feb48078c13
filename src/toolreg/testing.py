"""Testing a tool pack: load it through the real loader, then check its tools.

:class:`PackLoader` is what the ``load_pack`` fixture of
:mod:`toolreg.pytest_plugin` calls. The ``assert_*`` functions need no
fixture: each raises ``AssertionError`` saying exactly what is wrong::

    from toolreg.testing import assert_dispatches, assert_valid_schema

    def test_hello(tool_registry, load_pack):
        load_pack("toolreg-hello")
        assert_valid_schema(tool_registry, "hello_greet")
        assert_dispatches(tool_registry, "hello_greet", {"name": "Ada"}, contains="Ada")
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from ._contract.formats import FORMATS
from ._contract.results import is_tool_error
from ._contract.schemas import parameters_of
from ._core.registry import ToolRegistry
from ._discovery.builtins import discover_builtin_tools
from ._discovery.entrypoints import PackRecord, find_packs
from ._loaders.api import _hosts
from ._loaders.plugins import PluginHost, _registry_as_singleton
from ._loaders.report import PluginReport
from ._policy.admission import DISABLE_AUTOLOAD_ENV, PLUGINS_ENV
from ._policy.config import CONFIG_ENV, Config, parse_config
from ._policy.config import plugin_id as canonical_id

__all__ = [
    "OPERATOR_ENV",
    "PackLoader",
    "assert_dispatches",
    "assert_no_override_without_consent",
    "assert_valid_schema",
    "resolve_pack",
]

#: The operator's switches: a pack's own tests must not depend on how they are set.
OPERATOR_ENV = (CONFIG_ENV, PLUGINS_ENV, DISABLE_AUTOLOAD_ENV)
BUILTIN_OWNER = "builtin"
_BUILTINS = "builtin_tools"

# Key paths each provider's definition must carry; the first one holds the tool's name.
# A format added to toolreg later is still checked for being a JSON object.
_REQUIRED_KEYS: dict[str, tuple[tuple[str, ...], ...]] = {
    "openai": (
        ("function", "name"),
        ("type",),
        ("function", "description"),
        ("function", "parameters"),
    ),
    "openai-responses": (("name",), ("type",), ("description",), ("parameters",)),
    "anthropic": (("name",), ("description",), ("input_schema",)),
    "gemini": (("name",), ("description",)),
    "mcp": (("name",), ("description",), ("inputSchema",)),
}
# Where each format puts the parameters (Gemini's are its own dialect, and optional).
_PARAMETERS_KEY: dict[str, tuple[str, ...]] = {
    "openai": ("function", "parameters"),
    "openai-responses": ("parameters",),
    "anthropic": ("input_schema",),
    "mcp": ("inputSchema",),
}


def resolve_pack(target: str) -> PackRecord:
    """The record to load for a module name (``toolreg_hello``) or a distribution name.

    A module importable here is wrapped in a record of its own, with plugin id
    the module's name canonicalised (``toolreg-hello``); anything else must name
    an installed distribution with ``toolreg.tools`` entry points.
    """
    if _importable(target):
        return PackRecord(
            plugin_id=canonical_id(target),
            distribution=target,
            version="0",
            entry_points=(("main", target),),
            requires_toolreg=None,
            path="",
        )
    wanted = canonical_id(target)
    packs = find_packs()
    for record in packs:
        if record.plugin_id == wanted:
            return record
    installed = ", ".join(p.plugin_id for p in packs) or "none"
    raise LookupError(
        f"load_pack({target!r}): no importable module {target!r} and no installed "
        f"distribution {wanted!r} with toolreg.tools entry points (installed packs: "
        f"{installed}); install the pack here first, e.g. pip install -e ."
    )


def _importable(name: str) -> bool:
    if not all(part.isidentifier() for part in name.split(".")):
        return False
    top = name.split(".")[0]
    if top in sys.modules:
        return True
    try:  # the top level only: finding "a.b" would import (and run) package "a"
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return False


def _as_config(config: str | Config | None) -> Config:
    if config is None:
        return Config()  # the built-in defaults, never the machine's config file
    if isinstance(config, Config):
        return config
    if isinstance(config, str):
        return parse_config(config)
    raise TypeError(f"config must be TOML text, a Config or None, not {type(config).__name__}")


class _ModuleSnapshot:
    """``sys.modules`` under some prefixes as first seen, put back by ``restore()``.

    The loader imports a pack afresh; the modules a test file imported itself
    must be the ones it sees again afterwards. A prefix ending in ``.`` means
    the package's submodules only.
    """

    def __init__(self) -> None:
        self._saved: dict[str, dict[str, ModuleType]] = {}

    def remember(self, prefix: str) -> None:
        if prefix not in self._saved:
            self._saved[prefix] = {n: m for n, m in sys.modules.items() if _under(n, prefix)}

    def restore(self) -> None:
        for prefix, saved in self._saved.items():
            for name in [n for n in sys.modules if _under(n, prefix)]:
                module = sys.modules.pop(name)
                parent, _, child = name.rpartition(".")
                # `from pkg import mod` reads the attribute before sys.modules.
                if parent in sys.modules and getattr(sys.modules[parent], child, None) is module:
                    delattr(sys.modules[parent], child)
            sys.modules.update(saved)
            for name, module in saved.items():
                parent, _, child = name.rpartition(".")
                if parent in sys.modules:
                    setattr(sys.modules[parent], child, module)
        self._saved.clear()


def _under(name: str, prefix: str) -> bool:
    if prefix.endswith("."):
        return name.startswith(prefix)
    return name == prefix or name.startswith(prefix + ".")


class PackLoader:
    """Loads packs into one registry through the real :class:`PluginHost`.

    Everything the loader checks applies: the operator switches in ``config``,
    compatibility, namespaces, override consent, rollback. ``close()`` unloads
    what was loaded and puts the imported modules back as they were.
    """

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        self.host: PluginHost | None = None
        self._modules = _ModuleSnapshot()
        self._builtins = False

    def __call__(
        self, target: str, *, config: str | Config | None = None, builtins: bool = False
    ) -> PluginReport:
        """Load ``target`` (a module or distribution name) and return the loader's report.

        ``config`` is the operator's config, as TOML text or a ``Config``; the
        default is toolreg's defaults. ``builtins=True`` first registers the
        built-in tools, so there is something to override. A pack loaded before
        is unloaded and loaded afresh under the new config; other packs stay.
        """
        record = resolve_pack(target)
        settings = _as_config(config)
        for namespace in record.namespaces:
            self._modules.remember(namespace)
        host = self._host(settings)
        if record.plugin_id in host.active:
            host.unload(record.plugin_id)  # before the built-ins: it may hold their names
        if builtins:
            self.load_builtins()
        return host.load_all(packs=[record])

    def load_builtins(self) -> list[str]:
        """Register the built-in tools into this registry (once); return their modules."""
        if self._builtins:
            return []
        self._builtins = True
        with _registry_as_singleton(self.registry):
            # Imported modules are not executed again, so drop them (not the
            # package) and let discovery import them into this registry.
            self._modules.remember(_BUILTINS + ".")
            for name in [n for n in sys.modules if n.startswith(_BUILTINS + ".")]:
                del sys.modules[name]
            return discover_builtin_tools()

    def _host(self, config: Config) -> PluginHost:
        if self.host is None:
            self.host = PluginHost(self.registry, config)
            # So get_plugin_host(registry) and unload_plugin(id, registry=...) find it.
            _hosts[self.registry] = self.host
        else:
            self.host.config = config
        return self.host

    def close(self) -> None:
        if self.host is not None:
            self.host.unload_all()  # also stops its hook threads
            if _hosts.get(self.registry) is self.host:
                del _hosts[self.registry]
            self.host = None
        self._modules.restore()


@contextlib.contextmanager
def _operator_env_cleared() -> Iterator[None]:
    saved = {name: os.environ.pop(name) for name in OPERATOR_ENV if name in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


# -- assertions -------------------------------------------------------------------------


def _entry(registry: ToolRegistry, name: str) -> Any:
    entry = registry.get_entry(name)
    if entry is None:
        known = ", ".join(registry.get_all_tool_names()) or "none"
        raise AssertionError(f"no tool {name!r} in the registry (its tools: {known})")
    return entry


def _check_json_schema(name: str, parameters: Any, where: str) -> None:
    import fastjsonschema

    try:
        fastjsonschema.compile(parameters)
    except Exception as exc:
        raise AssertionError(
            f"tool {name!r}: {where} is not a valid JSON Schema "
            f"(fastjsonschema: {type(exc).__name__}: {exc})"
        ) from None
    try:
        from jsonschema.exceptions import SchemaError
        from jsonschema.validators import validator_for
    except ImportError:  # optional: the metaschema check is stricter, when available
        return
    try:
        validator_for(parameters).check_schema(parameters)
    except SchemaError as exc:
        at = getattr(exc, "json_path", "$")
        raise AssertionError(
            f"tool {name!r}: {where} is not a valid JSON Schema "
            f"(jsonschema metaschema: {exc.message} at {at})"
        ) from None


def _dig(definition: Any, path: tuple[str, ...]) -> Any:
    value = definition
    for key in path:
        if not isinstance(value, dict) or key not in value:
            raise KeyError(".".join(path))
        value = value[key]
    return value


def assert_valid_schema(registry: ToolRegistry, name: str) -> None:
    """The tool's parameters are a valid JSON Schema, and every provider format accepts it."""
    entry = _entry(registry, name)
    _check_json_schema(name, parameters_of(entry.schema), "parameters")
    for format in FORMATS:
        try:
            definition = registry.get_definition(name, format=format)
            json.dumps(definition)
        except Exception as exc:
            raise AssertionError(
                f"tool {name!r}: the {format!r} format rejects it: {type(exc).__name__}: {exc}"
            ) from None
        if not isinstance(definition, dict):
            raise AssertionError(
                f"tool {name!r}: the {format!r} definition is {type(definition).__name__}, "
                "not a JSON object"
            )
        required = _REQUIRED_KEYS.get(format, ())
        for path in required:
            try:
                _dig(definition, path)
            except KeyError:
                raise AssertionError(
                    f"tool {name!r}: the {format!r} definition has no {'.'.join(path)!r}: "
                    f"{definition}"
                ) from None
        if required and _dig(definition, required[0]) != name:
            raise AssertionError(
                f"tool {name!r}: the {format!r} definition names the tool "
                f"{_dig(definition, required[0])!r}"
            )
        if format in _PARAMETERS_KEY:
            where = f"the {format!r} definition's {'.'.join(_PARAMETERS_KEY[format])}"
            parameters = _dig(definition, _PARAMETERS_KEY[format])
            if not isinstance(parameters, dict) or parameters.get("type") != "object":
                raise AssertionError(f'tool {name!r}: {where} is not a "type": "object" schema')
            if entry.dynamic_schema_overrides is not None:  # what the model really reads
                _check_json_schema(name, parameters, where)


def assert_dispatches(
    registry: ToolRegistry, name: str, args: dict[str, Any], *, contains: str | None = None
) -> str | dict[str, Any]:
    """Dispatch ``name(args)``; it must not be a tool_error (and must contain ``contains``).

    Returns the result. Dispatch runs hooks and argument validation, as for a model.
    """
    _entry(registry, name)
    result = registry.dispatch(name, args)
    if is_tool_error(result):
        raise AssertionError(f"tool {name!r} with {args!r} returned a tool error: {result}")
    if contains is not None:
        text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
        if contains not in text:
            shown = text if len(text) <= 500 else text[:500] + "…"
            raise AssertionError(
                f"tool {name!r} with {args!r}: the result does not contain {contains!r}; "
                f"it is: {shown}"
            )
    return result


def assert_no_override_without_consent(target: str) -> PluginReport:
    """Load ``target`` over the built-ins without consent; no built-in may change hands.

    A pack that tries ``override=True`` must come out ``refused``; one that
    overrides nothing must load. Uses a registry of its own and toolreg's
    default config, whatever the environment says. Returns the report.
    """
    registry = ToolRegistry()
    loader = PackLoader(registry)
    try:
        with _operator_env_cleared():
            loader.load_builtins()
            builtins = {n: registry.get_toolset_for_tool(n) for n in registry.get_all_tool_names()}
            if not builtins:
                raise AssertionError("no built-in tools were registered; nothing to check")
            report = loader(target)
        record = resolve_pack(target)
        outcome = report[record.plugin_id]
        changed = [
            _now(registry, tool)
            for tool in sorted(builtins)
            if registry.get_owner(tool) != BUILTIN_OWNER
            or registry.get_toolset_for_tool(tool) != builtins[tool]
        ]
        if changed:
            raise AssertionError(
                f"pack {outcome.id!r} ({outcome.status}) changed built-in tools without "
                f"operator consent: {', '.join(changed)}"
            )
        if outcome.status == "loaded" and outcome.tools_overridden:
            raise AssertionError(
                f"pack {outcome.id!r} loaded and overrode {outcome.tools_overridden} "
                "without operator consent"
            )
        if outcome.status == "refused" and "allow_tool_override" not in outcome.reason:
            raise AssertionError(
                f"pack {outcome.id!r} could not be checked: it was refused for another "
                f"reason than override consent: {outcome.reason}"
            )
        if outcome.status not in ("loaded", "refused"):
            raise AssertionError(
                f"pack {outcome.id!r} could not be checked: it was {outcome.status}: "
                f"{outcome.reason}"
            )
        return report
    finally:
        loader.close()


def _now(registry: ToolRegistry, tool: str) -> str:
    owner = registry.get_owner(tool)
    if owner is None:
        return f"{tool} (removed)"
    return f"{tool} (now owned by {owner}, toolset {registry.get_toolset_for_tool(tool)!r})"
