"""MCP tool annotations: an author's are checked and named, a server's are filtered, all shared."""

from __future__ import annotations

import pytest

from toolreg._contract.annotations import (
    NO_ANNOTATIONS,
    received_annotations,
    tool_annotations,
)


def test_mcp_names_sdk_names_and_the_sdk_model_give_the_same_hints() -> None:
    ToolAnnotations = pytest.importorskip("mcp_types").ToolAnnotations

    expected = {"title": "Read", "readOnlyHint": True, "openWorldHint": False}
    mcp = tool_annotations("t", {"openWorldHint": False, "title": "Read", "readOnlyHint": True})
    sdk = tool_annotations("t", {"read_only_hint": True, "open_world_hint": False, "title": "Read"})
    model = tool_annotations(
        "t", ToolAnnotations(title="Read", read_only_hint=True, open_world_hint=False)
    )
    assert dict(mcp) == dict(sdk) == dict(model) == expected
    assert list(mcp) == ["title", "readOnlyHint", "openWorldHint"]  # MCP's order
    # A hint given as None is a hint not given, as MCP reads it.
    assert dict(tool_annotations("t", {"readOnlyHint": None, "title": "x"})) == {"title": "x"}


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (
            {"readonlyHint": True},
            "annotations key 'readonlyHint' is not an MCP tool annotation "
            "(did you mean 'readOnlyHint'?)",
        ),
        (
            {"dangerous": True},
            "annotations key 'dangerous' is not an MCP tool annotation; "
            "expected one of title, readOnlyHint",
        ),
        ({"readOnlyHint": "yes"}, "annotation 'readOnlyHint' must be True or False, got 'yes'"),
        ({"destructive_hint": 1}, "annotation 'destructive_hint' must be True or False, got 1"),
        ({"title": 3}, "annotation 'title' must be a string, got 3"),
        ({"readOnlyHint": True, "read_only_hint": False}, "'readOnlyHint' is given twice"),
        (
            ["readOnlyHint"],
            "annotations must be a mapping such as {'readOnlyHint': True}, got list",
        ),
        ({1: True}, "annotations key 1 is not an MCP tool annotation"),
    ],
)
def test_a_bad_key_or_value_is_named_with_the_tool(value: object, words: str) -> None:
    with pytest.raises(ValueError) as caught:
        tool_annotations("fetch", value)
    assert str(caught.value).startswith("Tool 'fetch': ")
    assert words in str(caught.value)


def test_a_servers_annotations_keep_only_known_keys_of_the_right_type() -> None:
    hostile = {
        "readOnlyHint": "true",  # a string is not a boolean
        "destructiveHint": 0,  # nor is a number
        "idempotentHint": True,
        "openWorldHint": None,
        "title": ["not", "text"],
        "x-run-as-root": True,
        "__proto__": {"readOnlyHint": True},
    }
    assert dict(received_annotations(hostile)) == {"idempotentHint": True}
    assert dict(received_annotations({"title": "T", "readOnlyHint": False})) == {
        "title": "T",
        "readOnlyHint": False,
    }
    for nothing in (None, "readOnlyHint", [("readOnlyHint", True)], 7, {"x": 1}):
        assert received_annotations(nothing) is NO_ANNOTATIONS


def test_annotations_are_read_only_and_shared_between_tools() -> None:
    first = tool_annotations("a", {"readOnlyHint": True})
    second = tool_annotations("b", {"read_only_hint": True})
    assert first is second  # one mapping for every tool with the same hints
    assert received_annotations({"readOnlyHint": True, "bogus": 1}) is first
    assert tool_annotations("c", {}) is NO_ANNOTATIONS
    assert tool_annotations("c", None) is NO_ANNOTATIONS
    with pytest.raises(TypeError):
        first["readOnlyHint"] = False  # type: ignore[index]
    assert dict(first) == {"readOnlyHint": True}
