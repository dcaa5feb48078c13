"""@tool: registration, argument conversion, results, options, ownership and discovery."""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import datetime as dt
import enum
import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, Optional

import pydantic
import pytest
import typing_extensions as te

import toolreg
from toolreg import ToolRegistry, tool
from toolreg._discovery.builtins import _file_registers_tools, _tree_registers_tools


class Unit(enum.Enum):
    CELSIUS = "c"
    FAHRENHEIT = "f"


@dataclasses.dataclass
class Place:
    name: str
    lat: float = 0.0


class Window(te.TypedDict, total=False):
    start: dt.date
    days: int


class Order(pydantic.BaseModel):
    item: str
    quantity: int = 1


def forecast(
    city: str,
    unit: Unit = Unit.CELSIUS,
    place: Optional[Place] = None,  # noqa: UP045 (both spellings are tested)
    window: Window | None = None,
    span: tuple[int, int] = (0, 1),
    tags: frozenset[str] = frozenset(),
    mode: Literal["brief", "full"] = "brief",
) -> dict[str, Any]:
    """Get the forecast.

    Args:
        city: Where.
    """
    return {
        "city": city,
        "unit": unit,
        "place": place,
        "window": window,
        "span": span,
        "tags": tags,
        "mode": mode,
    }


def result_of(reg: ToolRegistry, name: str, args: dict[str, Any]) -> Any:
    result = reg.dispatch(name, args)
    assert isinstance(result, str), result
    return json.loads(result)


# -- registration ------------------------------------------------------------------------------


def test_the_decorated_function_is_returned_unchanged(reg: ToolRegistry) -> None:
    original = forecast
    decorated = tool(forecast, registry=reg)
    assert decorated is original
    assert decorated("Oslo")["unit"] is Unit.CELSIUS  # still callable as written
    entry = reg.get_entry("forecast")
    assert entry is not None
    assert entry.schema == forecast.__toolreg_schema__  # type: ignore[attr-defined]
    assert entry.handler is forecast.__toolreg_handler__  # type: ignore[attr-defined]
    assert entry.schema["description"] == "Get the forecast."
    assert entry.schema["parameters"]["required"] == ["city"]
    assert entry.schema["parameters"]["properties"]["city"]["description"] == "Where."


def test_registry_method_decorator_with_and_without_options(reg: ToolRegistry) -> None:
    @reg.tool
    def ping() -> str:
        return "pong"

    @reg.tool(name="sum_two", toolset="math")
    def add(a: int, b: int = 1) -> int:
        return a + b

    assert ping() == "pong" and add(2) == 3
    assert reg.dispatch("ping", {}) == "pong"
    assert reg.dispatch("sum_two", {"a": 2, "b": 5}) == "7"
    assert reg.get_toolset_for_tool("sum_two") == "math"
    assert reg.get_entry("add") is None


def test_default_toolset_is_the_module_name_last_part(reg: ToolRegistry) -> None:
    @reg.tool
    def f() -> str:
        return ""

    assert reg.get_toolset_for_tool("f") == __name__.rpartition(".")[2]


def test_bare_tool_uses_the_registry_current_at_decoration(
    reg: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(toolreg, "registry", reg)

    @tool
    def swapped_in() -> str:
        return "here"

    assert reg.dispatch("swapped_in", {}) == "here"
    assert "swapped_in" not in ToolRegistry().get_all_tool_names()


def test_options_pass_through(reg: ToolRegistry) -> None:
    def probe() -> bool:
        return True

    def overrides() -> dict[str, Any]:
        return {"description": "dynamic"}

    @reg.tool(
        name="opts",
        toolset="ts",
        description="Overridden.\n\nSecond paragraph.",
        check_fn=probe,
        requires_env=["OPTS_KEY"],
        emoji="🧪",
        max_result_size_chars=5,
        timeout=2.5,
        validate=False,
        dynamic_schema_overrides=overrides,
    )
    def with_options() -> str:
        """Ignored docstring."""
        return "0123456789"

    entry = reg.get_entry("opts")
    assert entry is not None
    assert entry.toolset == "ts"
    assert entry.check_fn is probe
    assert entry.requires_env == ("OPTS_KEY",)
    assert entry.emoji == "🧪"
    assert entry.max_result_size_chars == 5
    assert entry.dynamic_schema_overrides is overrides
    assert entry.schema["description"] == "Overridden.\n\nSecond paragraph."
    assert entry.description == "Overridden."
    assert entry.is_async is False
    options = reg.get_options("opts")
    assert options is not None and options.timeout == 2.5 and options.validate is False
    assert reg.dispatch("opts", {}).startswith("01234\n…[truncated 5 of 10")


def test_override_passes_through(reg: ToolRegistry) -> None:
    @reg.tool(name="clash", toolset="one")
    def first() -> str:
        return "first"

    @reg.tool(name="clash", toolset="two")
    def second() -> str:
        return "second"

    assert reg.dispatch("clash", {}) == "first"  # rejected without override

    @reg.tool(name="clash", toolset="two", override=True)
    def third() -> str:
        return "third"

    assert reg.dispatch("clash", {}) == "third"


def test_registration_errors_surface(reg: ToolRegistry) -> None:
    with pytest.raises(ValueError, match="Invalid tool name"):
        reg.tool(name="bad name!")(forecast)
    with pytest.raises(ValueError, match="timeout"):
        reg.tool(timeout=-1)(forecast)
    with pytest.raises(TypeError, match="keyword arguments only"):
        tool("forecast")  # type: ignore[call-overload]
    assert not hasattr(add_untouched, "__toolreg_schema__")


def add_untouched(a: int) -> int:
    return a


# -- arguments and results ---------------------------------------------------------------------


def test_handler_converts_arguments_to_declared_types(reg: ToolRegistry) -> None:
    seen: dict[str, Any] = {}

    @reg.tool
    def capture(
        unit: Unit,
        place: Place,
        window: Window,
        span: tuple[int, int],
        tags: frozenset[str],
        when: dt.date,
        order: Order,
        orders: list[Order],
        ratio: float,
    ) -> str:
        seen.update(locals())
        return "ok"

    args = {
        "unit": "f",
        "place": {"name": "Oslo"},
        "window": {"start": "2025-01-31", "days": 3, "extra": 1},
        "span": [1, 2],
        "tags": ["a", "b", "a"],
        "when": "2024-02-29",
        "order": {"item": "tea"},
        "orders": [{"item": "cake", "quantity": 2}],
        "ratio": 2,
    }
    valid = dict(args, window={"start": "2025-01-31", "days": 3}, tags=["a", "b"])
    assert reg.dispatch("capture", valid) == "ok"
    assert seen["unit"] is Unit.FAHRENHEIT
    assert seen["place"] == Place("Oslo")
    assert seen["window"] == {"start": dt.date(2025, 1, 31), "days": 3}
    assert seen["span"] == (1, 2)
    assert seen["tags"] == frozenset({"a", "b"})
    assert seen["when"] == dt.date(2024, 2, 29)
    assert seen["order"] == Order(item="tea")
    assert seen["orders"] == [Order(item="cake", quantity=2)]
    assert seen["ratio"] == 2.0 and isinstance(seen["ratio"], float)
    # Called directly, without validation: unknown TypedDict keys are dropped,
    # as pydantic drops them, and a set is a set.
    handler = reg.get_entry("capture").handler  # type: ignore[union-attr]
    assert handler(args) == "ok"
    assert seen["window"] == {"start": dt.date(2025, 1, 31), "days": 3}
    assert seen["tags"] == frozenset({"a", "b"})


@dataclasses.dataclass
class Tree:
    label: str
    children: list[Tree] = dataclasses.field(default_factory=list)


def test_recursive_types_convert_all_the_way_down(reg: ToolRegistry) -> None:
    @reg.tool
    def depth(tree: Tree) -> int:
        return 1 + max((depth(child) for child in tree.children), default=0)

    nested = {"label": "a", "children": [{"label": "b", "children": [{"label": "c"}]}]}
    assert reg.dispatch("depth", {"tree": nested}) == "3"
    refs = reg.get_entry("depth").schema["parameters"]  # type: ignore[union-attr]
    assert refs["$defs"]["Tree"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Tree"}


def test_results_are_json_encoded(reg: ToolRegistry) -> None:
    tool(forecast, registry=reg)
    data = result_of(
        reg,
        "forecast",
        {"city": "Oslo", "unit": "f", "place": {"name": "Oslo", "lat": 59.9}, "tags": ["b", "a"]},
    )
    assert data == {
        "city": "Oslo",
        "unit": "f",
        "place": {"name": "Oslo", "lat": 59.9},
        "window": None,
        "span": [0, 1],
        "tags": ["a", "b"],
        "mode": "brief",
    }

    @reg.tool
    def stamp() -> dict[str, Any]:
        return {"at": dt.datetime(2025, 1, 2, 3, 4, 5), "order": Order(item="x"), "é": "ü"}

    assert reg.dispatch("stamp", {}) == (
        '{"at": "2025-01-02T03:04:05", "order": {"item": "x", "quantity": 1}, "é": "ü"}'
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("plain text", "plain text"),
        (None, "null"),
        (3, "3"),
        ([1, "a"], '[1, "a"]'),
        ((1, 2), "[1, 2]"),
        (Unit.CELSIUS, '"c"'),
        (Place("x"), '{"name": "x", "lat": 0.0}'),
    ],
)
def test_result_shapes(reg: ToolRegistry, value: Any, expected: str) -> None:
    @reg.tool
    def give() -> Any:
        return value

    assert reg.dispatch("give", {}) == expected


def test_multimodal_result_passes_through(reg: ToolRegistry) -> None:
    payload = {"_multimodal": True, "content": [{"type": "text", "text": "hi"}]}

    @reg.tool
    def picture() -> dict[str, Any]:
        return payload

    assert reg.dispatch("picture", {}) is payload


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ({}, "argument 'city' is required"),
        ({"city": 5}, "argument 'city' must be a string, got 5"),
        ({"city": "x", "unit": "kelvin"}, 'argument \'unit\' must be one of "c", "f"'),
        ({"city": "x", "place": {"lat": 1}}, "is missing the required field(s) 'name'"),
        ({"city": "x", "place": {"name": 1}}, "argument 'place.name' must be a string"),
        ({"city": "x", "span": [1]}, "must have exactly 2 items"),
        ({"city": "x", "mode": "long"}, 'argument \'mode\' must be one of "brief", "full"'),
        ({"city": "x", "days": 3}, "unknown argument(s) 'days'"),
    ],
)
def test_bad_arguments_come_back_as_tool_errors(
    reg: ToolRegistry, args: dict[str, Any], needle: str
) -> None:
    tool(forecast, registry=reg, validate=False)
    data = json.loads(reg.dispatch("forecast", args))  # type: ignore[arg-type]
    assert data["error_type"] == "invalid_arguments" and data["tool"] == "forecast"
    assert needle in data["error"], data["error"]
    # A direct call of the handler gets the same answer.
    handler = reg.get_entry("forecast").handler  # type: ignore[union-attr]
    assert json.loads(handler(args)) == data


def test_model_errors_are_summarised(reg: ToolRegistry) -> None:
    @reg.tool(validate=False)
    def buy(order: Order) -> str:
        return order.item

    data = json.loads(reg.dispatch("buy", {"order": {"quantity": "many"}}))  # type: ignore[arg-type]
    assert "argument 'order' is not a valid Order" in data["error"]
    assert "item: Field required" in data["error"]


def test_context_keywords_from_the_host_are_not_passed_on(reg: ToolRegistry) -> None:
    @reg.tool
    def echo(text: str) -> str:
        return text

    assert reg.dispatch("echo", {"text": "hi"}, task_id="t1") == "hi"


def test_positional_only_and_keyword_only_parameters(reg: ToolRegistry) -> None:
    @reg.tool
    def join(a: str, b: str = "-", /, *, c: str = "!") -> str:
        return a + b + c

    assert reg.dispatch("join", {"a": "x"}) == "x-!"
    assert reg.dispatch("join", {"a": "x", "c": "?"}) == "x-?"
    assert reg.dispatch("join", {"a": "x", "b": "+"}) == "x+!"


def test_pydantic_field_default_reaches_the_function_resolved(reg: ToolRegistry) -> None:
    @reg.tool
    def count(
        n: int = pydantic.Field(3, ge=0),
        items: list[int] = pydantic.Field(default_factory=list),  # noqa: B008
    ) -> str:
        return f"{n}:{items}"

    assert reg.dispatch("count", {}) == "3:[]"
    assert reg.get_entry("count").schema["parameters"]["properties"]["n"] == {  # type: ignore[union-attr]
        "type": "integer",
        "minimum": 0,
        "default": 3,
    }


def test_dispatch_validates_against_the_generated_schema(reg: ToolRegistry) -> None:
    tool(forecast, registry=reg)
    data = json.loads(reg.dispatch("forecast", {"city": "x", "span": [1, 2, 3]}))  # type: ignore[arg-type]
    assert data["error_type"] == "invalid_arguments"
    assert json.loads(reg.dispatch("forecast", {"city": "x", "unit": "f"}))["unit"] == "f"  # type: ignore[arg-type]


# -- async ------------------------------------------------------------------------------------


def test_async_functions_register_as_async(reg: ToolRegistry) -> None:
    @reg.tool
    async def slow_add(a: int, b: int) -> int:
        await asyncio.sleep(0)
        return a + b

    entry = reg.get_entry("slow_add")
    assert entry is not None and entry.is_async
    assert asyncio.iscoroutinefunction(entry.handler)
    assert reg.dispatch("slow_add", {"a": 2, "b": 3}) == "5"
    assert asyncio.run(reg.adispatch("slow_add", {"a": 1, "b": 1})) == "2"
    problem = json.loads(asyncio.run(entry.handler({"a": "x", "b": 1})))
    assert "argument 'a' must be an integer" in problem["error"]
    assert asyncio.run(slow_add(1, 2)) == 3  # the function itself is untouched


# -- ownership ----------------------------------------------------------------------------------


PLUGIN_SOURCE = """
    import toolreg

    @toolreg.tool(toolset="acme")
    def acme_hello(name: str) -> str:
        return "hello " + name

    def acme_plain(x: int) -> int:
        return x
"""


def test_a_plugin_function_belongs_to_the_plugin(
    reg: ToolRegistry,
    monkeypatch: pytest.MonkeyPatch,
    make_package: Callable[..., ModuleType | None],
) -> None:
    reg.register_plugin_override_policy("acme_pack", allowed=False, plugin_id="toolreg-acme")
    monkeypatch.setattr(toolreg, "registry", reg)
    module = make_package("acme_pack", PLUGIN_SOURCE)
    assert module is not None
    assert reg.get_owner("acme_hello") == "toolreg-acme"
    assert reg.dispatch("acme_hello", {"name": "you"}) == "hello you"
    # Decorated by host code, a plugin's function is still the plugin's.
    tool(module.acme_plain, registry=reg, toolset="acme")
    assert reg.get_owner("acme_plain") == "toolreg-acme"
    handler = reg.get_entry("acme_plain").handler  # type: ignore[union-attr]
    assert handler.__wrapped__ is module.acme_plain
    # And a host function stays the host's.
    tool(add_untouched, registry=reg, name="host_add")
    assert reg.get_owner("host_add") == "host"


def test_a_plugin_cannot_override_through_the_decorator(
    reg: ToolRegistry, make_package: Callable[..., ModuleType | None]
) -> None:
    reg.register("shadowed", "core", {"name": "shadowed", "description": "x"}, lambda args: "core")
    reg.register_plugin_override_policy("sneaky_pack", allowed=False, plugin_id="sneaky")
    module = make_package(
        "sneaky_pack",
        """
        def shadowed() -> str:
            return "sneaky"
        """,
    )
    with pytest.raises(PermissionError, match="allow_tool_override"):
        tool(module.shadowed, registry=reg, override=True)  # type: ignore[union-attr]
    assert reg.dispatch("shadowed", {}) == "core"


# -- discovery -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "from toolreg import registry\n@registry.tool(toolset='x')\ndef f(a: int) -> int: ...",
        "from toolreg import registry\n@registry.tool\nasync def f() -> str: ...",
        "from toolreg import tool\n@tool\ndef f() -> str: ...",
        "import toolreg\n@toolreg.tool(name='g')\ndef f() -> str: ...",
        "import toolreg\nif True:\n    @toolreg.registry.tool()\n    def f() -> str: ...",
    ],
)
def test_the_ast_scan_sees_decorated_tools(source: str) -> None:
    assert _tree_registers_tools(ast.parse(source))


def test_the_ast_scan_ignores_decorators_that_do_not_run_at_import() -> None:
    source = textwrap.dedent(
        """
        from toolreg import registry

        def later():
            @registry.tool
            def inner() -> str: ...

        class Holder:
            @registry.tool
            def method(self) -> str: ...
        """
    )
    assert not _tree_registers_tools(ast.parse(source))


def test_a_module_using_only_the_decorator_is_discovered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reg: ToolRegistry
) -> None:
    tools_dir = tmp_path / "decorated_tools"
    tools_dir.mkdir()
    (tools_dir / "weather.py").write_text(
        textwrap.dedent(
            """
            from toolreg import registry

            @registry.tool(toolset="weather")
            def forecast_for(city: str) -> str:
                return "sunny in " + city
            """
        )
    )
    assert _file_registers_tools(str(tools_dir / "weather.py"))
    monkeypatch.setenv("TOOLREG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(toolreg, "registry", reg)
    loaded = toolreg.discover_builtin_tools(tools_dir)
    try:
        assert [name.rpartition(".")[2] for name in loaded] == ["weather"]
        assert reg.dispatch("forecast_for", {"city": "Oslo"}) == "sunny in Oslo"
    finally:
        for name in loaded:
            sys.modules.pop(name, None)


# -- cost ------------------------------------------------------------------------------------


def test_pydantic_is_never_imported_for_plain_tools() -> None:
    code = textwrap.dedent(
        """
        import sys
        from typing import Annotated, Literal
        import toolreg

        assert "docstring_parser" not in sys.modules  # import toolreg stays cheap

        @toolreg.tool(registry=toolreg.ToolRegistry())
        def f(a: Annotated[int, "n"], b: Literal["x", "y"] = "x") -> str:
            \"\"\"Doc.\"\"\"
            return ""

        print("pydantic" in sys.modules, "annotated_types" in sys.modules)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "False"]
