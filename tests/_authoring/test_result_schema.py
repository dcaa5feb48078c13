"""Output schemas from return types: the JSON text a structured tool returns always fits its schema.

Each result is checked with ``jsonschema`` (what the MCP SDK's client uses),
not with toolreg's own validator, so a schema and an encoding that agree only
with each other would still fail here.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
from typing import Annotated, Any

import jsonschema
import pydantic
import pytest
import typing_extensions as te

from toolreg import ToolRegistry, tool


class Level(enum.Enum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass
class Reading:
    """One sensor reading."""

    sensor: str
    value: float
    level: Level
    at: dt.datetime
    note: str | None = None


class Summary(te.TypedDict):
    count: int
    mean: te.NotRequired[float]
    readings: list[Reading]


@dataclasses.dataclass
class Node:
    name: str
    children: list[Node] = dataclasses.field(default_factory=list)


class Report(pydantic.BaseModel):
    title: str = pydantic.Field(alias="Title")
    pages: int
    summary: Summary

    @pydantic.computed_field  # type: ignore[prop-decorator]
    @property
    def long(self) -> bool:
        return self.pages > 10


def structured(reg: ToolRegistry, name: str) -> tuple[dict[str, Any], Any]:
    """The tool's output schema and the value its dispatch text holds, checked by jsonschema."""
    entry = reg.get_entry(name)
    assert entry is not None and entry.output_schema is not None
    schema = entry.output_schema
    jsonschema.Draft202012Validator.check_schema(schema)
    value = json.loads(reg.dispatch(name, {}))
    jsonschema.validate(value, schema, cls=jsonschema.Draft202012Validator)
    return schema, value


def test_dataclass_typeddict_and_model_returns_get_an_object_schema() -> None:
    reg = ToolRegistry()
    at = dt.datetime(2025, 1, 31, 14, 5, tzinfo=dt.timezone.utc)
    reading = Reading("s1", 2.5, Level.HIGH, at)

    @reg.tool
    def read() -> Reading:
        """Read."""
        return reading

    @reg.tool
    def summarise() -> Summary:
        """Summarise."""
        return {"count": 1, "readings": [reading]}

    @reg.tool
    def report() -> Report:
        """Report."""
        return Report(Title="Q1", pages=12, summary={"count": 0, "readings": []})

    schema, value = structured(reg, "read")
    assert schema["type"] == "object" and schema["description"] == "One sensor reading."
    assert schema["required"] == ["sensor", "value", "level", "at"]
    assert value["level"] == 2 and value["at"] == "2025-01-31T14:05:00+00:00"

    schema, value = structured(reg, "summarise")
    assert schema["required"] == ["count", "readings"]  # NotRequired honoured
    assert schema["properties"]["readings"]["items"] == {"$ref": "#/$defs/Reading"}
    assert set(schema["$defs"]) == {"Reading", "Level"}

    schema, value = structured(reg, "report")
    # As returned: field names (model_dump's), and the computed field too.
    assert value["title"] == "Q1" and value["long"] is True
    assert "long" in schema["properties"] and "title" in schema["properties"]
    # A value that breaks the schema is caught by it: the schema is not vacuous.
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**value, "pages": "many"}, schema)


def test_a_recursive_type_keeps_its_definition_for_the_inner_references() -> None:
    reg = ToolRegistry()

    @reg.tool
    def tree() -> Node:
        """A tree."""
        return Node("root", [Node("a", [Node("a1")]), Node("b")])

    schema, value = structured(reg, "tree")
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert schema["$defs"]["Node"]["type"] == "object"
    assert value["children"][0]["children"][0]["name"] == "a1"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"name": "r", "children": [{"children": []}]}, schema)


@pytest.mark.parametrize(
    "returns", [str, dict, dict[str, int], list[Reading], int, None, Reading | None, Any]
)
def test_other_return_types_get_no_output_schema(returns: Any) -> None:
    reg = ToolRegistry()

    def plain() -> None:
        """Plain."""

    plain.__annotations__["return"] = returns
    tool(plain, registry=reg)
    assert reg.get_entry("plain").output_schema is None


def test_annotated_return_and_async_functions_are_read_through() -> None:
    reg = ToolRegistry()

    @reg.tool
    async def later() -> Annotated[Node, "the tree"]:
        """Later."""
        return Node("x")

    schema, value = structured(reg, "later")
    assert value == {"name": "x", "children": []}
    assert "the tree" not in json.dumps(schema)


def test_output_schema_by_hand_or_none() -> None:
    reg = ToolRegistry()
    by_hand = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}

    @reg.tool(output_schema=by_hand)
    def manual() -> dict:
        """Manual."""
        return {"ok": True}

    @reg.tool(output_schema=False)
    def opted_out() -> Reading:
        """Opted out."""
        return Reading("s", 1.0, Level.LOW, dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc))

    assert reg.get_entry("manual").output_schema == by_hand
    assert reg.get_entry("opted_out").output_schema is None
    with pytest.raises(ValueError, match="Tool 'bad': output_schema must have \"type\""):

        @reg.tool(output_schema={"type": "array"})
        def bad() -> list:
            """Bad."""
            return []

    assert "bad" not in reg


def test_a_return_type_without_json_schema_is_named_unless_opted_out() -> None:
    reg = ToolRegistry()

    @dataclasses.dataclass
    class Handle:
        callback: Any
        file: Any = None
        when: type = int

    with pytest.raises(TypeError) as caught:

        @reg.tool
        def opener() -> Handle:
            """Open."""
            return Handle(print)

    message = str(caught.value)
    assert message.startswith("Tool 'opener': return type ")
    assert "Handle has no JSON Schema (type cannot be expressed)" in message
    assert "output_schema=False" in message
    assert "opener" not in reg

    @reg.tool(output_schema=False)
    def opener2() -> Handle:
        """Open."""
        return Handle(print)

    assert reg.get_entry("opener2").output_schema is None


def test_annotations_pass_through_the_decorator() -> None:
    reg = ToolRegistry()

    @reg.tool(annotations={"read_only_hint": True, "title": "Peek"})
    def peek() -> str:
        """Peek."""
        return "x"

    assert dict(reg.get_entry("peek").annotations) == {"title": "Peek", "readOnlyHint": True}
    with pytest.raises(ValueError, match=r"Tool 'poke': annotations key 'read_only'"):

        @reg.tool(annotations={"read_only": True})
        def poke() -> str:
            """Poke."""
            return "x"

    assert "poke" not in reg
