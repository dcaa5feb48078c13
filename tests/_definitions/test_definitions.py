"""Tests for tool definitions: shapes, filtering, dynamic overrides, memo, sharing."""

from __future__ import annotations

import copy
import gc
import json
import logging
import pickle
import threading
import weakref
from typing import Any

import pytest

from conftest import FakeClock
from toolreg import ToolEntry, ToolRegistry
from toolreg._schemas.formats import FORMATS


class Switch:
    """A check_fn whose answer the test flips."""

    def __init__(self, ok: bool = True) -> None:
        self.ok = ok

    def __call__(self) -> bool:
        return self.ok


def handler(args: dict[str, Any]) -> str:
    return "ok"


def schema(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"The {name} tool.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "A path."}},
            "required": ["path"],
        },
    }


def add(reg: ToolRegistry, name: str, toolset: str = "ts", **kwargs: Any) -> dict[str, Any]:
    s = schema(name)
    reg.register(name, toolset, s, handler, **kwargs)
    return s


def names(definitions: list[dict[str, Any]]) -> list[str]:
    return [d["function"]["name"] for d in definitions]


class TestShapes:
    def test_openai_shape(self, reg: ToolRegistry) -> None:
        s = add(reg, "read")
        assert reg.get_definitions() == [
            {
                "type": "function",
                "function": {
                    "name": "read",
                    "description": "The read tool.",
                    "parameters": s["parameters"],
                },
            }
        ]

    def test_anthropic_shape(self, reg: ToolRegistry) -> None:
        s = add(reg, "read")
        assert reg.get_definitions(format="anthropic") == [
            {"name": "read", "description": "The read tool.", "input_schema": s["parameters"]}
        ]

    def test_mcp_shape(self, reg: ToolRegistry) -> None:
        s = add(reg, "read")
        assert reg.get_definitions(format="mcp") == [
            {"name": "read", "description": "The read tool.", "inputSchema": s["parameters"]}
        ]

    def test_unknown_format_raises_value_error(self, reg: ToolRegistry) -> None:
        add(reg, "read")
        with pytest.raises(ValueError, match="bogus"):
            reg.get_definitions(format="bogus")
        with pytest.raises(ValueError):
            reg.get_definitions_json(format="bogus")
        with pytest.raises(ValueError):
            reg.get_definition("read", format="bogus")

    def test_schema_description_is_what_the_model_sees(self, reg: ToolRegistry) -> None:
        # description= is the short line for listings; the model gets the schema's text.
        s = add(reg, "read", description="Read a file.")
        assert reg.get_definitions()[0]["function"]["description"] == s["description"]
        assert reg.get_entry("read").description == "Read a file."
        reg.register("bare", "ts", {"parameters": {"type": "object"}}, handler, description="B.")
        assert reg.get_definition("bare")["function"]["description"] == "B."

    def test_missing_parameters_become_an_empty_object_schema(self, reg: ToolRegistry) -> None:
        reg.register("ping", "ts", {"description": "Ping."}, handler)
        reg.register("pong", "ts", {"parameters": {"type": "object"}}, handler)
        params = [d["function"]["parameters"] for d in reg.get_definitions()]
        assert params == [
            {"type": "object", "properties": {}},
            {"type": "object", "properties": {}},
        ]


class TestSelection:
    def test_sorted_by_name(self, reg: ToolRegistry) -> None:
        for name in ["zeta", "alpha", "mid", "Beta"]:
            add(reg, name)
        assert names(reg.get_definitions()) == sorted(["zeta", "alpha", "mid", "Beta"])

    def test_only_available_tools(self, reg: ToolRegistry, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("TOOLREG_TEST_TOKEN", raising=False)
        add(reg, "free")
        add(reg, "probed_off", check_fn=lambda: False)
        add(reg, "probed_on", check_fn=lambda: True)
        add(reg, "needs_env", requires_env=["TOOLREG_TEST_TOKEN"])
        assert names(reg.get_definitions()) == ["free", "probed_on"]

    def test_tool_names_filters_and_ignores_unknown_names(self, reg: ToolRegistry) -> None:
        for name in ["a", "b", "c"]:
            add(reg, name)
        assert names(reg.get_definitions(["c", "a", "ghost"])) == ["a", "c"]
        assert names(reg.get_definitions(iter(["b"]))) == ["b"]
        assert reg.get_definitions([]) == []

    def test_json_matches_the_list(self, reg: ToolRegistry) -> None:
        add(reg, "b")
        add(reg, "a")
        for fmt in ["openai", "anthropic", "mcp"]:
            text = reg.get_definitions_json(["a", "b"], format=fmt)
            assert isinstance(text, str)
            assert json.loads(text) == reg.get_definitions(["a", "b"], format=fmt)


class TestGetDefinition:
    def test_one_tool_regardless_of_availability(self, reg: ToolRegistry) -> None:
        add(reg, "off", check_fn=lambda: False)
        assert reg.get_definitions() == []
        assert reg.get_definition("off") == {
            "type": "function",
            "function": {
                "name": "off",
                "description": "The off tool.",
                "parameters": schema("off")["parameters"],
            },
        }
        assert (
            reg.get_definition("off", format="anthropic")["input_schema"]
            == (schema("off")["parameters"])
        )

    def test_unknown_tool_is_none(self, reg: ToolRegistry) -> None:
        assert reg.get_definition("ghost") is None

    def test_applies_dynamic_overrides(self, reg: ToolRegistry) -> None:
        add(reg, "dyn", dynamic_schema_overrides=lambda: {"description": "Now dynamic."})
        assert reg.get_definition("dyn")["function"]["description"] == "Now dynamic."

    def test_plain_tool_logs_nothing(
        self, reg: ToolRegistry, caplog: pytest.LogCaptureFixture
    ) -> None:
        add(reg, "plain")
        with caplog.at_level(logging.DEBUG, logger="toolreg"):
            assert reg.get_definition("plain") is not None
        assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


class TestDynamicOverrides:
    def test_merged_on_every_call(self, reg: ToolRegistry) -> None:
        calls = []

        def overrides() -> dict[str, Any]:
            calls.append(1)
            return {
                "description": f"Call {len(calls)}.",
                "parameters": {
                    "type": "object",
                    "properties": {f"p{len(calls)}": {"type": "integer"}},
                },
            }

        add(reg, "dyn", dynamic_schema_overrides=overrides)
        add(reg, "plain")
        first, second = reg.get_definitions(), reg.get_definitions()

        assert names(first) == ["dyn", "plain"]
        assert first[0]["function"]["description"] == "Call 1."
        assert second[0]["function"]["description"] == "Call 2."
        assert list(second[0]["function"]["parameters"]["properties"]) == ["p2"]
        assert json.loads(reg.get_definitions_json())[0]["function"]["description"] == "Call 3."

    def test_none_or_empty_keeps_the_static_schema(self, reg: ToolRegistry) -> None:
        add(reg, "none", dynamic_schema_overrides=lambda: None)
        add(reg, "empty", dynamic_schema_overrides=lambda: {})
        for d in reg.get_definitions():
            name = d["function"]["name"]
            assert d["function"]["description"] == f"The {name} tool."
            assert d["function"]["parameters"] == schema(name)["parameters"]

    @pytest.mark.parametrize(
        "bad",
        [
            pytest.param(lambda: 1 / 0, id="raises"),
            pytest.param(lambda: ["not", "a", "dict"], id="not-a-dict"),
            pytest.param(lambda: {"parameters": {"type": "array"}}, id="bad-parameters"),
        ],
    )
    def test_bad_override_is_logged_and_static_schema_used(
        self, reg: ToolRegistry, caplog: pytest.LogCaptureFixture, bad: Any
    ) -> None:
        add(reg, "dyn", dynamic_schema_overrides=bad)
        add(reg, "other")
        with caplog.at_level(logging.WARNING, logger="toolreg"):
            definitions = reg.get_definitions()

        assert names(definitions) == ["dyn", "other"]
        assert definitions[0]["function"]["description"] == "The dyn tool."
        assert definitions[0]["function"]["parameters"] == schema("dyn")["parameters"]
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert any("dyn" in r.getMessage() for r in warnings)

    def test_unavailable_dynamic_tool_is_left_out(self, reg: ToolRegistry) -> None:
        add(reg, "dyn", check_fn=lambda: False, dynamic_schema_overrides=lambda: {})
        assert reg.get_definitions() == []

    def test_non_json_override_does_not_break_the_json(self, reg: ToolRegistry) -> None:
        def overrides() -> dict[str, Any]:
            props = {"mode": {"type": "string", "enum": {"r", "w"}}}
            return {"parameters": {"type": "object", "properties": props}}

        add(reg, "dyn", dynamic_schema_overrides=overrides)
        add(reg, "good")
        assert "good" in [d["function"]["name"] for d in json.loads(reg.get_definitions_json())]


class TestMemoInvalidation:
    """Definitions are memoised; every key part must invalidate a stale answer."""

    def test_new_generation_adds_replaces_and_removes(self, reg: ToolRegistry) -> None:
        add(reg, "a")
        assert names(reg.get_definitions()) == ["a"]
        before = reg.get_definitions_json()

        add(reg, "b")
        assert names(reg.get_definitions()) == ["a", "b"]

        reg.register("a", "ts", {**schema("a"), "description": "Replaced."}, handler)  # a reload
        assert reg.get_definitions()[0]["function"]["description"] == "Replaced."
        assert json.loads(reg.get_definitions_json())[0]["function"]["description"] == "Replaced."

        reg.deregister("b")
        reg.deregister("a")
        assert reg.get_definitions() == []
        assert reg.get_definitions_json() == "[]" != before

    def test_availability_change_without_new_generation(
        self, reg: ToolRegistry, clock: FakeClock
    ) -> None:
        probe = Switch(ok=False)
        add(reg, "probed", check_fn=probe)
        add(reg, "free")
        generation = reg.generation
        assert names(reg.get_definitions()) == ["free"]

        probe.ok = True
        clock.advance(31)  # past the 30 s probe cache
        assert names(reg.get_definitions()) == ["free", "probed"]
        assert "probed" in reg.get_definitions_json()

        probe.ok = False
        clock.advance(61)  # past the cache and the 60 s flake grace
        assert names(reg.get_definitions()) == ["free"]
        assert "probed" not in reg.get_definitions_json()
        assert reg.generation == generation

    def test_environment_change_is_seen(
        self, reg: ToolRegistry, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.delenv("TOOLREG_TEST_TOKEN", raising=False)
        add(reg, "needs_env", requires_env=["TOOLREG_TEST_TOKEN"])
        assert reg.get_definitions() == []
        monkeypatch.setenv("TOOLREG_TEST_TOKEN", "secret")
        assert names(reg.get_definitions()) == ["needs_env"]

    def test_tool_names_and_format_are_part_of_the_key(self, reg: ToolRegistry) -> None:
        for name in ["a", "b"]:
            add(reg, name)
        assert names(reg.get_definitions(["a"])) == ["a"]
        assert names(reg.get_definitions(["a", "b"])) == ["a", "b"]
        assert names(reg.get_definitions()) == ["a", "b"]
        assert "function" in reg.get_definitions()[0]
        assert "input_schema" in reg.get_definitions(format="anthropic")[0]
        assert "inputSchema" in json.loads(reg.get_definitions_json(format="mcp"))[0]


class TestSharedAndReadOnly:
    """Definitions are shared between calls: read-only, copied only on request."""

    def vandalise(self, definitions: list[dict[str, Any]], key: str = "parameters") -> None:
        body = definitions[0].get("function", definitions[0])
        params = body[key]
        params["properties"]["path"]["type"] = "HACKED"
        params["properties"]["extra"] = {"type": "string"}
        params["required"].append("extra")
        body["description"] = "HACKED"

    ATTEMPTS = [
        pytest.param(lambda d: d.__setitem__("type", "x"), id="set-item"),
        pytest.param(lambda d: d["function"].update(name="x"), id="update"),
        pytest.param(lambda d: d["function"].pop("description"), id="pop"),
        pytest.param(lambda d: d["function"]["parameters"].clear(), id="clear"),
        pytest.param(lambda d: d["function"]["parameters"]["required"].append("x"), id="append"),
        pytest.param(lambda d: d["function"]["parameters"]["required"].sort(), id="sort"),
        pytest.param(lambda d: d["function"]["parameters"]["properties"].setdefault("x", 1)),
    ]

    @pytest.mark.parametrize("attempt", ATTEMPTS)
    def test_mutation_raises_and_corrupts_nothing(self, reg: ToolRegistry, attempt: Any) -> None:
        s = add(reg, "read")
        original = copy.deepcopy(s)
        expected = copy.deepcopy(reg.get_definitions())
        text = reg.get_definitions_json()

        with pytest.raises(TypeError, match=r"shared.*copy\.deepcopy"):
            attempt(reg.get_definitions()[0])
        with pytest.raises(TypeError):
            attempt(reg.get_definition("read"))

        assert reg.get_definitions() == expected
        assert reg.get_definitions_json() == text
        assert reg.get_entry("read").schema == original

    def test_the_list_is_the_callers_and_the_definitions_are_shared(
        self, reg: ToolRegistry
    ) -> None:
        add(reg, "read")
        first, second = reg.get_definitions(), reg.get_definitions()
        assert first is not second and first[0] is second[0]
        assert reg.get_definition("read") is first[0]
        first.append({"junk": True})
        first.pop(0)
        assert names(reg.get_definitions()) == ["read"]

    @pytest.mark.parametrize("fmt,key", [("openai", "parameters"), ("anthropic", "input_schema")])
    def test_a_deep_copy_is_plain_and_private(self, reg: ToolRegistry, fmt: str, key: str) -> None:
        add(reg, "read")
        expected = copy.deepcopy(reg.get_definitions(format=fmt))
        mine = copy.deepcopy(reg.get_definitions(format=fmt))

        assert type(mine[0]) is dict and mine == expected
        self.vandalise(mine, key)  # a private copy: changing it is fine...

        assert reg.get_definitions(format=fmt) == expected  # ...and reaches nothing shared
        assert json.loads(reg.get_definitions_json(format=fmt)) == expected

    def test_dict_json_and_pickle_take_them(self, reg: ToolRegistry) -> None:
        add(reg, "read")
        definition = reg.get_definitions()[0]
        shallow = dict(definition)
        shallow["type"] = "changed"  # a plain dict of its own
        assert definition["type"] == "function"
        assert isinstance(definition, dict) and isinstance(
            definition["function"]["parameters"]["required"], list
        )
        assert json.loads(json.dumps(definition)) == definition
        assert pickle.loads(pickle.dumps(definition)) == definition

    def test_a_dynamic_tool_gets_a_private_mutable_copy(self, reg: ToolRegistry) -> None:
        shared = {"parameters": schema("dyn")["parameters"], "description": "Dynamic."}
        pristine = copy.deepcopy(shared)
        add(reg, "dyn", dynamic_schema_overrides=lambda: shared)
        expected = reg.get_definitions()

        self.vandalise(reg.get_definitions())
        self.vandalise([reg.get_definition("dyn")])

        assert shared == pristine
        assert reg.get_definitions() == expected


class TestIncrementalRebuild:
    """A change rebuilds the changed tool's definition only; nothing that left is kept."""

    @pytest.fixture
    def formatted(self, monkeypatch: pytest.MonkeyPatch) -> list[str]:
        """The names the openai formatter is asked to build, in order."""
        calls: list[str] = []
        real = FORMATS["openai"]

        def counting(
            name: str, description: str, parameters: dict[str, Any], entry: Any = None
        ) -> Any:
            calls.append(name)
            return real(name, description, parameters, entry)

        monkeypatch.setitem(FORMATS, "openai", counting)
        return calls

    def test_one_change_rebuilds_one_tool(self, reg: ToolRegistry, formatted: list[str]) -> None:
        for name in ["a", "b", "c", "d"]:
            add(reg, name)
        before = reg.get_definitions()
        assert sorted(formatted) == ["a", "b", "c", "d"]
        formatted.clear()

        reg.register("b", "ts", {**schema("b"), "description": "New b."}, handler)
        after = reg.get_definitions()

        assert formatted == ["b"]
        assert after[1]["function"]["description"] == "New b."
        assert [after[i] is before[i] for i in range(4)] == [True, False, True, True]
        assert json.loads(reg.get_definitions_json())[1]["function"]["description"] == "New b."
        assert formatted == ["b"]

    def test_adding_and_removing_build_only_the_new_tool(
        self, reg: ToolRegistry, formatted: list[str]
    ) -> None:
        for name in ["a", "c"]:
            add(reg, name)
        reg.get_definitions()
        formatted.clear()

        add(reg, "b")
        assert names(reg.get_definitions()) == ["a", "b", "c"]
        reg.deregister("a")
        assert names(reg.get_definitions()) == ["b", "c"]
        assert reg.get_definition("c") is reg.get_definitions()[1]
        assert formatted == ["b"]

    def test_an_availability_change_builds_nothing_already_built(
        self, reg: ToolRegistry, clock: FakeClock, formatted: list[str]
    ) -> None:
        probe = Switch(ok=True)
        add(reg, "probed", check_fn=probe)
        add(reg, "free")
        assert names(reg.get_definitions()) == ["free", "probed"]
        probe.ok = False
        clock.advance(100)
        assert names(reg.get_definitions()) == ["free"]
        probe.ok = True
        clock.advance(100)
        assert names(reg.get_definitions()) == ["free", "probed"]
        assert sorted(formatted) == ["free", "probed"]

    def test_a_variant_is_cached_and_rebuilt_like_its_format(
        self, reg: ToolRegistry, formatted: list[str]
    ) -> None:
        for name in ["a", "b"]:
            add(reg, name)
        options = {"inline_refs": True, "optional_as_absent": True}
        plain, variant = reg.get_definitions(), reg.get_definitions(**options)
        assert sorted(formatted) == ["a", "a", "b", "b"], "each variant built once per tool"
        assert [one is other for one, other in zip(plain, variant, strict=True)] == [False] * 2
        assert [d is e for d, e in zip(variant, reg.get_definitions(**options), strict=True)] == [
            True
        ] * 2
        assert reg.get_definition("a", **options) is variant[0]
        assert sorted(formatted) == ["a", "a", "b", "b"], "and no more"
        formatted.clear()

        reg.register("b", "ts", {**schema("b"), "description": "New b."}, handler)
        again = reg.get_definitions(**options)
        assert formatted == ["b"]
        assert again[0] is variant[0] and again[1]["function"]["description"] == "New b."
        assert json.loads(reg.get_definitions_json(**options))[1] == again[1]
        reg.get_definitions(inline_refs=True)  # another variant: a cache of its own
        assert formatted == ["b", "a", "b"]

    def test_entries_that_left_the_table_are_not_kept_alive(self, clock: FakeClock) -> None:
        class Handler:
            def __call__(self, args: dict[str, Any]) -> str:
                return "ok"

        reg = ToolRegistry(clock=clock, decision_log_size=1)
        add(reg, "stays")
        removed, replaced = Handler(), Handler()
        reg.register("gone", "ts", schema("gone"), removed)
        reg.register("again", "ts", schema("again"), replaced)
        variants: list[dict[str, Any]] = [{}, {"inline_refs": True, "optional_as_absent": True}]
        for fmt in ["openai", "anthropic", "mcp"]:  # caches in several formats and variants
            for options in variants:
                reg.get_definitions(format=fmt, **options)
                reg.get_definitions_json(["gone", "again"], format=fmt, **options)
                reg.get_definition("gone", format=fmt, **options)
        refs = [weakref.ref(removed), weakref.ref(replaced)]
        del removed, replaced

        reg.deregister("gone")
        reg.register("again", "ts", schema("again"), handler)
        reg.register("last", "ts", schema("last"), handler)  # pushes out the decision log
        # A write only notes what changed (it costs the same at any table size);
        # the next read brings the kept lists up to date and lets the old go.
        assert names(reg.get_definitions()) == ["again", "last", "stays"]
        gc.collect()

        assert [ref() for ref in refs] == [None, None]


class TestThreads:
    def test_every_list_is_one_generations_table(self, reg: ToolRegistry) -> None:
        # Version k of the toolset has 3 + k // 2 % 4 tools, each described "vK": every
        # other write replaces the same names (the lists are patched), the others
        # add or remove names (the lists are walked again).
        def version(k: int) -> list[ToolEntry]:
            return [
                ToolEntry(
                    name=f"t{i}",
                    toolset="ts",
                    schema={**schema(f"t{i}"), "description": f"v{k}"},
                    handler=handler,
                )
                for i in range(3 + k // 2 % 4)
            ]

        reg.replace_toolset("ts", version(0))
        done = threading.Event()
        problems: list[str] = []

        def check(described: list[tuple[str, str]]) -> None:
            versions = {d for _, d in described}
            if len(versions) != 1:
                problems.append(f"mixed versions {sorted(versions)}")
                return
            k = int(versions.pop()[1:])
            if [n for n, _ in described] != [f"t{i}" for i in range(3 + k // 2 % 4)]:
                problems.append(f"v{k} lists {[n for n, _ in described]}")

        def read() -> None:
            while not done.is_set() and not problems:
                listed = reg.get_definitions(format="anthropic")
                check([(d["name"], d["description"]) for d in listed])
                text = json.loads(reg.get_definitions_json())
                check([(d["function"]["name"], d["function"]["description"]) for d in text])

        readers = [threading.Thread(target=read) for _ in range(3)]
        for thread in readers:
            thread.start()
        try:
            for k in range(1, 400):
                reg.replace_toolset("ts", version(k))
        finally:
            done.set()
            for thread in readers:
                thread.join()
        assert problems == []
        assert names(reg.get_definitions()) == [f"t{i}" for i in range(3 + 399 // 2 % 4)]
        # The last write replaced the same names: a patched list, of the last version.
        assert {d["function"]["description"] for d in reg.get_definitions()} == {"v399"}

    def test_a_write_never_waits_for_a_reader_building_definitions(self, reg: ToolRegistry) -> None:
        # A writer queued behind a reader's lock would wait for the reader to
        # be scheduled again: with busy readers, a whole switch interval.
        add(reg, "a")
        reg.get_definitions()
        wrote = threading.Event()

        def write() -> None:
            reg.register("a", "ts", {**schema("a"), "description": "New a."}, handler)
            reg.deregister("a")
            add(reg, "b")
            wrote.set()

        with reg._definitions._lock:  # a reader in the middle of building a list
            writer = threading.Thread(target=write)
            writer.start()
            finished = wrote.wait(30)
        writer.join()
        assert finished, "a write waited for the readers' lock"
        assert names(reg.get_definitions()) == ["b"]

    def test_more_writes_between_reads_than_are_queued_still_list_the_last(
        self, reg: ToolRegistry
    ) -> None:
        for name in ["a", "b"]:
            add(reg, name)
        assert names(reg.get_definitions()) == ["a", "b"]
        reg.register("b", "ts", {**schema("b"), "description": "New b."}, handler)
        for n in range(1000):  # b's write falls out of the queue a read patches from
            reg.register("a", "ts", {**schema("a"), "description": f"a{n}"}, handler)
        listed = reg.get_definitions()
        assert [d["function"]["description"] for d in listed] == ["a999", "New b."]


class TestOneBadToolNeverBreaksTheList:
    def test_check_fn_that_raises(self, reg: ToolRegistry) -> None:
        add(reg, "good")
        add(reg, "bad", toolset="other", check_fn=lambda: 1 / 0)
        assert names(reg.get_definitions()) == ["good"]
        assert names(json.loads(reg.get_definitions_json())) == ["good"]

    def test_schema_corrupted_after_registration(self, reg: ToolRegistry) -> None:
        add(reg, "a_good")
        bad = add(reg, "bad")
        add(reg, "z_good")
        bad["parameters"]["properties"]["path"]["default"] = object()  # not serialisable

        definitions = reg.get_definitions()

        assert {"a_good", "z_good"} <= set(names(definitions))
        json.dumps(definitions)  # what is returned can still be sent
        assert {"a_good", "z_good"} <= set(names(json.loads(reg.get_definitions_json())))

    def test_check_fn_with_unusable_result(self, reg: ToolRegistry) -> None:
        class Ambiguous:
            def __bool__(self) -> bool:
                raise ValueError("truth value is ambiguous")

        add(reg, "good")
        add(reg, "bad", toolset="other", check_fn=Ambiguous)
        assert names(reg.get_definitions()) == ["good"]


def test_only_the_mcp_shape_carries_annotations_and_output_schema(reg: ToolRegistry) -> None:
    output = {"type": "object", "properties": {"n": {"type": "integer"}}}
    reg.register(
        "hinted",
        "ts",
        schema("hinted"),
        handler,
        annotations={"title": "Hinted", "readOnlyHint": True},
        output_schema=output,
    )
    reg.register("plain", "ts", schema("plain"), handler)
    mcp = {d["name"]: d for d in reg.get_definitions(format="mcp")}
    assert mcp["hinted"]["annotations"] == {"title": "Hinted", "readOnlyHint": True}
    assert mcp["hinted"]["outputSchema"] == output
    assert "annotations" not in mcp["plain"] and "outputSchema" not in mcp["plain"]
    for fmt in ("openai", "openai-responses", "anthropic", "gemini"):
        text = json.dumps(reg.get_definition("hinted", format=fmt))
        assert "readOnlyHint" not in text and "outputSchema" not in text, fmt
    # Shared and read-only: a caller cannot change them for the next caller.
    with pytest.raises(TypeError, match="read-only"):
        mcp["hinted"]["annotations"]["readOnlyHint"] = False
    with pytest.raises(TypeError, match="read-only"):
        mcp["hinted"]["outputSchema"]["properties"].clear()
    again = reg.get_definition("hinted", format="mcp")
    assert again["annotations"]["readOnlyHint"] is True
    assert (
        again["outputSchema"]
        == output
        == {"type": "object", "properties": {"n": {"type": "integer"}}}
    )
    assert json.loads(reg.get_definitions_json(format="mcp"))[0]["annotations"]["readOnlyHint"]
