"""MCP shapes in the registry's terms, without a server: schemas, descriptions, results."""

from __future__ import annotations

import json

from toolreg import is_tool_error
from toolreg._mcp.convert import annotations, description, output_schema, parameters, to_result


def test_description_and_parameters_are_kept() -> None:
    tool = {"name": "t", "description": " Does it. ", "inputSchema": {"properties": {"a": {}}}}
    assert description("srv", tool) == "[server srv] Does it."
    assert description("srv", {"name": "t"}) == "[server srv]"
    assert parameters(tool) == {"type": "object", "properties": {"a": {}}}
    assert parameters({"name": "t"}) == {"type": "object", "properties": {}}


def test_results_follow_the_dispatch_contract() -> None:
    text = {"type": "text", "text": "hi"}
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    assert to_result({"content": [text, {"type": "text", "text": "there"}]}) == "hi\nthere"
    assert json.loads(to_result({"content": [text], "isError": True})) == {"error": "hi"}
    assert is_tool_error(to_result({"content": [], "isError": True}))
    multimodal = to_result({"content": [text, image], "structuredContent": {"n": 1}})
    assert multimodal == {"_multimodal": True, "content": [text, image], "structured": {"n": 1}}
    assert to_result({"content": [], "structuredContent": {"n": 1}}) == '{"n": 1}'
    assert to_result({"content": [text], "structuredContent": {"n": 1}}) == "hi"  # text wins
    link = {"type": "resource_link", "name": "doc", "uri": "file:///d"}
    embedded = {"type": "resource", "resource": {"uri": "file:///e", "text": "body"}}
    assert to_result({"content": [link, embedded]}) == "[resource doc file:///d]\nbody"
    assert to_result({"content": []}) == ""


def test_multimodal_results_and_errors_stay_within_bounds() -> None:
    text = {"type": "text", "text": "abcdef"}
    image = {"type": "image", "data": "A" * 40, "mimeType": "image/png"}
    payload = {"content": [image, text, image], "structuredContent": {"n": 1}}
    assert to_result(payload, 1000)["content"] == [image, text, image]
    cut = to_result(payload, 44)
    assert cut["content"][:2] == [image, {"type": "text", "text": "abcd"}]
    assert cut["content"][2]["text"] == (
        "…[truncated: text, image, structuredContent (50 characters) left out past 44 characters]"
    )
    assert "structured" not in cut
    error = json.loads(
        to_result({"content": [{"type": "text", "text": "e" * 10_000}], "isError": True})
    )
    assert len(error["error"]) < 2100 and error["error"].endswith("of 10000 characters]")


def test_a_listed_tools_annotations_and_output_schema_are_read_as_untrusted() -> None:
    tool = {
        "name": "t",
        "annotations": {"readOnlyHint": "yes", "destructiveHint": False, "x": 1, "title": 5},
        "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
    }
    assert dict(annotations(tool)) == {"destructiveHint": False}
    assert not annotations({"name": "t", "annotations": ["readOnlyHint"]})
    assert output_schema("mcp__s__t", tool) == (tool["outputSchema"], "")
    assert output_schema("mcp__s__t", {"name": "t"}) == (None, "")
    for bad, words in [
        ({"type": "array"}, '"type": "object"'),
        ({"type": "object", "properties": {"a": {"$ref": "file:///etc/passwd"}}}, "$ref"),
        ({"type": "object", "properties": {}, "allOf": [{"$ref": "#"}]}, "$ref loop"),
        ("{}", "a JSON-Schema object"),
    ]:
        schema, why = output_schema("mcp__s__t", {"name": "t", "outputSchema": bad})
        assert schema is None
        assert why.startswith("Tool 'mcp__s__t': output_schema") and words in why


def test_structured_content_is_kept_only_when_asked() -> None:
    text = {"type": "text", "text": '{"n": 1}'}
    payload = {"content": [text], "structuredContent": {"n": 1}}
    assert to_result(payload) == '{"n": 1}'
    assert to_result(payload, keep_structured=True) == {
        "_multimodal": True,
        "content": [text],
        "structured": {"n": 1},
    }
    # Nothing to keep: a structuredContent that is not an object, or an error.
    assert to_result({"content": [text], "structuredContent": [1]}, keep_structured=True) == (
        '{"n": 1}'
    )
    error = to_result({**payload, "isError": True}, keep_structured=True)
    assert is_tool_error(error)
    # Past the limit the object is left out, and the text says so.
    capped = to_result(payload, 10, keep_structured=True)
    assert "structured" not in capped and "structuredContent" in capped["content"][-1]["text"]
