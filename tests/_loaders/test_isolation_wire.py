"""The isolated pack's listing, read by its parent as untrusted input; the load spec."""

from __future__ import annotations

import datetime
import json

import pytest

from toolreg import PluginOutcome, tool_error
from toolreg._discovery.entrypoints import PackRecord
from toolreg._loaders.isolated_link import unwrap
from toolreg._loaders.isolated_wire import (
    META_OUTCOME,
    PACK_ENTRY,
    PackSpec,
    hook_entry,
    pack_entry,
    read_listing,
    tool_meta,
)


def listed(name: str, meta: object) -> dict:
    return {"name": name, "description": "d", "inputSchema": {"type": "object"}, "_meta": meta}


def loaded(**extra: object) -> dict:
    outcome = PluginOutcome("p", "", "", "", hooks=["toolreg_configure", "toolreg_pre_tool_call"])
    entry = pack_entry(outcome)
    entry["_meta"][META_OUTCOME].update(extra)
    return entry


def test_tools_hooks_and_outcome_are_read():
    manifest = read_listing(
        "p",
        [
            listed("a", tool_meta("ts", True)),
            listed("b", tool_meta("ts", False)),
            loaded(),
            hook_entry("toolreg_pre_tool_call"),
        ],
    )
    assert manifest.status == "loaded"
    assert [(t.name, t.toolset, t.override) for t in manifest.tools] == [
        ("a", "ts", True),
        ("b", "ts", False),
    ]
    assert manifest.tools[0].schema == {
        "name": "a",
        "description": "d",
        "parameters": {"type": "object"},
    }
    assert manifest.hooks == ("toolreg_configure", "toolreg_pre_tool_call")
    assert manifest.dispatch_hooks == ("toolreg_pre_tool_call",)


@pytest.mark.parametrize(
    "meta",
    [None, {}, "ts", {"toolreg/toolset": ""}, {"toolreg/toolset": 3}, ["toolreg/toolset"]],
)
def test_a_tool_without_a_toolset_is_skipped_with_a_reason(meta):
    manifest = read_listing("p", [listed("a", meta), listed("b", tool_meta("ts", False)), loaded()])
    assert [t.name for t in manifest.tools] == ["b"]
    assert manifest.skipped == ("tool 'a' of isolated pack 'p' names no toolset",)


@pytest.mark.parametrize("flag", ["yes", 1, "true", None])
def test_only_a_literal_true_asks_to_override(flag):
    meta = {"toolreg/toolset": "ts", "toolreg/override": flag}
    (tool,) = read_listing("p", [listed("a", meta), loaded()]).tools
    assert tool.override is False


def test_a_listing_that_reports_nothing_or_nonsense_is_a_failed_load():
    assert read_listing("p", [listed("a", tool_meta("ts", False))]).status == "failed"
    assert "did not report" in read_listing("p", []).reason
    odd = read_listing("p", [loaded(status="pwned", hooks="toolreg_pre_tool_call", reason=7)])
    assert (odd.status, odd.hooks, odd.reason) == ("failed", (), "")
    broken = {"name": PACK_ENTRY, "_meta": {META_OUTCOME: "loaded"}}
    assert read_listing("p", [broken]).status == "failed"


def test_spec_round_trip_and_settings_json_cannot_carry():
    record = PackRecord("toolreg-x", "toolreg-x", "1.0", (("x", "x_pack"),), None, "/site/x")
    spec = PackSpec("toolreg-x", record=record, settings={"a": [1, {"b": True}]}, validate=False)
    again = PackSpec.from_json(spec.to_json())
    assert again == spec and again.record == record
    bad = PackSpec("toolreg-x", settings={"when": datetime.date(2024, 1, 1)})
    with pytest.raises(TypeError, match=r"plugins\.entries\.toolreg-x\.settings"):
        bad.to_json()


def test_unwrap_keeps_the_childs_tool_error_as_written():
    child = tool_error("no such table", error_type="sql")
    assert unwrap(tool_error(child)) == child
    own = tool_error("isolated pack p is disconnected; t cannot run now")
    assert unwrap(own) == own
    assert unwrap("plain") == "plain"
    assert json.loads(unwrap(tool_error(child)))["error_type"] == "sql"


def test_a_childs_annotations_and_output_schema_are_read_as_untrusted():
    good_schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    hinted = {
        **listed("a", tool_meta("ts", False)),
        "annotations": {"readOnlyHint": True, "destructiveHint": "no", "sudo": True},
        "outputSchema": good_schema,
    }
    bad = {**listed("b", tool_meta("ts", False)), "outputSchema": {"$ref": "http://evil/x"}}
    manifest = read_listing("p", [hinted, bad, listed("c", tool_meta("ts", False)), loaded()])
    a, b, c = manifest.tools
    assert dict(a.annotations) == {"readOnlyHint": True}
    assert a.output_schema == good_schema
    # A bad output schema is left out, and said; the tool itself stays.
    assert b.name == "b" and b.output_schema is None
    (reason,) = manifest.skipped
    assert reason.startswith("isolated pack 'p': its output schema is left out: Tool 'b'")
    assert not c.annotations and c.output_schema is None
