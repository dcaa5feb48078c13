"""Strict argument validation: bad arguments never reach a handler, and the model is told why."""

from __future__ import annotations

import asyncio
import http.server
import json
import logging
import threading
import uuid

import fastjsonschema
import pytest

from conftest import REDOS_PATTERN, REDOS_TEXT, counting_thread
from toolreg import ToolRegistry, parse_config
from toolreg._policy.apply_config import apply_config
from toolreg._schemas import validation as validation

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
    first = checked._dispatcher._plans["files"].check
    checked.dispatch("files", {"path": "b"})
    assert checked._dispatcher._plans["files"].check is first, "cached per tool"
    stricter = {**PARAMS, "required": ["path", "mode"]}
    checked.register("files", "fs", {"parameters": stricter}, handler)
    assert "'mode'" in error(checked.dispatch("files", {"path": "a"}))["error"]
    assert checked._dispatcher._plans["files"].check is not first, (
        "a new generation, a new validator"
    )


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """Every schema fastjsonschema really compiles from now on (a spy: it still compiles)."""
    seen: list[dict] = []
    real = fastjsonschema.compile

    def spy(schema: dict, **options: object) -> object:
        seen.append(schema)
        return real(schema, **options)

    monkeypatch.setattr(fastjsonschema, "compile", spy)
    return seen


def fresh_params(tag: str) -> dict:
    """PARAMS under a title no other test uses, so the shared cache has never seen it."""
    return {**PARAMS, "title": f"{tag} {uuid.uuid4()}"}


def test_tools_sharing_a_schema_share_one_compiled_validator(reg, handler, compiles):
    params = fresh_params("shared")
    for name in ("one", "two", "three"):
        # An equal schema in a new dict each time, as a pack or a refresh sends it.
        reg.register(name, "t", {"parameters": json.loads(json.dumps(params))}, handler)
    for name in ("one", "two", "three"):
        message = json.loads(reg.dispatch(name, {"path": 1}))
        assert message["tool"] == name and f"tool {name!r}" in message["error"], (
            "the shared validator must not carry the first tool's name"
        )
        assert reg.dispatch(name, {"path": "a"}) == "ok"
    assert len(compiles) == 1


def test_registering_the_same_schema_again_compiles_nothing(reg, handler, compiles):
    params = fresh_params("again")
    reg.register("files", "fs", {"parameters": params}, handler)
    assert reg.dispatch("files", {"path": "a"}) == "ok"
    for _ in range(3):
        reg.register("files", "fs", {"parameters": dict(params)}, handler)  # a new generation
        assert "'path'" in json.loads(reg.dispatch("files", {}))["error"]
    assert len(compiles) == 1


def test_a_schema_edited_after_use_is_compiled_again_and_the_original_kept(reg, handler, compiles):
    params = fresh_params("edited")
    reg.register("first", "fs", {"parameters": params}, handler)
    assert reg.dispatch("first", {"path": "a"}) == "ok"
    params["required"] = ["path", "limit"]  # the caller's own dict, changed in place
    reg.register("second", "fs", {"parameters": params}, handler)
    assert "'limit'" in json.loads(reg.dispatch("second", {"path": "a"}))["error"]
    params["required"] = ["path"]  # back as it was: the first compile, unharmed by the edit
    reg.register("third", "fs", {"parameters": params}, handler)
    assert reg.dispatch("third", {"path": "a"}) == "ok"
    assert len(compiles) == 2


def test_key_order_is_part_of_the_key_because_messages_follow_it(reg, handler):
    forward = {
        "type": "object",
        "properties": {"b": {"type": "string"}, "a": {"type": "string"}},
        "additionalProperties": False,
        "title": str(uuid.uuid4()),
    }
    backward = {**forward, "properties": dict(reversed(forward["properties"].items()))}
    reg.register("forward", "t", {"parameters": forward}, handler)
    reg.register("backward", "t", {"parameters": backward}, handler)
    assert "allowed fields: 'b', 'a'" in json.loads(reg.dispatch("forward", {"c": 1}))["error"]
    assert "allowed fields: 'a', 'b'" in json.loads(reg.dispatch("backward", {"c": 1}))["error"]


def test_the_regex_budget_is_part_of_the_key(monkeypatch):
    params = fresh_params("budget")
    first = validation.compiled_schema(params)
    assert validation.compiled_schema(dict(params)) is first
    monkeypatch.setattr(validation, "REGEX_SECONDS", 0.25)
    assert validation.compiled_schema(dict(params)) is not first


def test_the_cache_is_bounded():
    info = validation._cached.cache_info()
    assert info.maxsize == validation.CACHE_SIZE
    for n in range(validation.CACHE_SIZE + 5):
        validation.compiled_schema({"type": "object", "properties": {f"p{n}": {}}, "title": "b"})
    assert validation._cached.cache_info().currsize == validation.CACHE_SIZE
    assert 0 < len(validation._BY_ENCODING) <= validation.CACHE_SIZE


def test_an_equal_schema_is_found_without_its_json_text(monkeypatch):
    # An empty cache: one that earlier tests filled could be emptied, when full, mid-test.
    validation.clear_cache()
    # Both dicts as a pack reload or an MCP refresh sends them: built alike.
    params = json.loads(json.dumps(fresh_params("encoding")))
    first = validation.compiled_schema(params)
    # Equal content holding one sub-schema twice encodes otherwise: found by its JSON.
    shared = {**params, "properties": dict.fromkeys(params["properties"], {"type": "string"})}
    alike = {**params, "properties": {k: {"type": "string"} for k in params["properties"]}}
    assert validation.compiled_schema(shared) is validation.compiled_schema(alike)
    copy = json.loads(json.dumps(params))

    def no_json(*args, **kwargs):
        raise AssertionError("the JSON key was computed")

    monkeypatch.setattr(validation.json, "dumps", no_json)
    assert validation.compiled_schema(copy) is first


def test_the_encoding_key_tells_types_formats_and_order_apart():
    params = {
        "type": "object",
        "title": fresh_params("kinds")["title"],
        "properties": {"when": {"type": "string", "format": "date"}},
    }
    with_formats = validation.compiled_schema(params)
    as_notes = validation.compiled_schema(dict(params), use_formats=False)
    assert as_notes is not with_formats
    assert as_notes.validate({"when": "not a date"}) == {"when": "not a date"}
    # A tuple reads as the JSON list it encodes to: the same compiled schema,
    # found under both encodings.
    listed = {**params, "required": ["when"]}
    tupled = {**params, "required": ("when",)}
    assert validation.compiled_schema(tupled) is validation.compiled_schema(listed)
    reordered = {**params, "properties": {"b": {}, "a": {}}}
    ordered = {**params, "properties": {"a": {}, "b": {}}}
    assert validation.compiled_schema(reordered) is not validation.compiled_schema(ordered)


def test_many_threads_registering_and_dispatching_one_schema(reg, handler):
    params = fresh_params("threads")
    failures: list[str] = []

    def worker(n: int) -> None:
        name = f"tool_{n}"
        reg.register(name, "t", {"parameters": json.loads(json.dumps(params))}, handler)
        for _ in range(20):
            if reg.dispatch(name, {"path": "a"}) != "ok":
                failures.append(f"{name}: a valid call was refused")
            refused = json.loads(reg.dispatch(name, {"path": "a", "x": 1}))
            if refused.get("tool") != name:
                failures.append(f"{name}: {refused}")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_a_schema_that_does_not_compile_is_reported_for_each_tool(reg, handler, caplog):
    weird = {"type": "object", "properties": {"p": {"type": "string", "pattern": "(?<"}}}
    reg.register("weird_a", "t", {"parameters": weird}, handler)
    reg.register("weird_b", "t", {"parameters": dict(weird)}, handler)
    with caplog.at_level(logging.WARNING, logger="toolreg.validation"):
        assert reg.dispatch("weird_a", {"p": 1}) == "ok"
        assert reg.dispatch("weird_b", {"p": 1}) == "ok"
    assert "Tool weird_a: arguments will not be validated" in caplog.text
    assert "Tool weird_b: arguments will not be validated" in caplog.text


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


# --- regular expressions from schemas are hostile too ---------------------------------------


@pytest.fixture
def short_budget(monkeypatch: pytest.MonkeyPatch) -> float:
    monkeypatch.setattr(validation, "REGEX_SECONDS", 0.5)
    return 0.5


def test_schema_pattern_is_matched_and_explained(reg, handler):
    params = {"type": "object", "properties": {"code": {"type": "string", "pattern": "^[a-z]+$"}}}
    reg.register("coded", "t", {"parameters": params}, handler)
    assert reg.dispatch("coded", {"code": "abc"}) == "ok"
    message = json.loads(reg.dispatch("coded", {"code": "ABC"}))["error"]
    assert "argument 'code' must match pattern ^[a-z]+$" in message and "'pattern'" in message


def test_backtracking_schema_pattern_is_cut_off_while_other_threads_run(reg, handler, short_budget):
    params = {"type": "object", "properties": {"p": {"type": "string", "pattern": REDOS_PATTERN}}}
    reg.register("redos", "t", {"parameters": params}, handler)
    with counting_thread() as count:
        result = json.loads(reg.dispatch("redos", {"p": REDOS_TEXT}))
    assert result["error_type"] == "invalid_arguments"
    assert REDOS_PATTERN in result["error"] and "took longer than 0.5 s" in result["error"]
    assert count[0] > 1000, "the match must not hold the GIL"
    assert handler.calls == []


def test_backtracking_pattern_properties_key_is_cut_off(reg, handler, short_budget):
    params = {"type": "object", "patternProperties": {REDOS_PATTERN: {"type": "integer"}}}
    reg.register("keys", "t", {"parameters": params}, handler)
    with counting_thread() as count:
        result = json.loads(reg.dispatch("keys", {REDOS_TEXT: 1}))
    assert REDOS_PATTERN in result["error"] and "took longer" in result["error"]
    assert count[0] > 1000
    assert reg.dispatch("keys", {"aa": 1}) == "ok", "a key the pattern matches quickly is checked"
    assert "must be integer" in json.loads(reg.dispatch("keys", {"aa": "x"}))["error"]


def test_one_budget_covers_every_pattern_of_a_call(reg, handler, short_budget):
    # Each item alone could stay just under a per-match limit; together they must not.
    item = {"type": "string", "pattern": REDOS_PATTERN}
    params = {"type": "object", "properties": {"items": {"type": "array", "items": item}}}
    reg.register("many", "t", {"parameters": params}, handler)
    result = json.loads(reg.dispatch("many", {"items": [REDOS_TEXT] * 50}))
    assert "took longer than 0.5 s" in result["error"]


def test_compile_time_matches_of_a_hostile_schema_are_bounded(reg, handler, caplog, short_budget):
    # fastjsonschema matches required names against patternProperties while compiling.
    inner = {
        "type": "object",
        "patternProperties": {REDOS_PATTERN: {"type": "string"}},
        "required": [REDOS_TEXT],
        "additionalProperties": False,
    }
    params = {"type": "object", "properties": {"inner": inner}}
    reg.register("trap", "t", {"parameters": params}, handler)
    with caplog.at_level(logging.WARNING, logger="toolreg.validation"):
        assert reg.dispatch("trap", {}) == "ok"
    assert "will not be validated" in caplog.text and "takes too long" in caplog.text


def test_schema_ref_to_a_url_is_never_fetched(reg, handler, caplog):
    fetched: list[str] = []

    class Recording(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the http.server API)
            fetched.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"type": "string"}')

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Recording)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/schema.json"
        params = {"type": "object", "properties": {"a": {"$ref": url}}}
        with pytest.raises(ValueError, match="never fetched"):
            reg.register("remote", "t", {"parameters": params}, handler)
        # A schema edited to hold one after registration is still never fetched.
        schema = {"parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}
        reg.register("edited", "t", schema, handler)
        schema["parameters"]["properties"]["a"] = {"$ref": url}
        with caplog.at_level(logging.WARNING, logger="toolreg.validation"):
            assert reg.dispatch("edited", {"a": 1}) == "ok"
    finally:
        server.shutdown()
        server.server_close()
    assert fetched == []
    assert "will not be validated" in caplog.text


def test_local_refs_still_validate(reg, handler):
    params = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/small"}},
        "$defs": {"small": {"type": "integer", "maximum": 3}},
    }
    reg.register("local", "t", {"parameters": params}, handler)
    assert reg.dispatch("local", {"a": 2}) == "ok"
    assert (
        "must be smaller than or equal to 3" in json.loads(reg.dispatch("local", {"a": 9}))["error"]
    )


def test_structured_results_are_checked_against_the_output_schema(caplog):
    schema = {
        "type": "object",
        "properties": {
            "at": {"type": "string", "format": "date-time"},
            "items": {"type": "array", "items": {"type": "integer"}},
            "code": {"type": "string", "pattern": "^[A-Z]+$"},
        },
        "required": ["items"],
    }
    check = validation.compile_result_checker("t", schema)
    assert check is not None
    # format is a note, as MCP clients read it: a naive timestamp passes.
    assert check({"at": "2025-01-31T14:05:09", "items": [1]}) is None
    assert check({"items": [1, "2"]}) == (
        "field 'items[1]' must be integer (JSON Schema rule 'type')"
    )
    assert "is missing the required field(s) 'items'" in check({})
    assert check([]) == "the result must be object (JSON Schema rule 'type')"
    assert "JSON Schema rule 'pattern'" in check({"items": [], "code": "abc"})
    with caplog.at_level(logging.WARNING, logger="toolreg.validation"):
        assert validation.compile_result_checker("u", {"type": "object", "minimum": "x"}) is None
    assert "Tool u: structured results will not be validated" in caplog.text


def test_what_has_no_encoding_or_no_json_never_enters_the_encoding_cache():
    class Sly(str):
        """Equal to its text, but not plain data: marshal refuses it."""

    title = fresh_params("sly")["title"]
    sly = {"type": "object", "title": Sly(title), "properties": {"p": {"type": "string"}}}
    plain = {"type": "object", "title": title, "properties": {"p": {"type": "string"}}}
    before = dict(validation._BY_ENCODING)
    # Read as its JSON: the same compiled schema as the plain one, found by that key.
    assert validation.compiled_schema(sly) is validation.compiled_schema(plain)
    # Bytes encode for marshal, not for JSON: compiled as they are, and never kept.
    odd = {**plain, "title": title.encode()}
    first, second = validation.compiled_schema(odd), validation.compiled_schema(odd)
    assert first is not second
    added = set(validation._BY_ENCODING) - set(before)
    assert all(key[0] != validation.content_key(odd) for key in added)
    assert len(added) == 1  # the plain schema's, and nothing for the other two
