"""What of a tool is indexed, and the bounds that hold whatever a tool holds."""

from __future__ import annotations

from typing import Any

from toolreg import ToolEntry
from toolreg._search.document import (
    MAX_ENUM_VALUES,
    MAX_FIELD_CHARS,
    MAX_SCHEMA_NODES,
    fields_of,
)


def _entry(name: str = "t", description: str = "", parameters: Any = None) -> ToolEntry:
    schema = {"name": name, "parameters": parameters or {"type": "object", "properties": {}}}
    return ToolEntry(name, "set", schema, lambda a: "", description=description)


def test_the_fields_hold_names_descriptions_and_enum_values_of_parameters():
    fields = fields_of(
        _entry(
            "get_weather",
            "Weather now.",
            {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "City name"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit", 3]},
                    "where": {
                        "type": "object",
                        "properties": {"lat": {"type": "number", "description": "Latitude"}},
                    },
                    "tags": {"type": "array", "items": {"type": "string", "enum": ["rainy"]}},
                },
            },
        )
    )
    assert fields.name == "get_weather"
    assert fields.description == "Weather now."
    assert fields.toolset == "set"
    for word in ("city", "City name", "celsius", "fahrenheit", "lat", "Latitude", "rainy"):
        assert word in fields.params


def test_a_five_megabyte_description_is_cut():
    fields = fields_of(_entry(description="weather " * 700_000))
    assert len(fields.description) == MAX_FIELD_CHARS


def test_a_deeply_nested_schema_is_read_to_a_bound():
    node: dict[str, Any] = {"type": "object", "properties": {}}
    top = node
    for i in range(5_000):
        child: dict[str, Any] = {"type": "object", "description": f"level{i}", "properties": {}}
        node["properties"][f"p{i}"] = child
        node = child
    fields = fields_of(_entry(parameters=top))
    assert "level3" in fields.params
    assert "level100" not in fields.params
    assert len(fields.params) <= MAX_FIELD_CHARS


def test_a_wide_schema_is_read_to_a_bound():
    wide = {
        "type": "object",
        "properties": {f"p{i}": {"type": "string", "description": "x" * 50} for i in range(20_000)},
    }
    fields = fields_of(_entry(parameters=wide))
    assert len(fields.params) <= MAX_FIELD_CHARS
    assert fields.params.count("p") <= MAX_SCHEMA_NODES


def test_a_long_enum_is_read_to_a_bound():
    values = [f"v{i}" for i in range(10_000)]
    schema = {"type": "object", "properties": {"p": {"type": "string", "enum": values}}}
    words = fields_of(_entry(parameters=schema)).params.split()
    assert "v0" in words and f"v{MAX_ENUM_VALUES - 1}" in words
    assert f"v{MAX_ENUM_VALUES}" not in words  # well under the field's characters: the enum bound


def test_a_schema_that_is_not_json_schema_gives_no_parameter_text():
    assert fields_of(_entry(parameters={"type": "object", "properties": {"a": 3}})).params == "a"
