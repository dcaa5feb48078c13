"""The entry record: annotations and an output schema cost nothing to the entries without them."""

from __future__ import annotations

import sys

import pytest

from toolreg import ToolEntry
from toolreg._contract.annotations import NO_ANNOTATIONS
from toolreg._contract.schema_checks import check_output_schema

OUTPUT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def handler(args: dict) -> str:
    return "ok"


def entry(**extra: object) -> ToolEntry:
    return ToolEntry(name="t", toolset="s", schema={}, handler=handler, **extra)  # type: ignore[arg-type]


def test_an_entry_without_them_stores_nothing_for_them() -> None:
    plain, other = entry(), entry()
    assert type(plain) is ToolEntry
    assert not hasattr(plain, "__dict__")
    assert plain.annotations is NO_ANNOTATIONS and other.annotations is NO_ANNOTATIONS
    assert plain.output_schema is None
    described = entry(annotations={"readOnlyHint": True})
    # The two extra fields live on the described entries only.
    assert sys.getsizeof(plain) < sys.getsizeof(described)
    assert sys.getsizeof(plain) == sys.getsizeof(object.__new__(ToolEntry))


def test_an_entry_with_them_keeps_them() -> None:
    described = entry(annotations={"read_only_hint": True, "title": "T"}, output_schema=OUTPUT)
    assert isinstance(described, ToolEntry)
    assert dict(described.annotations) == {"title": "T", "readOnlyHint": True}
    assert described.output_schema is OUTPUT
    only_schema = entry(output_schema=OUTPUT)
    assert only_schema.annotations is NO_ANNOTATIONS
    assert only_schema.output_schema is OUTPUT
    with pytest.raises(AttributeError):  # a plain entry cannot grow them afterwards
        entry().annotations = {"readOnlyHint": True}  # type: ignore[misc]


def test_bad_ones_are_refused_naming_the_tool() -> None:
    with pytest.raises(ValueError, match=r"Tool 't': annotations key 'readOnly'"):
        entry(annotations={"readOnly": True})
    with pytest.raises(ValueError, match=r"Tool 't': output_schema must have \"type\": \"object\""):
        entry(output_schema={"type": "array"})


@pytest.mark.parametrize(
    ("schema", "words"),
    [
        ("{}", "output_schema must be a JSON-Schema object (a dict), got str"),
        ({"type": "string"}, 'output_schema must have "type": "object", got \'string\''),
        ({"type": "object", "properties": []}, "output_schema 'properties' must be a dict"),
        (
            {"type": "object", "properties": {"a": True}},
            "output_schema 'properties.a' must be a dict",
        ),
        (
            {"type": "object", "properties": {}, "required": ["a"]},
            "output_schema 'required' names undeclared properties: ['a']",
        ),
        (
            {"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}},
            "output_schema has $ref 'https://example.com/s.json'",
        ),
        (
            {"type": "object", "properties": {}, "allOf": [{"$ref": "#"}]},
            "output_schema has a $ref loop",
        ),
        (
            {"type": "object", "properties": {"a": {"default": object()}}},
            "output_schema is not JSON-serialisable",
        ),
    ],
)
def test_output_schema_is_checked_like_parameters(schema: object, words: str) -> None:
    with pytest.raises(ValueError) as caught:
        check_output_schema("t", schema)
    assert str(caught.value).startswith("Tool 't': ")
    assert words in str(caught.value)
