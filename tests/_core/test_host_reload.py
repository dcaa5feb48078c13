"""A host reloading its own tool, written in C (toolreg-speedups' ``HostReload``).

``ToolTable.plain_writer`` gives ``register`` a writer for the entries the
compiled maker makes: with toolreg-speedups, the commonest write (host code
registering again, from the same loop, a tool it holds in the same toolset)
is done in C, and every other write goes to ``ToolTable.add``, which judges
it. Here: it takes that write and no other, the table, the decisions and the
caches come out exactly as the Python path leaves them, whatever is done to
the handler, the policies, the lock or the listener in between; and it leaks
nothing.
"""

from __future__ import annotations

import functools
import gc
import itertools
import sys
import threading
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import compiled_module_or_skip, compiled_path_settings
from toolreg import ToolRegistry
from toolreg._core.table import ToolTable
from toolreg._registry.entry_making import plain_entry_maker

_hot = compiled_module_or_skip()


def host_tool(args: dict[str, Any]) -> str:
    return "host"


def other_host_tool(args: dict[str, Any]) -> str:
    return "other"


def _builtin_function() -> Callable[[dict[str, Any]], str]:
    """A handler whose code is a built-in module's, as the built-ins' are."""
    namespace: dict[str, Any] = {"__name__": "toolreg.builtin_tools.fake"}
    exec("def builtin_tool(args):\n    return 'builtin'\n", namespace)
    return namespace["builtin_tool"]  # type: ignore[no-any-return]


builtin_tool = _builtin_function()
_namespace: dict[str, Any] = {"__name__": "toolreg.builtin_tools.fake"}
exec("def builtin_register(registry, *args):\n    registry.register(*args)\n", _namespace)
#: Built-in code registering what it is given.
builtin_register: Callable[..., None] = _namespace["builtin_register"]


def schema(name: str, note: str = "") -> dict[str, Any]:
    return {
        "name": name,
        "description": f"Tool {name} {note}",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    }


def python_writer(registry: ToolRegistry) -> ToolRegistry:
    """``registry`` with its entries made in C but every write ``ToolTable.add``'s."""
    registry._plain_entry = plain_entry_maker()
    registry._add_plain = registry._table.add
    return registry


class AddCounter:
    """Counts the Python calls of ``ToolTable.add`` made meanwhile (a profile hook,
    not a wrapper: a wrapper would add a frame, and add reads its caller's caller)."""

    def __init__(self) -> None:
        self.count = 0

    def __enter__(self) -> AddCounter:
        code = ToolTable.add.__code__

        def profile(frame: types.FrameType, event: str, arg: Any) -> None:
            if event == "call" and frame.f_code is code:
                self.count += 1

        sys.setprofile(profile)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(None)


def code_of(handler: Any) -> Any:
    """What a handler runs: each registry below gets its own copy of one function."""
    return type(handler), getattr(getattr(handler, "func", handler), "__code__", None)


def state_of(registry: ToolRegistry) -> dict[str, Any]:
    """Everything a write may change that a reader can see, decisions without their time."""
    state = registry._table._state
    return {
        "entries": {
            name: (entry.toolset, code_of(entry.handler), entry.schema, entry.description)
            for name, entry in state.live.items()
        },
        "owners": {name: registry.get_owner(name) for name in state.live},
        "options": {name: registry.get_options(name) for name in state.live},
        "toolsets": {ts: sorted(names) for ts, names in state.toolsets.items()},
        "generation": registry.generation,
        "decisions": [
            (
                d.seq,
                d.action,
                d.tool,
                d.toolset,
                d.owner,
                d.reason,
                d.previous_toolset,
                d.previous_owner,
                d.generation,
            )  # fmt: skip
            for d in registry.decisions()
        ],
    }


def test_the_registry_writes_plain_entries_through_host_reload() -> None:
    registry = ToolRegistry()
    registry.register("a", "set", schema("a"), host_tool)
    assert type(registry._add_plain) is _hot.HostReload


def test_a_host_loop_reloading_its_tools_is_written_without_add() -> None:
    registry = ToolRegistry()
    names = [f"t{i}" for i in range(5)]
    schemas = {name: schema(name) for name in names}
    with AddCounter() as first:
        for name in names:
            registry.register(name, "set", schemas[name], host_tool)
    assert first.count == len(names)  # new tools: the gate's, each
    with AddCounter() as again:
        for _ in range(3):
            for name in names:
                registry.register(name, "set", schemas[name], host_tool)
    # The first loop left its owner remembered (same frame, handler and toolset): all C's.
    assert again.count == 0
    assert registry.generation == 20
    assert [d.action for d in registry.decisions()[-15:]] == ["replaced"] * 15
    assert registry.get_entry("t3").schema is schemas["t3"]  # type: ignore[union-attr]


def test_the_replaced_tool_is_what_the_next_dispatch_and_definitions_see() -> None:
    registry = ToolRegistry()
    for handler, note in ((host_tool, "one"), (host_tool, "two"), (other_host_tool, "three")):
        registry.register("a", "set", schema("a", note), handler)
        assert registry.dispatch("a", {"path": "x"}) == handler({})
        assert registry.get_definitions()[0]["function"]["description"] == f"Tool a {note}"


def test_registering_into_another_toolset_or_over_a_builtin_is_judged_by_add() -> None:
    registry = ToolRegistry()
    registry.register("a", "one", schema("a"), host_tool)
    registry.register("b", "one", schema("b"), builtin_tool)
    with AddCounter() as counter:
        for _ in range(2):
            registry.register("a", "two", schema("a"), host_tool)  # a move: rejected
            registry.register("b", "one", schema("b"), host_tool)  # the built-ins' own tool
    assert counter.count == 4
    assert registry.get_entry("a").toolset == "one"  # type: ignore[union-attr]
    assert registry.get_owner("b") == "host"  # host and built-ins are one party


@pytest.mark.parametrize(
    "change",
    [
        "wrapped builtin",  # the handler gains a __wrapped__ of built-in code
        "builtin module",  # its __module__ becomes a built-in module's
        "plugin bound",  # a plugin is bound: every write is the gate's
        "acting for",  # host code acts for a plugin
        "batch",  # a batch is open: the write is staged
        "options",  # another tool has options of its own
        "alias",  # the toolset is an alias
        "builtin owner",  # the tool is the built-ins' now
        "builtin caller",  # built-in code makes the write
    ],
)
def test_after_each_change_a_reload_is_judged_as_in_python(change: str) -> None:
    results = []
    for registry in (ToolRegistry(), python_writer(ToolRegistry())):
        handler = types.FunctionType(
            host_tool.__code__, host_tool.__globals__, "host_copy"
        )  # its own function: the changes below stay in this test
        for round_ in range(4):
            if round_ == 2:
                if change == "wrapped builtin":
                    handler.__wrapped__ = builtin_tool  # type: ignore[attr-defined]
                elif change == "builtin module":
                    handler.__module__ = "toolreg.builtin_tools.fake"
                elif change == "plugin bound":
                    # This very file is the pack's: its writes are the pack's now.
                    registry.register_plugin_override_policy(
                        "somepack", False, plugin_id="somepack", paths=[str(Path(__file__).parent)]
                    )
                elif change == "options":
                    registry.register("a", "set", schema("a"), handler, validate=False)
                elif change == "alias":
                    registry.register_toolset_alias("nick", "set")
                elif change == "builtin owner":
                    registry.register("a", "set", schema("a"), builtin_tool)
            if change == "acting for" and round_ >= 2:
                from toolreg._core.plugin_policy import PluginPolicy

                policy = PluginPolicy("somepack", False, "somepack", tool_patterns=("a",))
                with registry.acting_for(policy):
                    registry.register("a", "set", schema("a"), handler)
            elif change == "batch" and round_ >= 2:
                with registry.batch():
                    registry.register("a", "set", schema("a"), handler)
                    assert registry.generation == round_  # staged, not yet seen
            elif change == "builtin caller" and round_ >= 2:
                builtin_register(registry, "a", "set", schema("a"), handler)
            elif change == "alias" and round_ >= 2:
                registry.register("a", "nick", schema("a"), handler)
                registry.register("a", "set", schema("a"), handler)
            else:
                registry.register("a", "set", schema("a"), handler)
        results.append(state_of(registry))
    assert results[0] == results[1]


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c"]),
            st.sampled_from(["set", "other", "mcp-srv"]),
            st.sampled_from(["host", "other", "builtin", "lambda", "partial"]),
            st.booleans(),
            st.sampled_from(["register", "register", "register", "deregister", "validate off"]),
        ),
        max_size=30,
    )
)
@compiled_path_settings(60)
def test_any_sequence_of_writes_leaves_what_python_leaves(writes: list[tuple]) -> None:
    handlers: dict[str, Any] = {
        "host": host_tool,
        "other": other_host_tool,
        "builtin": builtin_tool,
        "lambda": lambda args: "lambda",
        "partial": functools.partial(host_tool),
    }
    compiled, python = ToolRegistry(), python_writer(ToolRegistry())
    for name, toolset, handler, override, what in writes:
        # Both written from this one frame, as a host loop writes.
        for registry in (compiled, python):
            function = handlers[handler]
            if what == "deregister":
                registry.deregister(name)
            elif what == "validate off":
                registry.register(name, toolset, schema(name), function, validate=False)
            else:
                registry.register(name, toolset, schema(name), function, override=override)
        assert state_of(compiled) == state_of(python)


def test_a_writer_holding_the_lock_on_another_thread_is_waited_for() -> None:
    registry = ToolRegistry()
    for _ in range(3):  # the owner remembered: the next write is the C path's
        registry.register("a", "set", schema("a"), host_tool)
    held, release = threading.Event(), threading.Event()
    order: list[str] = []

    def writer() -> None:
        with registry._table._lock:
            held.set()
            release.wait(30)
            order.append("other writer done")

    thread = threading.Thread(target=writer)
    thread.start()
    assert held.wait(30)
    threading.Timer(0.05, release.set).start()
    registry.register("a", "set", schema("a", "mine"), host_tool)
    order.append("register done")
    thread.join(30)
    assert order == ["other writer done", "register done"]
    assert registry.generation == 4


def test_a_listener_that_raises_lets_the_lock_go() -> None:
    registry = ToolRegistry()
    for _ in range(3):
        registry.register("a", "set", schema("a"), host_tool)
    state = registry._table._state
    listener = state.listener

    def failing(*args: Any) -> None:
        raise RuntimeError("listener failed")

    state.listener = failing
    try:
        with pytest.raises(RuntimeError, match="listener failed"):
            registry.register("a", "set", schema("a", "new"), host_tool)
    finally:
        state.listener = listener
    lock = registry._table._lock
    assert not lock._is_owned()  # type: ignore[attr-defined]
    taken: list[bool] = []

    def take() -> None:
        taken.append(lock.acquire(timeout=30))
        lock.release()

    other = threading.Thread(target=take)
    other.start()
    other.join(30)
    assert taken == [True]
    # The write itself stands, as on the Python path (the listener runs after it).
    assert registry.get_entry("a").description == "Tool a new"  # type: ignore[union-attr]


def test_a_thousand_reloads_leak_no_reference() -> None:
    registry = ToolRegistry(decision_log_size=4)
    the_schema = schema("a")
    for _ in range(10):
        registry.register("a", "set", the_schema, host_tool)
    gc.collect()
    before = (sys.getrefcount(host_tool), sys.getrefcount(the_schema), sys.getrefcount("set"))
    for _ in range(1000):
        registry.register("a", "set", the_schema, host_tool)
    gc.collect()
    after = (sys.getrefcount(host_tool), sys.getrefcount(the_schema), sys.getrefcount("set"))
    assert after == before
    assert registry.generation == 1010


def test_its_arguments_are_checked() -> None:
    registry = ToolRegistry()
    registry.register("a", "set", schema("a"), host_tool)
    writer = registry._add_plain
    with pytest.raises(TypeError, match="by position"):
        writer(registry.get_entry("a"))  # type: ignore[call-arg]
    table = registry._table
    with pytest.raises(TypeError):
        _hot.HostReload(table.add, object(), *([None] * 9))


def test_without_the_extension_plain_entries_are_adds(extension_refused: str) -> None:
    registry = ToolRegistry()
    table = registry._table
    assert table.plain_writer(plain_entry_maker()) == table.add


class CollidingName(str):
    """A key of the live dict or the owners' (``where``) that hashes like ``target``,
    and runs ``on_compare`` once, at the first comparison of a write's phase
    ``fire_at``: its first lookup, the owners' lookup, or the write itself (a
    comparison in the live dict after the owners' one)."""

    on_compare: Callable[[], None] | None = None
    fire_at = "first"
    owners_seen = False

    def __new__(cls, value: str, where: str) -> CollidingName:
        made = super().__new__(cls, value)
        made.where = where  # type: ignore[attr-defined]
        return made

    def __hash__(self) -> int:
        return hash("target")

    def __eq__(self, other: object) -> bool:
        cls, where = type(self), self.where  # type: ignore[attr-defined]
        if cls.on_compare is not None and (
            cls.fire_at == "first"
            or (cls.fire_at == "owners" and where == "owned")
            or (cls.fire_at == "write" and where == "live" and cls.owners_seen)
        ):
            action, cls.on_compare = cls.on_compare, None
            action()
        cls.owners_seen = cls.owners_seen or where == "owned"
        return str.__eq__(self, other)


def test_code_run_mid_write_leaves_the_table_as_python_leaves_it() -> None:
    # Code that runs in the middle of a write, on the writing thread, holding the
    # lock (it is re-entrant): a collection's finalizer could. Stood in for by keys
    # of the table's dicts, put there by hand (register keeps plain strs), that hash
    # like "target": each lookup of "target" compares them. At each phase of the
    # write in turn, their code removes "target", registers another tool in a batch
    # (whose swap puts a new dict in place of the live one), pushes the old entry
    # out of the decision log, so only the write's own references keep it alive,
    # and in turn registers "target" again. The table comes out as in Python, with a
    # decision for the write; what that decision says stood there before may differ
    # (Python's add records what its lookups found mid-change; the C path hands such
    # a write back to add, which looks again). valgrind memcheck over this test
    # reports nothing.
    for fire_at, back in itertools.product(("first", "owners", "write"), (False, True)):
        results = []
        for registry in (
            ToolRegistry(decision_log_size=1),
            python_writer(ToolRegistry(decision_log_size=1)),
        ):
            registry.register("sneaky", "set", schema("sneaky"), other_host_tool)
            state = registry._table._state
            for where, keyed in (("live", state.live), ("owned", state.owned)):
                keyed[CollidingName("sneaky", where)] = keyed.pop("sneaky")
            for round_ in range(4):
                if round_ == 3:

                    def remove_target(registry: ToolRegistry = registry, back: bool = back) -> None:
                        registry.deregister("target")
                        filler = {"toolset": "other", "handler": other_host_tool}
                        registry.register_many(
                            [{"name": "filler", "schema": schema("filler"), **filler}]
                        )
                        gc.collect()
                        if back:  # the host's again, with another entry
                            registry.register("target", "set", schema("target", "b"), host_tool)

                    CollidingName.on_compare, CollidingName.fire_at = remove_target, fire_at
                    CollidingName.owners_seen = False
                registry.register("target", "set", schema("target", str(round_)), host_tool)
            assert CollidingName.on_compare is None, "the key's code ran mid-write"
            seen = state_of(registry)
            seen["decisions"] = [(d[0], *d[2:5], d[8]) for d in seen["decisions"]]
            results.append(seen)
        assert results[0] == results[1], (fire_at, back)
