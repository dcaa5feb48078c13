"""The table's write path: one tool in place, many swapped in, and batches."""

from __future__ import annotations

import threading

import pytest

from conftest import schema
from toolreg import ToolRegistry


def ok(args):
    return "ok"


def test_a_batch_is_invisible_until_it_ends_then_whole(reg):
    with reg.batch():
        for n in range(3):
            assert reg.register(f"t{n}", "ts", schema(f"t{n}"), ok) is not None
        assert reg.get_entry("t0") is None, "no reader sees a batch before it ends"
        assert "t1" not in reg.get_all_tool_names()
        generation = reg.generation
    assert reg.generation == generation + 1, "the whole batch is one write"
    assert reg.get_all_tool_names() == ["t0", "t1", "t2"]
    assert reg.dispatch("t2", {}) == "ok"
    assert [d.action for d in reg.decisions()] == ["registered"] * 3


def test_a_batch_that_raises_keeps_nothing(reg):
    reg.register("kept", "ts", schema("kept"), ok)
    with pytest.raises(RuntimeError, match="boom"), reg.batch():
        reg.register("lost", "ts", schema("lost"), ok)
        raise RuntimeError("boom")
    assert reg.get_all_tool_names() == ["kept"]
    with reg.batch():  # the table is usable again
        reg.register("later", "ts", schema("later"), ok)
    assert reg.get_all_tool_names() == ["kept", "later"]


def test_each_write_of_a_batch_is_judged_against_the_batch_so_far(reg):
    with reg.batch():
        assert reg.register("t", "one", schema("t"), ok) is not None
        # Another toolset taking the staged name needs override, as outside a batch.
        assert reg.register("t", "two", schema("t"), ok) is None
        assert reg.register("t", "one", schema("t"), lambda args: "again") is not None
    assert reg.get_toolset_for_tool("t") == "one"
    assert reg.dispatch("t", {}) == "again"
    actions = [d.action for d in reg.decisions()]
    assert actions == ["rejected", "registered"], "the batch keeps the last write per name"


def test_a_removal_inside_a_batch_first_swaps_in_what_came_before(reg):
    with reg.batch():
        reg.register("a", "ts", schema("a"), ok)
        reg.register("b", "ts", schema("b"), ok)
        assert reg.deregister("a") is True
        assert reg.get_entry("b") is not None
        reg.register("c", "ts", schema("c"), ok)
        assert reg.get_entry("c") is None
    assert reg.get_all_tool_names() == ["b", "c"]


def test_nested_batches_are_one(reg):
    with reg.batch():
        reg.register("a", "ts", schema("a"), ok)
        with reg.batch():
            reg.register("b", "ts", schema("b"), ok)
        assert reg.get_entry("b") is None, "the inner block ends inside the outer batch"
    assert reg.get_all_tool_names() == ["a", "b"]


def test_register_many_returns_each_result_in_order(reg):
    specs = [
        {"name": "a", "toolset": "ts", "schema": schema("a"), "handler": ok},
        {"name": "a", "toolset": "other", "schema": schema("a"), "handler": ok},
        {"name": "b", "toolset": "ts", "schema": schema("b"), "handler": ok, "timeout": 5},
    ]
    first, clash, last = reg.register_many(specs)
    assert first is not None and clash is None and last is not None
    assert reg.get_options("b").timeout == 5
    assert reg.get_options("a").timeout is None


def test_register_many_of_a_bad_schema_names_the_tool_and_keeps_nothing(reg):
    specs = [
        {"name": "good", "toolset": "ts", "schema": schema("good"), "handler": ok},
        {"name": "bad", "toolset": "ts", "schema": {"parameters": []}, "handler": ok},
    ]
    with pytest.raises(ValueError, match="'bad'"):
        reg.register_many(specs)
    assert len(reg) == 0


def test_another_threads_write_waits_for_the_batch():
    reg = ToolRegistry()
    entered, done = threading.Event(), threading.Event()

    def writer():
        entered.wait()
        reg.register("outside", "ts", schema("outside"), ok)
        done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    with reg.batch():
        reg.register("inside", "ts", schema("inside"), ok)
        entered.set()
        assert not done.wait(0.2), "a write from another thread went in mid-batch"
    thread.join(10)
    assert done.is_set()
    assert reg.get_all_tool_names() == ["inside", "outside"]


def test_iterating_readers_never_trip_over_in_place_writes():
    """Readers that iterate read a snapshot; in-place writes never break them."""
    reg = ToolRegistry()
    for n in range(200):
        reg.register(f"base{n}", "base", schema(f"base{n}"), ok)
    stop, problems = threading.Event(), []

    def reader():
        while not stop.is_set():
            try:
                names = reg.get_all_tool_names()
                report = reg.get_available_toolsets()
                definitions = reg.get_definitions()
            except Exception as exc:  # noqa: BLE001 - any failure is the finding
                problems.append(repr(exc))
                return
            if not {f"base{n}" for n in range(200)} <= set(names):
                problems.append("a stable tool went missing")
            if len(report["base"]["tools"]) != 200 or len(definitions) < 200:
                problems.append("a stable toolset was seen short")

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for thread in threads:
        thread.start()
    for n in range(3000):
        reg.register(f"churn{n % 50}", f"churn{n % 7}", schema(f"churn{n % 50}"), ok)
        if n % 3 == 0:
            reg.deregister(f"churn{(n + 25) % 50}")
    stop.set()
    for thread in threads:
        thread.join()
    assert problems == []


def test_one_tool_writes_do_not_copy_the_table(reg):
    """A single register changes the live dict in place: the same dict, one more key."""
    reg.register("a", "ts", schema("a"), ok)
    live = reg._table.live
    reg.register("b", "ts", schema("b"), ok)
    reg.register("a", "ts", schema("a"), lambda args: "new")
    reg.deregister("b")
    assert reg._table.live is live
    assert reg.dispatch("a", {}) == "new"
    # A bulk write swaps in a new dict, and get_entry follows it.
    reg.replace_toolset("ts", [])
    assert reg._table.live is not live
    assert reg.get_entry("a") is None


def test_a_schema_checked_once_is_not_trusted_for_another_dict_with_its_id(reg):
    good = schema("t")
    reg.register("t", "ts", good, ok)
    bad = {"name": "u", "parameters": {"type": "object", "properties": {"x": 1}}}
    with pytest.raises(ValueError, match="'u'"):
        reg.register("u", "ts", bad, ok)
    with pytest.raises(ValueError, match="names a different tool"):
        reg.register("v", "ts", good, ok)  # the cached verdict never skips the name check


def test_a_schema_checked_by_content_is_not_trusted_for_other_types(reg):
    # Equal as JSON, not as Python: a tuple where the rule wants a list.
    good = {"parameters": {"type": "object", "properties": {"p": {}}, "required": ["p"]}}
    reg.register("t", "ts", good, ok)
    bad = {"parameters": {"type": "object", "properties": {"p": {}}, "required": ("p",)}}
    with pytest.raises(ValueError, match="'u'.*required"):
        reg.register("u", "ts", bad, ok)
    # bytes for a str: equal length, equal characters, and JSON cannot encode it.
    good = {"parameters": {"type": "object", "properties": {"p": {"default": "abc"}}}}
    reg.register("v", "ts", good, ok)
    bad = {"parameters": {"type": "object", "properties": {"p": {"default": b"abc"}}}}
    with pytest.raises(ValueError, match="'w'.*JSON-serialisable"):
        reg.register("w", "ts", bad, ok)


def test_parameters_built_alike_are_checked_once_shared_or_not(reg, monkeypatch):
    from toolreg._contract import schema_checks

    checked = []
    full_check = schema_checks.check_parameters
    monkeypatch.setattr(
        schema_checks, "check_parameters", lambda *a: checked.append(a[0]) or full_check(*a)
    )
    unique = f"p{id(checked)}"  # content no other test has registered

    def parameters(shared_items=None):
        items = shared_items or {"type": "string"}
        return {"type": "object", "properties": {unique: {"type": "array", "items": items}}}

    for n in range(20):
        reg.register(f"t{n}", "ts", {"parameters": parameters()}, ok)
    assert checked == ["t0"], "content that passed is not checked again"
    shared = {"type": "string"}
    reg.register("s1", "ts", {"parameters": parameters(shared)}, ok)
    reg.register("s2", "ts", {"parameters": parameters(shared)}, ok)
    # The same content held twice may encode otherwise: at worst checked again, and passed.
    assert set(checked) <= {"t0", "s1", "s2"} and len(reg) == 22


def test_a_checked_schema_changed_afterwards_is_checked_again_as_a_new_dict(reg):
    shared = {"parameters": {"type": "object", "properties": {"p": {"type": "string"}}}}
    reg.register("t", "ts", shared, ok)
    shared["parameters"]["properties"]["p"] = "not a schema"
    copied = {"parameters": {"type": "object", "properties": {"p": "not a schema"}}}
    with pytest.raises(ValueError, match="'u'.*properties.p"):
        reg.register("u", "ts", copied, ok)


def test_the_same_schema_dict_changed_after_registering_is_checked_again(reg):
    """No check is skipped by identity: the dict that passed, broken in place, is refused."""
    schema = {"parameters": {"type": "object", "properties": {"p": {"type": "string"}}}}
    reg.register("t", "ts", schema, ok)
    schema["parameters"]["properties"]["p"] = "not a schema"
    with pytest.raises(ValueError, match="'t'.*properties.p' must be a dict"):
        reg.register("t", "ts", schema, ok)
    schema["parameters"]["properties"]["p"] = {"default": b"bytes"}
    with pytest.raises(ValueError, match="'t'.*JSON-serialisable"):
        reg.register("t", "ts", schema, ok)
    schema["description"] = 42
    schema["parameters"]["properties"]["p"] = {"type": "string"}
    with pytest.raises(ValueError, match="'t'.*'description' must be a string"):
        reg.register("t", "ts", schema, ok)
    assert reg.get_entry("t").schema is schema and reg.generation == 1, "refusals changed nothing"


def test_a_value_json_cannot_encode_is_refused_every_time(reg):
    for name in ("t", "u"):
        bad = {"parameters": {"type": "object", "properties": {"p": {"enum": {1, 2}}}}}
        with pytest.raises(ValueError, match=f"'{name}'.*JSON-serialisable"):
            reg.register(name, "ts", bad, ok)
    assert len(reg) == 0


def test_reading_decisions_while_writers_write_sees_them_in_order():
    """The log takes no lock: a reader copies it in one step, and never trips a writer."""
    reg = ToolRegistry(decision_log_size=50)
    stop, problems = threading.Event(), []

    def reader():
        since = 0
        while not stop.is_set():
            try:
                seqs = [d.seq for d in reg.decisions(since)]
            except Exception as exc:  # noqa: BLE001 - any failure is the finding
                problems.append(repr(exc))
                return
            if seqs != sorted(set(seqs)) or (seqs and seqs[0] <= since):
                problems.append(f"out of order after {since}: {seqs[:5]}")
            since = seqs[-1] if seqs else since

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for thread in threads:
        thread.start()
    for n in range(2000):
        reg.register(f"t{n % 30}", "ts", schema(f"t{n % 30}"), ok)
        if n % 100 == 0:
            with reg.batch():
                reg.register_many([{"name": f"b{n}", "toolset": "b", "schema": {}, "handler": ok}])
    stop.set()
    for thread in threads:
        thread.join()
    assert problems == []
    assert reg.decisions()[-1].seq == reg.last_decision_seq


class CountingName(str):
    """A str subclass with code of its own, as a pack's name or a StrEnum member has:
    it hashes like ``hash_as`` and counts its comparisons."""

    compared = 0

    def __new__(cls, value: str, hash_as: str) -> CountingName:
        made = super().__new__(cls, value)
        made.hash_as = hash_as  # type: ignore[attr-defined]
        return made

    def __hash__(self) -> int:
        return hash(self.hash_as)  # type: ignore[attr-defined]

    def __eq__(self, other: object) -> bool:
        type(self).compared += 1
        return str.__eq__(self, other)


def test_names_and_toolsets_are_kept_as_plain_strs_so_their_code_never_runs_in_a_write(reg):
    # Registered under a subclass, a tool's key is the plain str it holds: a later
    # write of a name that hashes alike compares plain strs only.
    reg.register(CountingName("sneaky", "target"), CountingName("set", "set"), schema("sneaky"), ok)
    reg.register_toolset_alias(CountingName("nick", "set"), CountingName("set", "set"))
    state = reg._table._state
    for keys in (state.live, state.owned, state.toolsets, state.toolsets["set"], state.aliases):
        assert {type(key) for key in keys} == {str}
    assert set(state.aliases.values()) == {"set"} and type(state.aliases["nick"]) is str
    entry = reg.get_entry("sneaky")
    assert entry is not None and type(entry.name) is str and type(entry.toolset) is str
    CountingName.compared = 0
    for _ in range(3):
        reg.register("target", "set", schema("target"), ok)
        reg.register_many([{"name": "target", "toolset": "set", "schema": {}, "handler": ok}])
        reg.deregister("target")
    assert CountingName.compared == 0
    assert reg.get_all_tool_names() == ["sneaky"]


def test_replace_toolset_refuses_entries_named_by_a_str_subclass(reg):
    from toolreg import ToolEntry

    for name, toolset in ((CountingName("t", "t"), "set"), ("t", CountingName("set", "set"))):
        entry = ToolEntry(name=name, toolset=toolset, schema={}, handler=ok)
        with pytest.raises(ValueError, match="'t': its name and toolset must be plain str"):
            reg.replace_toolset("set", [entry])
    assert reg.get_all_tool_names() == []


def test_no_alias_made_in_a_batch_hides_a_toolset_of_the_same_batch(reg):
    reg.register("old", "base", schema("old"), ok)
    with reg.batch():
        reg.register("fresh", "newset", schema("fresh"), ok)
        with pytest.raises(ValueError, match="would hide the toolset"):
            reg.register_toolset_alias("newset", "base")
        reg.register_toolset_alias("nick", "newset")  # names a toolset of the batch
    assert reg.resolve_toolset("newset") == "newset"
    assert reg.resolve_toolset("nick") == "newset"
    assert reg.get_toolset_for_tool("fresh") == "newset"


def test_in_a_batch_an_alias_is_judged_against_the_toolsets_after_it(reg):
    reg.register("mover", "before", schema("mover"), ok)
    with reg.batch():
        reg.register("mover", "after", schema("mover"), ok, override=True)
        with pytest.raises(ValueError, match="there is no toolset 'before'"):
            reg.register_toolset_alias("nick", "before")  # the batch empties it
        reg.register_toolset_alias("before", "after")  # so the name is free
    assert reg.resolve_toolset("before") == "after"
