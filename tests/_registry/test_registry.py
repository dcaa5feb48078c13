"""The tool table: conflict rules, generation, decisions, aliases, replace_toolset."""

from __future__ import annotations

import logging
import threading

import pytest

from conftest import schema
from toolreg import ToolEntry, ToolRegistry


def ok(args: dict) -> str:
    return "ok"


def other(args: dict) -> str:
    return "other"


def test_tool_entry_has_exactly_the_seed_slots():
    assert ToolEntry.__slots__ == (
        "name",
        "toolset",
        "schema",
        "handler",
        "check_fn",
        "requires_env",
        "is_async",
        "description",
        "emoji",
        "max_result_size_chars",
        "dynamic_schema_overrides",
    )
    entry = ToolEntry(name="t", toolset="s", schema={"description": "from schema"}, handler=ok)
    assert not hasattr(entry, "__dict__")
    assert entry.check_fn is None and entry.is_async is False
    assert entry.description == "from schema"
    assert entry.max_result_size_chars is None


def test_register_then_lookups(reg: ToolRegistry):
    entry = reg.register("b_tool", "alpha", schema("b_tool"), ok)
    reg.register("a_tool", "alpha", schema("a_tool"), ok)
    reg.register("c_tool", "beta", schema("c_tool"), ok)
    assert reg.get_entry("b_tool") is entry
    assert reg.get_entry("missing") is None
    assert reg.get_all_tool_names() == ["a_tool", "b_tool", "c_tool"]
    assert reg.get_tool_names_for_toolset("alpha") == ["a_tool", "b_tool"]
    assert reg.get_toolset_for_tool("c_tool") == "beta"
    assert reg.get_toolset_for_tool("missing") is None
    assert reg.get_owner("a_tool") == "host"
    assert "a_tool" in reg and len(reg) == 3


def test_same_name_same_toolset_replaces(reg: ToolRegistry):
    reg.register("t", "alpha", schema("t"), ok)
    before = reg.generation
    reg.register("t", "alpha", schema("t"), other)
    assert reg.dispatch("t", {}) == "other"
    assert reg.generation == before + 1
    assert reg.decisions()[-1].action == "replaced"


def test_other_toolset_without_override_is_rejected_and_logged(reg, caplog):
    reg.register("t", "alpha", schema("t"), ok)
    before = reg.generation
    with caplog.at_level(logging.ERROR, logger="toolreg.registry"):
        assert reg.register("t", "beta", schema("t"), other) is None
    assert reg.get_entry("t").toolset == "alpha"
    assert reg.dispatch("t", {}) == "ok"
    assert reg.generation == before, "a rejected registration changes nothing"
    message = caplog.records[-1].getMessage()
    assert "REJECTED" in message and "'alpha'" in message and "'beta'" in message
    decision = reg.decisions()[-1]
    assert (decision.action, decision.tool, decision.toolset) == ("rejected", "t", "beta")
    assert decision.previous_toolset == "alpha" and "override" in decision.reason


def test_override_true_replaces_and_logs_info(reg, caplog):
    reg.register("t", "alpha", schema("t"), ok)
    with caplog.at_level(logging.INFO, logger="toolreg.registry"):
        reg.register("t", "beta", schema("t"), other, override=True)
    assert reg.get_entry("t").toolset == "beta"
    assert any(r.levelno == logging.INFO and "overridden" in r.getMessage() for r in caplog.records)
    assert reg.decisions()[-1].action == "overridden"
    assert reg.get_tool_names_for_toolset("alpha") == []
    assert reg.get_tool_names_for_toolset("beta") == ["t"]


def test_mcp_toolset_may_replace_another_mcp_toolset(reg):
    reg.register("search", "mcp-one", schema("search"), ok)
    reg.register("search", "mcp-two", schema("search"), other)
    assert reg.get_entry("search").toolset == "mcp-two"
    assert reg.get_owner("search") == "mcp:two"


def test_mcp_toolset_may_not_take_a_non_mcp_tool(reg):
    reg.register("search", "web", schema("search"), ok)
    assert reg.register("search", "mcp-one", schema("search"), other) is None
    assert reg.get_entry("search").toolset == "web"


@pytest.mark.parametrize(
    ("name", "bad_schema", "fragment"),
    [
        ("t1", ["not", "a", "dict"], "schema must be a dict"),
        ("t2", {"parameters": "nope"}, "'parameters' must be a JSON-Schema object"),
        ("t3", {"parameters": {"type": "string"}}, '"type": "object"'),
        ("t4", {"parameters": {"type": "object", "properties": []}}, "properties"),
        ("t5", {"parameters": {"type": "object", "required": "a"}}, "required"),
        ("t6", {"name": "someone_else"}, "different tool"),
        ("t7", {"parameters": {"type": "object", "default": object()}}, "JSON-serialisable"),
        ("t8", {"parameters": {"type": "object", "required": ["a"]}}, "undeclared"),
        ("t9", {"parameters": {"type": "object", "properties": {}, "required": ["a"]}}, "['a']"),
    ],
)
def test_malformed_schema_raises_value_error_naming_the_tool(reg, name, bad_schema, fragment):
    with pytest.raises(ValueError) as info:
        reg.register(name, "alpha", bad_schema, ok)
    assert repr(name) in str(info.value) and fragment in str(info.value)
    assert reg.get_entry(name) is None and reg.generation == 0


@pytest.mark.parametrize("name", ["", "has space", "x" * 129, "semi;colon", None, 42])
def test_bad_tool_names_raise(reg, name):
    with pytest.raises(ValueError, match="Invalid tool name"):
        reg.register(name, "alpha", {}, ok)


def test_a_str_subclass_cannot_pass_for_a_name_that_passed_before(reg):
    # Names that passed are remembered; a subclass that hashes and compares
    # equal to one is still checked for what it holds.
    class Lookalike(str):
        def __hash__(self) -> int:
            return hash("good")

        def __eq__(self, other: object) -> bool:
            return True

    reg.register("good", "alpha", {}, ok)
    with pytest.raises(ValueError, match="Invalid tool name"):
        reg.register(Lookalike("bad name!"), "alpha", {}, ok)
    assert reg.get_all_tool_names() == ["good"]


def test_name_limits_accept_the_allowed_alphabet(reg):
    name = "A-z_0.9" + "x" * 121
    assert len(name) == 128
    assert reg.register(name, "alpha", {}, ok) is not None


@pytest.mark.parametrize("limit", ["100", -1, 2.5, True])
def test_bad_max_result_size_chars_raises_naming_the_tool(reg, limit):
    with pytest.raises(ValueError, match="'t'.*max_result_size_chars"):
        reg.register("t", "alpha", {}, ok, max_result_size_chars=limit)
    bad = ToolEntry(name="t", toolset="alpha", schema={}, handler=ok, max_result_size_chars=limit)
    with pytest.raises(ValueError, match="'t'.*max_result_size_chars"):
        reg.replace_toolset("alpha", [bad])
    assert reg.get_entry("t") is None and reg.generation == 0


def test_max_result_size_chars_zero_and_positive_are_accepted(reg):
    reg.register("t", "alpha", {}, ok, max_result_size_chars=0)
    assert reg.dispatch("t", {}) == "\n…[truncated 2 of 2 characters]"
    reg.register("t", "alpha", {}, ok, max_result_size_chars=1)
    assert reg.dispatch("t", {}).startswith("o\n…[truncated 1 of 2")


def test_non_callable_handler_and_empty_toolset_raise(reg):
    with pytest.raises(ValueError, match="handler must be callable"):
        reg.register("t", "alpha", {}, "not callable")
    with pytest.raises(ValueError, match="toolset"):
        reg.register("t", "", {}, ok)


def test_generation_is_read_only_and_counts_accepted_mutations(reg):
    with pytest.raises(AttributeError):
        reg.generation = 5
    reg.register("t", "alpha", {}, ok)
    reg.register("u", "alpha", {}, ok)
    reg.deregister("t")
    reg.register_toolset_alias("a", "alpha")
    assert reg.generation == 4
    assert reg.deregister("t") is False
    assert reg.generation == 4


def test_deregister_removes_and_records(reg):
    reg.register("t", "alpha", {}, ok)
    assert reg.deregister("t") is True
    assert reg.get_entry("t") is None
    assert reg.get_tool_names_for_toolset("alpha") == []
    assert "alpha" not in reg.get_toolsets()
    assert reg.decisions()[-1].action == "deregistered"
    assert reg.dispatch("t", {}) == '{"error": "Unknown tool: t"}'


def test_toolset_aliases(reg):
    reg.register("mcp__foo__search", "mcp-foo", {}, ok)
    reg.register_toolset_alias("foo", "mcp-foo")
    assert reg.resolve_toolset("foo") == "mcp-foo"
    assert reg.resolve_toolset("unaliased") == "unaliased"
    assert reg.get_tool_names_for_toolset("foo") == ["mcp__foo__search"]
    assert reg.is_toolset_available("foo") is True
    reg.register_toolset_alias("f", "foo")  # an alias of an alias resolves to the toolset
    assert reg.resolve_toolset("f") == "mcp-foo"
    with pytest.raises(ValueError, match="hide"):
        reg.register_toolset_alias("mcp-foo", "other")


def test_decision_log_is_bounded():
    reg = ToolRegistry(decision_log_size=3)
    for i in range(10):
        reg.register(f"t{i}", "alpha", {}, ok)
    decisions = reg.decisions()
    assert [d.tool for d in decisions] == ["t7", "t8", "t9"]
    assert decisions[-1].to_dict()["owner"] == "host"
    assert "replaced" not in decisions[-1].to_dict()


def test_a_batch_bigger_than_the_decision_log_keeps_its_newest_and_counts_all():
    reg = ToolRegistry(decision_log_size=3)
    reg.register("t0", "alpha", {}, ok)
    reg.register_many(
        {"name": f"t{i}", "toolset": "alpha", "schema": {}, "handler": ok} for i in range(8)
    )
    decisions = reg.decisions()
    assert [(d.tool, d.action, d.seq) for d in decisions] == [
        ("t5", "registered", 7),
        ("t6", "registered", 8),
        ("t7", "registered", 9),
    ]
    assert reg.last_decision_seq == 9
    assert [d.tool for d in reg.decisions(since=7)] == ["t6", "t7"]


def entries(toolset: str, *names: str) -> list[ToolEntry]:
    return [ToolEntry(name=n, toolset=toolset, schema=schema(n), handler=ok) for n in names]


def test_replace_toolset_swaps_in_one_generation(reg):
    reg.register("keep", "mcp-s", {}, ok)
    reg.register("drop", "mcp-s", {}, ok)
    before = reg.generation
    names = reg.replace_toolset("mcp-s", entries("mcp-s", "keep", "new"))
    assert names == ["keep", "new"]
    assert reg.get_tool_names_for_toolset("mcp-s") == ["keep", "new"]
    assert reg.get_entry("drop") is None
    assert reg.generation == before + 1
    actions = {(d.action, d.tool) for d in reg.decisions()[-3:]}
    assert actions == {("deregistered", "drop"), ("replaced", "keep"), ("registered", "new")}


def test_replace_toolset_skips_names_another_toolset_owns(reg):
    reg.register("read_file", "file", {}, ok)
    names = reg.replace_toolset("mcp-s", entries("mcp-s", "read_file", "fetch"))
    assert names == ["fetch"]
    assert reg.get_entry("read_file").toolset == "file"
    rejected = [d for d in reg.decisions() if d.action == "rejected"]
    assert rejected and rejected[-1].tool == "read_file"


def test_replace_toolset_validates_entries(reg):
    with pytest.raises(ValueError, match="is not 'mcp-s'"):
        reg.replace_toolset("mcp-s", entries("mcp-other", "x"))
    with pytest.raises(ValueError, match="twice"):
        reg.replace_toolset("mcp-s", entries("mcp-s", "x", "x"))
    assert len(reg) == 0


def test_replace_toolset_under_concurrent_readers(reg):
    """Readers never miss a stable tool, and never see a half-swapped toolset."""
    stable = [f"stable_{i}" for i in range(20)]
    reg.replace_toolset("mcp-s", entries("mcp-s", *stable))
    allowed_sets = {
        frozenset(stable),
        frozenset(stable + ["churn_a", "churn_b"]),
        frozenset(stable + ["churn_c"]),
    }
    stop = threading.Event()
    problems: list[str] = []

    def reader() -> None:
        while not stop.is_set():
            for name in stable:
                if reg.dispatch(name, {}) != "ok":
                    problems.append(f"missed {name}")
            seen = frozenset(reg.get_tool_names_for_toolset("mcp-s"))
            if seen not in allowed_sets:
                problems.append(f"half-swapped: {sorted(seen)}")

    threads = [threading.Thread(target=reader) for _ in range(8)]
    for thread in threads:
        thread.start()
    variants = [stable + ["churn_a", "churn_b"], stable + ["churn_c"], stable]
    for i in range(300):
        reg.replace_toolset("mcp-s", entries("mcp-s", *variants[i % 3]))
    stop.set()
    for thread in threads:
        thread.join()
    assert problems == []


def test_concurrent_writers_lose_nothing(reg):
    def writer(prefix: str) -> None:
        for i in range(200):
            reg.register(f"{prefix}_{i}", prefix, {}, ok)

    threads = [threading.Thread(target=writer, args=(f"w{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(reg) == 800
    assert reg.generation == 800
    assert all(len(reg.get_tool_names_for_toolset(f"w{n}")) == 200 for n in range(4))


def test_a_trailing_newline_is_not_a_valid_name(reg):
    with pytest.raises(ValueError, match="Invalid tool name"):
        reg.register("read\n", "alpha", {}, ok)


def test_dispatch_plans_follow_a_change_even_through_a_saved_dispatch(reg):
    """Caches learn of a write through the table's one listener, whatever holds dispatch."""
    dispatch = reg.dispatch
    reg.register("t", "ts", schema("t"), lambda args: "old")
    assert dispatch("t", {}) == "old"  # the plan is cached now
    reg.register("t", "ts", schema("t"), lambda args: "new")
    assert dispatch("t", {}) == "new"
    reg.deregister("t")
    assert "Unknown tool" in dispatch("t", {})


def test_the_table_has_exactly_one_change_listener(reg):
    """A second listener would be a second, unordered way for caches to learn of writes."""
    with pytest.raises(RuntimeError, match="already has a change listener"):
        reg._table.on_change(lambda names: None)


# -- annotations and output schemas --------------------------------------------------------

OUTPUT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def test_register_keeps_annotations_and_output_schema(reg: ToolRegistry):
    entry = reg.register(
        "count",
        "alpha",
        schema("count"),
        ok,
        annotations={"read_only_hint": True, "title": "Count"},
        output_schema=OUTPUT,
    )
    assert entry is reg.get_entry("count")
    assert dict(entry.annotations) == {"title": "Count", "readOnlyHint": True}
    assert entry.output_schema == OUTPUT
    # The same hints in another tool are the same mapping, not a copy.
    other = reg.register("other", "alpha", schema("other"), ok, annotations={"readOnlyHint": True})
    assert dict(other.annotations) == {"readOnlyHint": True}
    plain = reg.register("plain", "alpha", schema("plain"), ok)
    assert type(plain) is ToolEntry and not plain.annotations and plain.output_schema is None


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({"annotations": {"readOnly": True}}, "Tool 'bad': annotations key 'readOnly'"),
        ({"annotations": {"readOnlyHint": "no"}}, "Tool 'bad': annotation 'readOnlyHint' must be"),
        ({"output_schema": {"type": "string"}}, "Tool 'bad': output_schema must have"),
        ({"output_schema": True}, "Tool 'bad': output_schema must be a JSON-Schema object"),
    ],
)
def test_register_refuses_bad_annotations_and_output_schemas(
    reg: ToolRegistry, extra: dict, words: str
):
    reg.register("bad", "alpha", schema("bad"), ok)
    before = reg.generation
    with pytest.raises(ValueError) as caught:
        reg.register("bad", "alpha", schema("bad"), other, **extra)
    assert words in str(caught.value)
    # Nothing changed: the old entry stands, and no decision was published.
    assert reg.get_entry("bad").handler is ok
    assert reg.generation == before


def test_replace_toolset_keeps_each_entrys_annotations(reg: ToolRegistry):
    entries = [
        ToolEntry(name="a", toolset="mcp-x", schema=schema("a"), handler=ok),
        ToolEntry(
            name="b",
            toolset="mcp-x",
            schema=schema("b"),
            handler=ok,
            annotations={"destructiveHint": True},
            output_schema=OUTPUT,
        ),
    ]
    assert reg.replace_toolset("mcp-x", entries) == ["a", "b"]
    assert not reg.get_entry("a").annotations
    assert dict(reg.get_entry("b").annotations) == {"destructiveHint": True}
    assert reg.get_entry("b").output_schema == OUTPUT


# -- the public methods live on the class -------------------------------------------

PUBLIC_METHODS = sorted(
    name
    for name in dir(ToolRegistry())
    if not name.startswith("_") and callable(getattr(ToolRegistry(), name))
)


def test_every_public_method_of_an_instance_is_the_classs():
    instance = ToolRegistry()
    named = {"get_definitions", "get_definition", "get_definitions_json", "get_entry"}
    named |= {"acting_for", "availability", "is_tool_available", "get_plugin_policy"}
    named |= {"dispatch", "adispatch", "dispatch_many", "adispatch_many"}
    assert named <= set(PUBLIC_METHODS)
    for name in PUBLIC_METHODS:
        assert name in vars(ToolRegistry), f"{name} is not defined on the class"
        assert name not in vars(instance), f"{name} is set on the instance"
    instance.register("t", "s", schema("t"), ok)
    instance.dispatch("t", {})  # the first dispatch binds nothing onto the instance either
    assert not set(PUBLIC_METHODS) & set(vars(instance))


def test_an_autospec_of_the_class_has_every_public_method():
    from unittest import mock

    spec = mock.create_autospec(ToolRegistry, instance=True)
    for name in PUBLIC_METHODS:
        assert callable(getattr(spec, name)), name
    spec.get_definitions(["t"], format="anthropic")
    spec.get_definitions.assert_called_once_with(["t"], format="anthropic")
    with pytest.raises(TypeError):
        spec.get_entry("a", "b")  # the real signature is enforced


def test_a_subclasss_own_reads_and_dispatch_are_used_by_the_faces():
    """An integration, the test helpers and dispatch_many's host all call the subclass."""
    from toolreg.integrations import langchain

    calls: list[str] = []

    class Audited(ToolRegistry):
        def get_entry(self, name: str) -> ToolEntry | None:
            calls.append(f"get_entry {name}")
            return super().get_entry(name)

        def get_definitions(self, tool_names=None, **options):  # type: ignore[override]
            calls.append("get_definitions")
            return [d for d in super().get_definitions(tool_names, **options) if d]

        def dispatch(self, name, args, /, **kwargs):  # type: ignore[override]
            calls.append(f"dispatch {name}")
            return super().dispatch(name, args, **kwargs)

    reg = Audited()
    reg.register("t", "s", schema("t"), ok)
    (made,) = langchain.tools(registry=reg)
    assert made.invoke({}) == "ok"
    assert calls == ["get_definitions", "dispatch t"]
    assert reg.get_entry("t").name == "t" and calls[-1] == "get_entry t"


def test_a_subclasss_register_sees_every_spec_of_register_many():
    seen: list[str] = []

    class Audited(ToolRegistry):
        def register(self, name, *args, **kwargs):  # type: ignore[override]
            seen.append(name)
            return super().register(name, *args, **kwargs)

    reg = Audited()
    specs = [{"name": n, "toolset": "s", "schema": schema(n), "handler": ok} for n in "abc"]
    assert [e.name for e in reg.register_many(specs)] == ["a", "b", "c"]
    assert seen == ["a", "b", "c"]


# -- entries are read-only -------------------------------------------------------------

FIELDS = (*ToolEntry.__slots__, "annotations", "output_schema", "__class__")


@pytest.mark.parametrize("field", FIELDS)
def test_no_field_of_a_handed_out_entry_can_be_assigned_or_deleted(reg: ToolRegistry, field):
    reg.register("t", "s", schema("t"), ok, annotations={"readOnlyHint": True})
    reg.register("u", "s", schema("u"), ok)
    handed_out = [
        reg.get_entry("t"),
        reg.get_entry("u"),
        *reg._table.tools.values(),  # what a toolset listing iterates
    ]
    for entry in handed_out:
        with pytest.raises(AttributeError, match="read-only"):
            setattr(entry, field, other)
        with pytest.raises(AttributeError, match="read-only"):
            delattr(entry, field)
    assert reg.dispatch("t", {}) == reg.dispatch("u", {}) == "ok"
    assert reg.get_entry("t").annotations["readOnlyHint"] is True


def test_an_entry_cannot_be_made_again_in_place(reg: ToolRegistry):
    reg.register("t", "s", schema("t"), ok)
    entry = reg.get_entry("t")
    entry.__init__("t", "s", schema("t"), other)  # type: ignore[misc]
    ToolEntry.__init__(entry, "t", "s", schema("t"), other)
    assert reg.dispatch("t", {}) == "ok" and entry.handler is ok
    assert [d.action for d in reg.decisions()] == ["registered"], "nothing else was recorded"


def test_a_copy_of_an_entry_is_a_new_read_only_entry(reg: ToolRegistry):
    import copy
    import pickle

    reg.register("t", "s", schema("t"), ok, output_schema={"type": "object"})
    entry = reg.get_entry("t")
    for twin in (copy.copy(entry), copy.deepcopy(entry), pickle.loads(pickle.dumps(entry))):
        assert twin is not entry and type(twin) is type(entry)
        assert [getattr(twin, f) == getattr(entry, f) for f in FIELDS[:-1]] == [True] * 13
        with pytest.raises(AttributeError, match="read-only"):
            twin.handler = other


def test_dispatch_many_s_default_concurrency_is_the_batches():
    import inspect

    from toolreg._dispatch.dispatch_many import DEFAULT_MAX_CONCURRENCY

    for method in (ToolRegistry.dispatch_many, ToolRegistry.adispatch_many):
        default = inspect.signature(method).parameters["max_concurrency"].default
        assert default == DEFAULT_MAX_CONCURRENCY
