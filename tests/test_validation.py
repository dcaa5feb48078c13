"""Strict argument validation: bad arguments never reach a handler, and the model is told why."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from toolreg import ToolRegistry, parse_config
from toolreg._toolsets import apply_config

PARAMS = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "mode": {"type": "string", "enum": ["read", "write"]},
        "limit": {"type": "integer", "minimum": 1},
        "tags": {"type": "array", "items": {"type": "string"}},
        "options": {
            "type": "object",
            "properties": {"depth": {"type": "integer"}},
            "additionalProperties": False,
        },
    },
    "required": ["path"],
    "additionalProperties": False,
}


class Recorder:
    def __init__(self) -> None:
        self.calls: list[dict] = []

    def __call__(self, args: dict) -> str:
        self.calls.append(args)
        return "ok"


@pytest.fixture
def handler() -> Recorder:
    return Recorder()


@pytest.fixture
def checked(reg: ToolRegistry, handler: Recorder) -> ToolRegistry:
    reg.register("files", "fs", {"parameters": PARAMS}, handler)
    return reg


def error(result: str) -> dict:
    data = json.loads(result)
    assert data["error_type"] == "invalid_arguments" and data["tool"] == "files"
    return data


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ({}, ["missing the required field(s) 'path'", "'required'"]),
        ({"path": 3}, ["argument 'path' must be string", "'type'"]),
        ({"path": "a", "colour": "red"}, ["unknown field(s) 'colour'", "allowed fields: 'path'"]),
        ({"path": "a", "mode": "append"}, ["argument 'mode' must be one of", "'enum'"]),
        ({"path": "a", "limit": 0}, ["argument 'limit' must be bigger than or equal to 1"]),
        ({"path": "a", "tags": ["x", 2]}, ["argument 'tags[1]' must be string"]),
        ({"path": "a", "options": {"depth": "deep"}}, ["argument 'options.depth' must be"]),
        ({"path": "a", "options": {"width": 1}}, ["argument 'options' has unknown field(s)"]),
        ([1, 2], ["the arguments object must be object"]),
    ],
)
def test_bad_arguments_are_refused_with_field_and_rule(checked, handler, args, fragments):
    message = error(checked.dispatch("files", args))["error"]
    for fragment in fragments:
        assert fragment in message
    assert "call the tool again" in message
    assert handler.calls == [], "the handler never runs on invalid arguments"


def test_good_arguments_pass_untouched(checked, handler):
    args = {"path": "a", "mode": "read", "options": {"depth": 2}}
    assert checked.dispatch("files", args) == "ok"
    assert handler.calls == [args] and handler.calls[0] is args


def test_json_string_arguments_are_parsed_then_validated(checked, handler):
    assert checked.dispatch("files", '{"path": "a"}') == "ok"
    assert handler.calls == [{"path": "a"}]
    assert "not valid JSON" in error(checked.dispatch("files", '{"path": '))["error"]
    assert "unknown field" in error(checked.dispatch("files", '{"path": "a", "x": 1}'))["error"]


def test_null_arguments_mean_none(reg):
    reg.register("ping", "t", {}, lambda args: f"got {args!r}")
    assert reg.dispatch("ping", None) == "got {}"


def test_async_dispatch_validates_too(checked, handler):
    result = asyncio.run(checked.adispatch("files", {"path": 1}))
    assert "must be string" in error(result)["error"]
    assert handler.calls == []


def test_tool_may_opt_out(reg, handler):
    reg.register("loose", "fs", {"parameters": PARAMS}, handler, validate=False)
    assert reg.dispatch("loose", {"anything": True}) == "ok"
    assert reg.get_options("loose").validate is False


def test_operator_may_turn_validation_off_and_on(checked, handler):
    apply_config(parse_config("[dispatch]\nvalidate = false\n"), checked)
    assert checked.validation_enabled is False
    assert checked.dispatch("files", {"nope": 1}) == "ok"
    apply_config(parse_config(""), checked)
    assert "missing" in error(checked.dispatch("files", {"nope": 1}))["error"]


def test_validator_is_compiled_once_per_entry_and_again_after_a_reload(checked, handler):
    checked.dispatch("files", {"path": "a"})
    first = checked._plans["files"].check
    checked.dispatch("files", {"path": "b"})
    assert checked._plans["files"].check is first, "cached per tool"
    stricter = {**PARAMS, "required": ["path", "mode"]}
    checked.register("files", "fs", {"parameters": stricter}, handler)
    assert "'mode'" in error(checked.dispatch("files", {"path": "a"}))["error"]
    assert checked._plans["files"].check is not first, "a new generation, a new validator"


def test_schema_the_validator_cannot_compile_does_not_block_calls(reg, handler, caplog):
    weird = {"type": "object", "properties": {"p": {"type": "string", "pattern": "(?<"}}}
    reg.register("weird", "t", {"parameters": weird}, handler)
    with caplog.at_level(logging.WARNING, logger="toolreg.validation"):
        assert reg.dispatch("weird", {"p": "x"}) == "ok"
    assert "will not be validated" in caplog.text and "weird" in caplog.text


def test_validation_happens_before_the_timeout_runner(reg, handler):
    reg.register("slowish", "t", {"parameters": PARAMS}, handler, timeout=5)
    assert "missing" in json.loads(reg.dispatch("slowish", {}))["error"]
    assert handler.calls == []
