"""Testing a tool pack: load it through the real loader, then check its tools.

:class:`PackLoader` (from :mod:`toolreg._pack_loader`) is what the ``load_pack``
fixture of :mod:`toolreg.pytest_plugin` calls. The ``assert_*`` functions need no
fixture: each raises ``AssertionError`` saying exactly what is wrong::

    from toolreg.testing import assert_dispatches, assert_valid_schema

    def test_hello(tool_registry, load_pack):
        load_pack("toolreg-hello")
        assert_valid_schema(tool_registry, "hello_greet")
        assert_dispatches(tool_registry, "hello_greet", {"name": "Ada"}, contains="Ada")
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from typing import Any

from ._contract.results import is_tool_error
from ._contract.schema_checks import parameters_of
from ._loaders.report import PluginReport
from ._pack_loader import PackLoader, resolve_pack
from ._policy.admission import DISABLE_AUTOLOAD_ENV, PLUGINS_ENV
from ._policy.config import CONFIG_ENV
from ._registry.registry import ToolRegistry
from ._schemas.formats import FORMATS

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
