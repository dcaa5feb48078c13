"""The acceptor of a simple schema answers as the full validator does.

The guarantee (docs/registry.md "Dispatch"): for arguments the acceptor says
True to, the full validator says yes too, so dispatch gives exactly the
validator's answers; and on plain JSON arguments it says True to every call
the validator accepts, so the fast path is taken. A tool's fast call, built
from the same checks, calls its handler for exactly the arguments the
acceptor takes. Hypothesis hunts for a
counter-example among schemas made of the acceptor's keywords, with odd
constants (bools as bounds, infinities, NaN, huge ints, 1.0 in an enum) and
odd arguments (bool for an integer, 1.0 for an integer, NaN, -0.0, huge ints,
subclasses of str, int, float, list and dict, tuples, keys that explode).
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from conftest import DictSub, ExplodingKey, FloatSub, IntSub, ListSub, StrSub, validator_accepts
from toolreg._contract.entry import ToolEntry
from toolreg._dispatch.fast_call import build_fast_call
from toolreg._schemas.simple_schemas import build_acceptor
from toolreg._schemas.validation import compiled_schema

SETTINGS = settings(
    max_examples=300,
    deadline=None,  # the machine is shared: no timing in tests
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
NAMES = ["a", "b", "c"]
TYPES = ["string", "integer", "number", "boolean", "null", "array", "object"]
BOUNDS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]
DRAFTS = [
    "http://json-schema.org/draft-04/schema#",
    "http://json-schema.org/draft-06/schema#",
    "http://json-schema.org/draft-07/schema#",
    "https://json-schema.org/draft/2019-09/schema",
]


# -- schemas made of the acceptor's keywords, and a few it refuses ---------------------

# Odd constants come up often enough to be found, plain ones more often.
ODD = [math.inf, -math.inf, math.nan, True, False, 1.5, -1]
constants = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, -0.0, 1.0, 1.5, 2**64, 2.0**64, math.inf, -math.inf, math.nan]),
    st.sampled_from(["", "x", "xy"]),
)
bounds = st.integers(-3, 3) | st.sampled_from([0.5, -1.5, 2.0, 2**70]) | st.sampled_from(ODD)
counts = st.integers(0, 3) | st.integers(0, 3) | st.sampled_from(ODD)
type_keyword = st.sampled_from(TYPES) | st.lists(st.sampled_from(TYPES), min_size=1, max_size=3)


def typed(kind: Any, **optional: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({"type": kind}, optional={"description": st.just("d"), **optional})


def leaves() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        typed(st.just("string"), minLength=counts, maxLength=counts, enum=st.lists(constants)),
        typed(
            st.sampled_from(["integer", "number", ["integer", "null"]]),
            minimum=bounds,
            maximum=bounds,
            exclusiveMinimum=bounds,
            exclusiveMaximum=bounds,
        ),
        st.builds(  # one bound alone, so a value on it is not also out of another's range
            lambda kind, key, bound: {"type": kind, key: bound},
            st.sampled_from(["integer", "number"]),
            st.sampled_from(BOUNDS),
            bounds,
        ),
        typed(st.sampled_from(["boolean", "null", ["boolean", "string"]]), const=constants),
        st.fixed_dictionaries({"enum": st.lists(constants, min_size=1, max_size=4)}),
        st.fixed_dictionaries({"const": constants}),
        # Any keyword with anything: the rules for the other types must not matter.
        st.fixed_dictionaries(
            {},
            optional={
                "type": type_keyword,
                "enum": st.lists(constants, max_size=4),
                "const": constants,
                "minimum": bounds,
                "exclusiveMaximum": bounds,
                "minLength": counts,
                "maxItems": counts,
                "default": constants,
            },
        ),
    )


def nodes(depth: int) -> st.SearchStrategy[Any]:
    if depth >= 3:
        return leaves() | st.booleans() | st.just({})
    inner = st.deferred(lambda: nodes(depth + 1))
    arrays = st.fixed_dictionaries(
        {"type": st.just("array")},
        optional={"items": inner, "minItems": counts, "maxItems": counts},
    )
    return leaves() | st.booleans() | st.just({}) | arrays | objects(depth + 1)


def objects(depth: int) -> st.SearchStrategy[dict[str, Any]]:
    inner = st.deferred(lambda: nodes(depth + 1))

    def around(properties: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
        # "z" is never a property, {} and 1 are not plain flags: then no acceptor.
        names = [*properties, *properties, *properties, "z"]
        return st.fixed_dictionaries(
            {"type": st.just("object"), "properties": st.just(properties)},
            optional={
                "required": st.lists(st.sampled_from(names), unique=True, max_size=3),
                "additionalProperties": st.sampled_from([True, False, False, {}, 1]),
            },
        )

    return st.dictionaries(st.sampled_from(NAMES), inner, max_size=3).flatmap(around)


top_schemas = st.builds(
    lambda schema, draft: {**schema, "$schema": draft} if draft else schema,
    objects(0),
    st.none() | st.sampled_from(DRAFTS),
)

# -- arguments drawn from the schema, often valid, often odd ----------------------------

odd_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([2**100, -(2**100), -0.0, 1.0, Decimal("1"), (), ("x",), object()]),
    st.text(alphabet="xy", max_size=3),
    st.builds(StrSub, st.text(alphabet="xy", max_size=2)),
    st.builds(IntSub, st.integers(-3, 3)),
    st.builds(FloatSub, st.floats(-3, 3)),
)


def similar(draw: Any, value: Any) -> Any:
    """``value`` itself, or something a sloppy comparison would take for it."""
    options = [value]
    if type(value) in (int, float) and math.isfinite(value):
        options += [float(value), IntSub(int(value)), FloatSub(value)]
        if value in (0, 1):
            options.append(bool(value))
    if type(value) is bool:
        options += [int(value), float(value)]
    if type(value) is str:
        options.append(StrSub(value))
    return draw(st.sampled_from(options))


# Hypothesis leans to its simplest choice (0, False, the first option), so the
# simplest choice below is always the likely-valid one: odd values come in by
# the rarer draws.


def sometimes(draw: Any, one_in: int) -> bool:
    return draw(st.integers(0, one_in - 1)) == one_in - 1


def value_for(draw: Any, schema: Any, depth: int = 0) -> Any:
    if depth > 4 or not isinstance(schema, dict) or sometimes(draw, 8):
        return draw(odd_values)
    if "const" in schema:
        return similar(draw, schema["const"])
    if schema.get("enum") and not sometimes(draw, 4):
        return similar(draw, draw(st.sampled_from(schema["enum"])))
    names = schema.get("type", TYPES)
    kind = draw(st.sampled_from(names if isinstance(names, list) else [names]))
    if kind == "string":
        # Lengths at the limits, where < and <= part ways.
        limits = [schema[k] for k in ("minLength", "maxLength") if type(schema.get(k)) is int]
        at_limits = st.sampled_from(["x" * max(n, 0) for n in limits] or ["x"])
        return draw(at_limits | st.text(alphabet="xy", max_size=4) | st.just(StrSub("xy")))
    # Values on the bounds themselves, where < and <= part ways.
    edges = st.sampled_from(
        [schema[k] for k in BOUNDS if type(schema.get(k)) in (int, float)] or [0]
    )
    if kind == "integer":
        return draw(edges | st.integers(-4, 4) | st.sampled_from([2**70, 1.0, 2.0, -0.0, True]))
    if kind == "number":
        odd = st.sampled_from([math.nan, math.inf, -0.0])
        return draw(edges | st.integers(-4, 4) | st.floats(-4, 4) | odd)
    if kind == "boolean":
        return draw(st.booleans() | st.sampled_from([0, 1]))
    if kind == "null":
        return None
    if kind == "array":
        count = draw(st.integers(0, 4))
        items = [value_for(draw, schema.get("items", {}), depth + 1) for _ in range(count)]
        return draw(st.sampled_from([items, tuple(items), ListSub(items)]))
    return object_for(draw, schema, depth)


def object_for(draw: Any, schema: dict[str, Any], depth: int) -> Any:
    properties = schema.get("properties", {})
    out: dict[Any, Any] = {}
    for name in properties:
        if name in schema.get("required", []) or not sometimes(draw, 3):
            key = StrSub(name) if sometimes(draw, 6) else name
            out[key] = value_for(draw, properties[name], depth + 1)
    if sometimes(draw, 5):
        extra = draw(st.sampled_from(["z", "a", ExplodingKey("a")]))
        if not (isinstance(extra, ExplodingKey) and "a" in out):  # it would explode right here
            out[extra] = draw(odd_values)
    return DictSub(out) if sometimes(draw, 10) else out


# -- the two sides -------------------------------------------------------------------


def plain(value: Any) -> bool:
    """Exact JSON types all the way down, and no float that could pass for an integer."""
    if type(value) is dict:
        return all(type(k) is str and plain(v) for k, v in value.items())
    if type(value) is list:
        return all(plain(v) for v in value)
    if type(value) is float:
        return not value.is_integer()
    return type(value) in (str, int, bool, type(None))


def agree(schema: dict[str, Any], data: Any) -> None:
    """The acceptor, the validator and a fast call, on a dozen arguments drawn for ``schema``.

    The fast call (``_dispatch/fast_call.py``) runs the same checks written into
    a tool's own call function: it must call the handler exactly when the
    acceptor says yes, and hand every other call on.
    """
    compiled = compiled_schema(schema)
    assume(not isinstance(compiled, str) and compiled.accepts is not None)
    assert compiled.checks is not None
    handled: list[Any] = []
    handed_on: list[Any] = []
    entry = ToolEntry(
        name="t", toolset="ts", schema={}, handler=lambda args: handled.append(args) or "ran"
    )
    fast = build_fast_call(
        entry, entry.handler, compiled.checks, lambda args: handed_on.append(args) or "on"
    )
    assert fast is not None
    for _ in range(12):
        value = value_for(data.draw, schema)
        accepted = compiled.accepts(value)
        assert type(accepted) is bool
        full = validator_accepts(compiled.validate, value)
        event(f"acceptor {accepted}, validator {full}")
        if accepted:
            assert full, f"acceptor said yes, validator no: {value!r}"
        elif plain(value):
            assert not full, f"plain arguments the validator takes were not accepted: {value!r}"
        assert fast(value) == ("ran" if accepted else "on"), value
        assert (handled if accepted else handed_on).pop() is value
        assert handled == handed_on == [], "one call, one way"


def one_field(leaf: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """An object whose field ``a`` has the schema ``leaf``, required or not."""
    return st.builds(
        lambda sub, required: {"type": "object", "properties": {"a": sub}, **required},
        leaf,
        st.sampled_from([{}, {"required": ["a"]}]),
    )


@SETTINGS
@given(top_schemas, st.data())
def test_the_acceptor_says_yes_only_where_the_validator_does(schema, data):
    agree(schema, data)


@SETTINGS
@given(one_field(leaves()), st.data())
def test_each_kind_of_field_alone(schema, data):
    # The same guarantee, with every example spent on one field's rules:
    # bounds met exactly, lengths at their limits, enum members of other types.
    agree(schema, data)


# -- what gets an acceptor, and what does not ---------------------------------------------

BENCH = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to read."},
        "limit": {"type": "integer", "minimum": 1},
        "mode": {"type": "string", "enum": ["text", "bytes"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "follow": {"type": "boolean", "default": False},
        "where": {
            "type": "object",
            "properties": {"x": {"type": ["number", "null"]}},
            "required": ["x"],
            "additionalProperties": False,
        },
    },
    "required": ["path", "limit"],
    "additionalProperties": False,
    "$schema": "http://json-schema.org/draft-07/schema#",
}


def test_a_typical_tool_schema_is_simple_and_its_valid_calls_take_the_fast_path():
    accepts = build_acceptor(BENCH)
    assert accepts is not None
    assert accepts({"path": "a", "limit": 1, "tags": [], "where": {"x": None}})
    assert accepts({"path": "a", "limit": 10**30, "mode": "bytes", "where": {"x": 1.5}})
    # Each of these is for the validator to judge (and it refuses all but the last two).
    for args in [
        {"path": "a"},
        {"path": "a", "limit": 0},
        {"path": "a", "limit": True},
        {"path": "a", "limit": 1, "other": 1},
        {"path": "a", "limit": 1, "mode": "TEXT"},
        {"path": "a", "limit": 1, "tags": ["x", 1]},
        {"path": "a", "limit": 1, "where": {"x": 1, "y": 2}},
        {"path": 1, "limit": 1},
        DictSub({"path": "a", "limit": 1}),
        {"path": "a", "limit": 1.0},
        {"path": StrSub("a"), "limit": 1},
    ]:
        assert accepts(args) is False, args


@pytest.mark.parametrize(
    "keyword",
    [
        {"type": "string", "pattern": "^a"},
        {"type": "string", "format": "email"},
        {"$ref": "#"},
        {"anyOf": [{"type": "string"}]},
        {"enum": [[1]]},
        {"maximum": math.inf},
        {"type": "number", "minimum": math.nan},
        {"enum": [math.nan]},
        {"minLength": 1.5},
        {"type": "array", "items": [{"type": "string"}]},
        {"type": "text"},
        {"type": "object", "additionalProperties": {"type": "string"}},
        {"type": "object", "properties": {"b": {}}, "required": ["c"]},
    ],
)
def test_a_schema_with_anything_else_gets_no_acceptor(keyword):
    schema = {"type": "object", "properties": {"a": keyword}}
    assert build_acceptor(schema) is None


def test_a_rule_for_another_type_does_not_stop_an_acceptor():
    # The validator applies `maximum` to numbers only and `items` to arrays only.
    schema = {"type": "object", "properties": {"a": {"type": "string", "maximum": math.inf}}}
    accepts = build_acceptor(schema)
    assert accepts is not None and accepts({"a": "x"})


def test_an_exploding_key_is_left_to_the_validator():
    accepts = build_acceptor({"type": "object", "properties": {"a": {"type": "string"}}})
    assert accepts is not None
    assert accepts({ExplodingKey("a"): "x"}) is False


def test_no_schema_text_reaches_the_generated_code():
    hostile = "'); import os; os._exit(3) #"
    schema = {
        "type": "object",
        "properties": {hostile: {"type": "string", "enum": [hostile]}},
        "required": [hostile],
    }
    accepts = build_acceptor(json.loads(json.dumps(schema)))
    assert accepts is not None
    assert accepts({hostile: hostile}) is True
    assert accepts({hostile: "x"}) is False


def test_generated_code_shows_its_lines_in_a_traceback():
    """A fast call's generated source is in linecache, so a traceback quotes it."""
    import traceback

    from toolreg._schemas.simple_schemas import compiled_maker

    source = (
        "def make():\n"
        "    def boom():\n"
        "        raise ValueError('from generated code')\n"
        "    return boom\n"
    )
    boom = compiled_maker(source, "test")()
    try:
        boom()
    except ValueError as exc:
        text = "".join(traceback.format_exception(exc))
    assert "raise ValueError('from generated code')" in text
    assert "<toolreg test " in text


def test_generated_sources_kept_in_linecache_are_bounded(monkeypatch):
    """An MCP server sending ever new schemas cannot grow linecache without end."""
    import linecache

    from toolreg._schemas import simple_schemas

    monkeypatch.setattr(simple_schemas, "_SOURCES", {})
    monkeypatch.setattr(simple_schemas, "_SOURCES_LIMIT", 5)
    names = []
    for n in range(20):
        simple_schemas.compiled_maker(f"def make():\n    return {n}\n", "bound test")
        names.append(next(reversed(simple_schemas._SOURCES)))
    kept = [name for name in names if name in linecache.cache]
    assert kept == names[-5:] and list(simple_schemas._SOURCES) == names[-5:]
