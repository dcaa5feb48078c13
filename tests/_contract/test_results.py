"""Tests for the result helpers: tool_error, tool_result, is_tool_error."""

from __future__ import annotations

import json

import pytest

from toolreg import is_tool_error, tool_error, tool_result


class TestToolError:
    def test_is_json_with_the_message_under_error(self) -> None:
        assert json.loads(tool_error("boom")) == {"error": "boom"}

    def test_extra_keywords_join_the_error(self) -> None:
        out = tool_error("bad path", path="/etc/passwd", code=13)
        assert json.loads(out) == {"error": "bad path", "path": "/etc/passwd", "code": 13}

    def test_error_key_comes_first(self) -> None:
        # Hosts (and is_tool_error) may sniff the prefix without parsing.
        assert tool_error("x", zzz=1, aaa=2).startswith('{"error"')

    def test_non_ascii_round_trips(self) -> None:
        assert json.loads(tool_error("fichier introuvable: été.txt"))["error"] == (
            "fichier introuvable: été.txt"
        )


class TestToolResult:
    @pytest.mark.parametrize(
        "data",
        [{"a": 1, "nested": {"b": [1, 2]}}, [1, "two", None], "plain", 3.5, True],
    )
    def test_serialises_data(self, data: object) -> None:
        assert json.loads(tool_result(data)) == data

    def test_serialises_keyword_arguments_when_no_data(self) -> None:
        assert json.loads(tool_result(count=2, files=["a", "b"])) == {
            "count": 2,
            "files": ["a", "b"],
        }

    def test_no_arguments_gives_an_empty_object(self) -> None:
        assert json.loads(tool_result()) == {}

    def test_returns_a_str(self) -> None:
        assert isinstance(tool_result({"a": 1}), str)


class TestIsToolError:
    def test_recognises_tool_error_output(self) -> None:
        assert is_tool_error(tool_error("boom"))
        assert is_tool_error(tool_error("boom", detail="more"))

    @pytest.mark.parametrize(
        "value",
        [
            tool_result({"ok": True}),
            tool_result(status="done"),
            "plain text result",
            "",
            '{"errors": []}',
            '{"error": ',  # starts like an error but is not JSON
            "[]",
        ],
    )
    def test_rejects_other_strings(self, value: str) -> None:
        assert not is_tool_error(value)

    @pytest.mark.parametrize(
        "value",
        [None, 42, {"error": "a dict, not a string"}, {"_multimodal": True, "content": []}],
    )
    def test_rejects_non_strings_without_raising(self, value: object) -> None:
        assert is_tool_error(value) is False
