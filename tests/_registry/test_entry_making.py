"""Entries made in C (toolreg-speedups' ``EntryMaker``) are the entries Python makes.

The maker answers only for a registration that leaves every argument after
``handler`` at its default and that the compiled pre-check certainly accepts
(its soundness is tests/_contract/test_registration_precheck.py's business).
Here: it answers for exactly those, fills every field as ``ToolEntry.__init__``
does, runs none of the arguments' code, leaks nothing, and ``register`` and
``register_many`` come out the same with it and without it.
"""

from __future__ import annotations

import gc
import logging
import sys
import weakref
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import (
    StrSub,
    compiled_module_or_skip,
    compiled_path_settings,
    outputs_with_and_without_extensions,
)
from toolreg import ToolRegistry
from toolreg._contract.entry import ToolEntry, compiled_entry_maker
from toolreg._registry import entry_making

_hot = compiled_module_or_skip()
maker = _hot.EntryMaker(ToolEntry, ToolEntry.__slots__)

#: register's arguments after handler, at their defaults, in its order.
DEFAULTS: dict[str, Any] = {
    "check_fn": None,
    "requires_env": None,
    "is_async": False,
    "description": "",
    "emoji": "",
    "max_result_size_chars": None,
    "dynamic_schema_overrides": None,
    "annotations": None,
    "output_schema": None,
    "validate": True,
    "timeout": None,
}
#: One value other than the default for each of them (falsy ones too: only the default counts).
OTHERS: list[tuple[str, Any]] = [
    ("check_fn", lambda: True),
    ("requires_env", []),
    ("requires_env", "HOME"),
    ("is_async", True),
    ("is_async", 0),
    ("description", "said here"),
    ("description", StrSub("")),
    ("emoji", "x"),
    ("max_result_size_chars", 0),
    ("dynamic_schema_overrides", lambda: None),
    ("annotations", {}),
    ("output_schema", {"type": "object"}),
    ("validate", False),
    ("validate", 1),
    ("timeout", 1.5),
]


def handler(args: dict[str, Any]) -> str:
    return "ok"


def schema(name: str, description: Any = "A tool") -> dict[str, Any]:
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}}
    return {"name": name, "description": description, "parameters": parameters}


def fields(entry: ToolEntry) -> list[tuple[type, Any]]:
    return [(type(getattr(entry, f)), getattr(entry, f)) for f in ToolEntry.__slots__]


def python_entry(name: Any, toolset: Any, schema: Any, handler: Any, **rest: Any) -> ToolEntry:
    return entry_making.make_entry(name, toolset, schema, handler, **{**DEFAULTS, **rest})[0]


# -- what it answers for -----------------------------------------------------------

descriptions = st.one_of(
    st.none(), st.just(""), st.text(max_size=6), st.just(StrSub("d")), st.integers()
)
names = st.one_of(
    st.from_regex(r"[A-Za-z0-9_.-]{1,12}", fullmatch=True),
    st.text(max_size=4),
    st.just(StrSub("t")),
)


@st.composite
def registrations(draw: st.DrawFn) -> tuple[Any, ...]:
    name = draw(names)
    described = draw(st.fixed_dictionaries({}, optional={"description": descriptions}))
    built = {**schema(name), **described} if draw(st.booleans()) else described
    if "description" not in described:
        built.pop("description", None)
    toolset = draw(st.sampled_from(["set", "set", "", StrSub("set"), "mcp-x"]))
    return name, toolset, built, draw(st.sampled_from([handler, handler, print, None]))


@compiled_path_settings(300)
@given(registrations(), st.sampled_from([None, *OTHERS]))
def test_it_answers_for_a_checked_registration_at_its_defaults_and_fills_what_python_fills(
    case: tuple[Any, ...], other: tuple[str, Any] | None
):
    rest = dict(DEFAULTS)
    if other is not None:
        rest[other[0]] = other[1]
    made = maker(*case, *rest.values())
    if other is not None or not _hot.plain_registration(*case):
        assert made is None
        return
    assert type(made) is ToolEntry
    expected = python_entry(*case)
    assert fields(made) == fields(expected)
    assert made.toolset is sys.intern(case[1])  # toolsets share one string


@pytest.mark.parametrize(("key", "value"), OTHERS)
def test_any_argument_off_its_default_is_left_to_python(key: str, value: Any):
    assert maker("t", "set", schema("t"), handler, *{**DEFAULTS, key: value}.values()) is None


@pytest.mark.parametrize("description", [None, "", "A tool", "é ünïcode"])
def test_the_schema_s_description_is_the_entry_s_as_python_reads_it(description: Any):
    made = maker("t", "set", schema("t", description), handler, *DEFAULTS.values())
    assert fields(made) == fields(python_entry("t", "set", schema("t", description), handler))
    assert made.description == (description or "")


def test_a_spec_of_exactly_the_four_keys_is_made_as_register_would_make_it():
    spec = {"handler": handler, "schema": schema("t"), "toolset": "set", "name": "t"}
    assert fields(maker.from_spec(spec)) == fields(python_entry("t", "set", schema("t"), handler))
    for other in (
        {**spec, "override": False},  # any other key, even one at its default
        {k: v for k, v in spec.items() if k != "handler"},
        {**spec, "name": "bad name"},
        {StrSub("name"): "t", "toolset": "set", "schema": schema("t"), "handler": handler},
        [spec],
    ):
        assert maker.from_spec(other) is None


class RecordingKey(str):
    """A key hashing like "name" that records any comparison."""

    calls: list[str] = []

    def __hash__(self) -> int:
        RecordingKey.calls.append("hash")
        return hash("name")

    def __eq__(self, other: object) -> bool:
        RecordingKey.calls.append("eq")
        return True

    __ne__ = None  # type: ignore[assignment]


def test_no_code_of_a_spec_runs():
    spec = {RecordingKey("name"): "t", "toolset": "set", "schema": schema("t"), "handler": handler}
    RecordingKey.calls.clear()
    assert maker.from_spec(spec) is None
    assert RecordingKey.calls == []


def cycle_through_an_entry() -> weakref.ref[Any]:
    """An entry made in C, in a reference cycle (entry -> handler -> its closure ->
    a list -> entry) no one else holds; a weak reference to its handler."""
    holder: list[Any] = []

    def cyclic(args: dict[str, Any]) -> str:
        return str(holder)

    holder.append(maker("t", "set", schema("t"), cyclic, *DEFAULTS.values()))
    assert gc.is_tracked(holder[0])
    return weakref.ref(cyclic)


def test_no_reference_is_left_behind_and_entries_are_collected():
    def fn(args: dict[str, Any]) -> str:  # held by nothing else: garbage cannot move its count
        return "ok"

    name, toolset, kept = "counted_tool", "counted_set", schema("counted_tool")
    spec = {"name": name, "toolset": toolset, "schema": kept, "handler": fn}
    gc.collect()
    before = [sys.getrefcount(x) for x in (name, toolset, kept, fn, spec)]
    made = [maker(name, toolset, kept, fn, *DEFAULTS.values()) for _ in range(500)]
    made += [maker.from_spec(spec) for _ in range(500)]
    assert all(type(entry) is ToolEntry for entry in made)
    during = [sys.getrefcount(x) for x in (kept, fn)]
    assert during == [count + 1000 for count in before[2:4]]  # one per entry, no more
    del made
    assert [sys.getrefcount(x) for x in (name, toolset, kept, fn, spec)] == before

    gone = cycle_through_an_entry()
    gc.collect()
    assert gone() is None  # entry -> handler -> closure -> list -> entry, collected


class NoSlots:
    pass


class Inherited(ToolEntry):
    __slots__ = ()


@pytest.mark.parametrize(
    ("entry_type", "fields_", "message"),
    [
        (ToolEntry, ToolEntry.__slots__[::-1], "field 0 must be name"),
        (ToolEntry, ToolEntry.__slots__[:-1], "expected 11 fields"),
        (NoSlots, ToolEntry.__slots__, "not a plain slotted class"),
        (Inherited, ToolEntry.__slots__, "has no slot name of its own"),
        (int, ToolEntry.__slots__, "not a plain slotted class"),
    ],
)
def test_a_class_it_cannot_fill_is_refused_at_creation(entry_type, fields_, message):
    with pytest.raises(TypeError, match=message):
        _hot.EntryMaker(entry_type, fields_)


# -- where it is used -----------------------------------------------------------------


def test_register_makes_a_plain_registration_in_c_and_the_same_entry_as_python(
    monkeypatch: pytest.MonkeyPatch,
):
    filled: list[str] = []
    fill = entry_making._fill
    monkeypatch.setattr(entry_making, "_fill", lambda e, *a: filled.append(a[0]) or fill(e, *a))
    reg = ToolRegistry()
    made = reg.register("plain", "set", schema("plain"), handler)
    reg.register("timed", "set", schema("timed"), handler, timeout=2.0)
    assert filled == ["timed"]  # the plain one never reached the Python constructor
    assert fields(made) == fields(python_entry("plain", "set", schema("plain"), handler))
    assert reg.get_options("timed").timeout == 2.0 and reg.get_entry("plain") is made


def specs() -> list[dict[str, Any]]:
    return [
        {"name": "a", "toolset": "set", "schema": schema("a"), "handler": handler},
        {"name": "b", "toolset": "set", "schema": schema("b"), "handler": handler, "emoji": "*"},
        {"name": "a", "toolset": "other", "schema": schema("a"), "handler": handler},  # conflict
        {"name": "c", "toolset": "mcp-docs", "schema": schema("c"), "handler": handler},
        {"name": "d", "toolset": "set", "schema": {"name": "d"}, "handler": print},
    ]


def outcome(reg: ToolRegistry, results: list[Any]) -> list[Any]:
    decisions = [(d.action, d.tool, d.toolset, d.owner) for d in reg.decisions()]
    return [
        [None if r is None else fields(r) for r in results],
        decisions,
        {n: (reg.get_owner(n), fields(reg.get_entry(n))) for n in reg.get_all_tool_names()},
    ]


def test_register_many_comes_out_the_same_with_the_c_maker_and_without(
    monkeypatch: pytest.MonkeyPatch,
):
    with_c = ToolRegistry()
    first = outcome(with_c, with_c.register_many(specs()))
    monkeypatch.setattr(entry_making, "_maker", None)
    without = ToolRegistry()
    assert outcome(without, without.register_many(specs())) == first
    assert first[0][2] is None and with_c.get_entry("a").toolset == "set"  # the gate still judged


def test_a_subclass_s_own_register_sees_every_spec_of_register_many():
    seen: list[str] = []

    class Audited(ToolRegistry):
        def register(self, name: str, *args: Any, **kwargs: Any) -> Any:
            seen.append(name)
            return super().register(name, *args, **kwargs)

    Audited().register_many(specs())
    assert seen == ["a", "b", "a", "c", "d"]


def test_no_maker_where_the_extension_may_not_be_used(extension_refused):
    assert compiled_entry_maker() is None


def test_a_toolentry_the_c_code_cannot_fill_falls_back_to_python_with_a_log(monkeypatch, caplog):
    # Stands in for an EntryMaker built against another ToolEntry: no real build here differs.
    def refuses(entry_type: type, fields_: tuple[str, ...]) -> Any:
        raise TypeError("EntryMaker: ToolEntry has no slot name of its own")

    monkeypatch.setattr(_hot, "EntryMaker", refuses)
    with caplog.at_level(logging.ERROR, "toolreg.speedups"):
        assert compiled_entry_maker() is None
    assert "cannot make ToolEntry" in caplog.text


def test_the_maker_is_found_by_the_first_write_and_not_with_the_switch_set():
    script = """
import sys
from toolreg import ToolRegistry
reg = ToolRegistry()
before = "toolreg_speedups._hot" in sys.modules
reg.register("t", "set", {"parameters": {"type": "object"}}, print)
print(before, type(reg._plain_entry).__name__, type(reg.get_entry("t")).__name__)
"""
    assert outputs_with_and_without_extensions(script) == [
        ["False", "EntryMaker", "ToolEntry\n"],
        ["False", "NoneType", "ToolEntry\n"],
    ]


def test_its_entries_share_their_toolset_s_string_as_register_s_do():
    canonical = sys.intern("".join(["shared", "_set"]))
    spelt_again = "".join(["shared", "_set"])  # equal, not the same object
    assert spelt_again is not canonical
    made = maker("t", spelt_again, schema("t"), handler, *DEFAULTS.values())
    assert made.toolset is canonical
    spec = {"name": "t", "toolset": "".join(["shared", "_set"]), "schema": {}, "handler": handler}
    assert maker.from_spec(spec).toolset is canonical
