"""The compiled register-time pre-check (toolreg-speedups' ``plain_registration``).

It may answer True only for a registration the Python ``check_registration``
certainly accepts: Hypothesis holds it to that check (run alone, its caches
emptied) on generated names, toolsets, handlers and schemas, plain and
hostile. It reads exact types only, so no code of the arguments runs and no
reference is left behind; it is loaded with the first check, not at import,
and not used when the extension may not be.
"""

from __future__ import annotations

import logging
import math
import sys
import textwrap
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from conftest import (
    BadName,
    DictSub,
    EvilDict,
    EvilStr,
    ExplodingKey,
    FloatSub,
    IntSub,
    ListSub,
    StrSub,
    compiled_module_or_skip,
    compiled_path_settings,
    outputs_with_and_without_extensions,
)
from toolreg import ToolRegistry, _extension
from toolreg._contract import schema_checks
from toolreg._contract.schema_limits import MAX_SCHEMA_DEPTH

_hot = compiled_module_or_skip()
plain = _hot.plain_registration

SETTINGS = compiled_path_settings(400)


def handler(args: dict[str, Any]) -> str:
    return "ok"


def bench_schema(name: str) -> dict[str, Any]:
    """benchmarks/bench_writes.py's schema for ``name``."""
    properties = {"path": {"type": "string"}, "limit": {"type": "integer"}}
    parameters = {"type": "object", "properties": properties, "required": ["path"]}
    return {"name": name, "description": f"Tool {name}", "parameters": parameters}


def python_accepts(name: Any, toolset: Any, schema: Any, handler: Any) -> bool:
    """The Python check's verdict, from scratch: its caches emptied first.

    Only for tests that use the ``python_registration_checks`` fixture.
    """
    assert schema_checks._precheck is None
    schema_checks._PASSED.clear()
    schema_checks._NAMES_PASSED.clear()
    schema_checks._PASSED_PARAMETERS.clear()
    try:
        schema_checks.check_registration(name, toolset, schema, handler)
    except Exception:  # any refusal, or the check failing on a hostile part
        return False
    return True


def nested(depth: int, keyword: str = "additionalProperties") -> dict[str, Any]:
    """An object schema with ``depth`` containers below ``parameters``."""
    inner: dict[str, Any] = {"type": "string"}
    for _ in range(depth - 1):
        inner = {keyword: inner}
    return {"type": "object", keyword: inner} if depth else {"type": "object"}


def cyclic() -> dict[str, Any]:
    parameters: dict[str, Any] = {"type": "object", "properties": {}}
    parameters["properties"]["self"] = parameters
    return parameters


class Odd:
    """A value JSON cannot encode."""


# -- generated registrations ---------------------------------------------------

KEYWORDS = [
    "type", "properties", "required", "items", "additionalProperties", "allOf", "anyOf",
    "not", "enum", "default", "minimum", "$defs", "$ref", "contains", "name", "description",
]  # fmt: skip
keys = st.one_of(
    st.sampled_from(KEYWORDS),
    st.text(max_size=6),
    st.sampled_from([StrSub("type"), StrSub("a"), 1, 1.5, None, True, ("a",)]),
)
hostile_leaves = st.one_of(
    st.builds(BadName),
    st.just(5000).map(lambda digits: 10**digits),  # JSON refuses ints past 4,300 digits
    st.sampled_from(
        [
            StrSub("object"),
            IntSub(1),
            FloatSub(1.0),
            2**64,
            -(2**63) - 1,
            ("a", "b"),
            {"a"},
            b"bytes",
            Odd(),
            EvilStr("x"),
            ListSub(["a"]),
            DictSub(type="object"),
        ]
    ),
)
plain_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from(["object", "string", "integer", "#", "#/properties/a", "http://x/s"]),
)
trees = st.recursive(
    st.one_of(plain_leaves, plain_leaves, hostile_leaves),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(keys, inner, max_size=4),
        st.builds(DictSub, st.dictionaries(st.text(max_size=3), inner, max_size=2)),
    ),
    max_leaves=12,
)
# Mostly object schemas, so the checks past the shape are reached too.
properties = st.one_of(
    st.dictionaries(st.sampled_from(["a", "b", "c"]), st.dictionaries(keys, trees, max_size=3)),
    trees,
)
required = st.one_of(st.lists(st.sampled_from(["a", "b", "c", StrSub("a")]), max_size=3), trees)
# Plain JSON in a plain object schema, so the pre-check has something to pass.
any_key = st.one_of(st.sampled_from(KEYWORDS), st.text(max_size=4))
plain_trees = st.recursive(
    plain_leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(any_key, inner, max_size=3),
    max_leaves=10,
)


@st.composite
def plain_parameters(draw: st.DrawFn) -> dict[str, Any]:
    names = st.sampled_from(["a", "b", "c"])
    properties = st.dictionaries(any_key, plain_trees, max_size=3)
    params: dict[str, Any] = {"type": "object"}
    params["properties"] = draw(st.dictionaries(names, properties, max_size=3))
    if draw(st.booleans()):
        params["required"] = draw(st.lists(names, max_size=2))  # some not properties
    for key, value in draw(st.dictionaries(any_key, plain_trees, max_size=2)).items():
        params.setdefault(key, value)
    return params


parameters = st.one_of(
    plain_parameters(),
    plain_parameters(),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["object", "object", "string", StrSub("object"), None])},
        optional={"properties": properties, "required": required, "x": trees, "items": trees},
    ),
    st.integers(min_value=0, max_value=MAX_SCHEMA_DEPTH + 3).map(nested),
    st.sampled_from([cyclic(), nested(3, "contains"), {"type": "object", "$ref": "#"}]),
    trees,
)
names = st.one_of(
    st.from_regex(r"[A-Za-z0-9_.-]{1,130}", fullmatch=True),
    st.from_regex(r"[A-Za-z0-9_.-]{1,130}", fullmatch=True),
    st.text(max_size=4),
    st.sampled_from(["t", "a" * 128, "a" * 129, "é", "a b", StrSub("t"), 5, None]),
    st.builds(BadName),
)
toolsets = st.sampled_from(
    ["set", "set", "set", "", "mcp-x", StrSub("set"), EvilStr("set"), None, 3]
)
handlers = st.sampled_from(
    [handler, handler, handler, print, handler.__call__, None, 42, "handler"]
)


SAME = "the tool's own name"


@st.composite
def registrations(draw: st.DrawFn) -> tuple[Any, Any, Any, Any]:
    name = draw(names)
    schema: dict[str, Any] = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "name": st.sampled_from([SAME, SAME, "other", None, StrSub("t")]),
                "description": st.one_of(st.text(max_size=5), st.none(), trees),
                "parameters": parameters,
                "x-extra": trees,
            },
        )
    )
    if schema.get("name") is SAME:
        schema["name"] = name  # not drawn: a name that cannot be hashed cannot be a choice
    if draw(st.booleans()):
        schema[draw(keys)] = draw(trees)
    shape = draw(st.sampled_from([dict, dict, dict, DictSub, EvilDict, list]))
    built = schema if shape is dict else shape(schema.items()) if shape is not list else [schema]
    return name, draw(toolsets), built, draw(handlers)


@SETTINGS
@given(registrations())
def test_a_registration_it_passes_the_python_check_accepts(python_registration_checks, case):
    verdict = plain(*case)
    assert type(verdict) is bool
    event(f"pre-check: {verdict}")
    if verdict:
        assert python_accepts(*case), case


@st.composite
def plain_registrations(draw: st.DrawFn) -> tuple[Any, Any, Any, Any]:
    """Registrations of plain parts only: most pass, the rest only just fail."""
    name = draw(st.from_regex(r"[A-Za-z0-9_.-]{1,8}", fullmatch=True))
    schema = draw(
        st.fixed_dictionaries(
            {"parameters": plain_parameters()},
            optional={"description": st.text(max_size=5), "x": plain_leaves},
        )
    )
    if draw(st.booleans()):
        schema["name"] = name
    return name, "set", schema, handler


@SETTINGS
@given(plain_registrations())
def test_a_plain_registration_it_passes_the_python_check_accepts(python_registration_checks, case):
    verdict = plain(*case)
    event(f"pre-check: {verdict}")
    if verdict:
        assert python_accepts(*case), case


# -- hand cases ----------------------------------------------------------------

PASSING = [
    ("tool_1", bench_schema("tool_1")),
    ("a" * 128, {}),
    ("t.x-Y_9", {"name": "t.x-Y_9", "description": None, "x-rank": 10**40, "x-f": math.nan}),
    ("t", {"name": None, "parameters": {"type": "object"}}),
    ("t", {"parameters": nested(MAX_SCHEMA_DEPTH)}),  # as deep as the check allows
    ("t", {"parameters": {"type": "object", "properties": {"a": {"enum": [math.inf, None]}}}}),
    ("t", {"parameters": {"required": [], "type": "object"}}),
    (
        "t",
        {
            "parameters": {
                "required": ["b"],  # before the properties it names
                "type": "object",
                "properties": {"b": {"type": "array", "items": {"anyOf": [{}, {"not": {}}]}}},
                "$defs": {"x": {"type": "integer", "minimum": -(2**63)}},
            }
        },
    ),
]


@pytest.mark.parametrize(("name", "schema"), PASSING)
def test_plain_registrations_pass_and_the_python_check_agrees(
    python_registration_checks, name, schema
):
    assert plain(name, "set", schema, handler) is True
    assert python_accepts(name, "set", schema, handler)


def test_the_benchmark_schema_passes_for_every_name_of_it():
    for i in (0, 1, 9_999):
        name = f"tool_{i:05d}"
        assert plain(name, f"set{i // 100}", bench_schema(name), handler) is True


OBJECT = {"type": "object"}
FAILING = [
    # the name, the toolset, the handler
    (StrSub("t"), "set", {}, handler),
    ("", "set", {}, handler),
    ("a" * 129, "set", {}, handler),
    ("a b", "set", {}, handler),
    ("é", "set", {}, handler),
    ("t", "", {}, handler),
    ("t", StrSub("set"), {}, handler),
    ("t", "set", {}, None),
    ("t", "set", {}, 42),
    # the schema's top level
    ("t", "set", DictSub(), handler),
    ("t", "set", [], handler),
    ("t", "set", {"name": "u"}, handler),
    ("t", "set", {"name": StrSub("t")}, handler),
    ("t", "set", {"description": 5}, handler),
    ("t", "set", {"x": [1]}, handler),  # a container other than parameters: not certain
    ("t", "set", {"x": IntSub(1)}, handler),
    ("t", "set", {1: "x"}, handler),
    ("t", "set", {StrSub("x"): "x"}, handler),
    ("t", "set", {"parameters": None}, handler),
    ("t", "set", {"parameters": DictSub(OBJECT)}, handler),
    # parameters' shape
    ("t", "set", {"parameters": {}}, handler),
    ("t", "set", {"parameters": {"type": "string"}}, handler),
    ("t", "set", {"parameters": {"type": StrSub("object")}}, handler),
    ("t", "set", {"parameters": {**OBJECT, "properties": []}}, handler),
    ("t", "set", {"parameters": {**OBJECT, "properties": {"a": True}}}, handler),
    ("t", "set", {"parameters": {**OBJECT, "properties": {"a": DictSub()}}}, handler),
    ("t", "set", {"parameters": {**OBJECT, "required": ["a"]}}, handler),
    ("t", "set", {"parameters": {**OBJECT, "properties": {"a": {}}, "required": ("a",)}}, handler),
    ("t", "set", {"parameters": {**OBJECT, "properties": {"a": {}}, "required": ["b"]}}, handler),
    ("t", "set", {"parameters": {**OBJECT, "required": [StrSub("a")]}}, handler),
    # what JSON, the depth limit or the $ref checks might refuse
    ("t", "set", {"parameters": nested(MAX_SCHEMA_DEPTH + 1)}, handler),
    ("t", "set", {"parameters": nested(100_000)}, handler),
    ("t", "set", {"parameters": nested(3, "contains")}, handler),
    ("t", "set", {"parameters": {**OBJECT, "$ref": "#"}}, handler),
    ("t", "set", {"parameters": {**OBJECT, "properties": {"a": {"$ref": "#/x"}}}}, handler),
    ("t", "set", {"parameters": {**OBJECT, "properties": {"$ref": {}}}}, handler),
    ("t", "set", {"parameters": cyclic()}, handler),
    ("t", "set", {"parameters": {**OBJECT, "default": 10**5000}}, handler),
    ("t", "set", {"parameters": {**OBJECT, "default": 2**64}}, handler),
    ("t", "set", {"parameters": {**OBJECT, "enum": ("a",)}}, handler),
    ("t", "set", {"parameters": {**OBJECT, "enum": ListSub()}}, handler),
    ("t", "set", {"parameters": {**OBJECT, "default": b"x"}}, handler),
    ("t", "set", {"parameters": {**OBJECT, "default": {1: "x"}}}, handler),
    ("t", "set", {"parameters": {**OBJECT, "default": FloatSub(1.0)}}, handler),
    (
        "t",
        "set",
        {"parameters": {**OBJECT, "default": [[[]] * 400] * 400}},
        handler,
    ),  # too many values
]


@pytest.mark.parametrize("case", FAILING, ids=range(len(FAILING)))
def test_what_it_is_not_certain_of_is_left_to_the_python_check(case):
    assert plain(*case) is False


def test_the_wrong_number_of_arguments_is_a_type_error():
    with pytest.raises(TypeError, match="4 arguments"):
        plain("t", "set", {})


# -- no code of the arguments run, nothing left behind --------------------------

CALLS: list[str] = []


def recording(base: type, *methods: str) -> Any:
    """A subclass of ``base`` whose ``methods`` note each call in CALLS, then do their work."""

    def noting(method: str) -> Any:
        def noted(self: Any, *args: Any) -> Any:
            CALLS.append(f"{base.__name__}.{method}")
            return getattr(base, method)(self, *args)

        return noted

    return type(f"Recording{base.__name__}", (base,), {m: noting(m) for m in methods})


RecordingStr = recording(str, "__eq__", "__hash__", "__len__")
RecordingDict = recording(
    dict, "__len__", "__iter__", "__getitem__", "__contains__", "get", "items", "keys", "values"
)
RecordingList = recording(list, "__len__", "__iter__", "__getitem__")


class RecordingValue:
    def __eq__(self, other: object) -> bool:
        CALLS.append("value.__eq__")
        return False

    def __hash__(self) -> int:
        CALLS.append("value.__hash__")
        return 1

    def __len__(self) -> int:
        CALLS.append("value.__len__")
        return 0

    def __index__(self) -> int:
        CALLS.append("value.__index__")
        return 0

    def __call__(self, args: Any) -> str:
        CALLS.append("value.__call__")
        return "ok"


def recorded_cases() -> list[tuple[Any, Any, Any, Any]]:
    key, part = RecordingStr("a"), RecordingValue()
    params = {**OBJECT, "properties": {"a": {}}}
    return [
        (RecordingStr("t"), "set", {}, handler),
        ("t", RecordingStr("set"), {}, handler),
        ("t", "set", RecordingDict(), handler),
        ("t", "set", {RecordingStr("name"): "t"}, handler),
        ("t", "set", {"name": RecordingStr("t")}, handler),
        ("t", "set", {"x": part}, handler),
        ("t", "set", {"parameters": RecordingDict(OBJECT)}, handler),
        ("t", "set", {"parameters": {"type": RecordingStr("object")}}, handler),
        ("t", "set", {"parameters": {**OBJECT, "properties": RecordingDict(a={})}}, handler),
        ("t", "set", {"parameters": {**OBJECT, "properties": {key: {}}}}, handler),
        ("t", "set", {"parameters": {**OBJECT, "properties": {"a": RecordingDict()}}}, handler),
        ("t", "set", {"parameters": {**params, "required": RecordingList(["a"])}}, handler),
        ("t", "set", {"parameters": {**params, "required": [RecordingStr("a")]}}, handler),
        ("t", "set", {"parameters": {**params, "required": [part]}}, handler),
        ("t", "set", {"parameters": {**params, "enum": [1, part]}}, handler),
        ("t", "set", {"parameters": {**params, "default": {"x": [part]}}}, handler),
        ("t", "set", {"parameters": {**params, "x": {RecordingStr("k"): 1}}}, handler),
        ("t", "set", {"parameters": {**params, "x": RecordingList([1])}}, handler),
        ("t", "set", {"parameters": {"required": [key], **params}}, handler),
        ("t", "set", {}, part),  # callable: its __call__ is not called to find out
    ]


def test_the_recorders_record():
    CALLS.clear()
    key = RecordingStr("a")
    assert {key: 1}[key] == 1 and RecordingDict(a=1).get("a") == 1 and len(RecordingList()) == 0
    assert CALLS == ["str.__hash__", "str.__hash__", "dict.get", "list.__len__"]


@pytest.mark.parametrize("index", range(len(recorded_cases())))
def test_no_code_of_the_arguments_runs(index):
    case = recorded_cases()[index]
    CALLS.clear()  # building the case hashed its keys
    verdict = plain(*case)
    assert CALLS == []
    assert verdict is (case[3] is not handler)  # only the callable object is plain


def test_an_exploding_key_is_never_compared():
    # Each hashes like a name the check reads: a lookup of that name would compare them.
    assert plain("t", "set", {ExplodingKey("name"): "t"}, handler) is False
    schema = {"parameters": {ExplodingKey("type"): "object"}}
    assert plain("t", "set", schema, handler) is False
    params = {"type": "object", "properties": {ExplodingKey("a"): {}}, "required": ["a"]}
    assert plain("t", "set", {"parameters": params}, handler) is False


def test_no_reference_is_left_behind():
    shared = {"type": "string"}
    passing = bench_schema("t")
    passing["parameters"]["properties"]["shared"] = shared
    failing = {"parameters": {**OBJECT, "properties": {"a": shared}, "required": ["b"]}}
    held = [passing, failing, shared, passing["parameters"], "t", "set", handler]
    before = [sys.getrefcount(x) for x in held]
    answers = {(plain("t", "set", passing, handler), plain("t", "set", failing, handler))}
    for _ in range(2_000):
        answers.add((plain("t", "set", passing, handler), plain("t", "set", failing, handler)))
        plain("t", "set", passing, None)
    assert answers == {(True, False)}
    assert [sys.getrefcount(x) for x in held] == before


# -- when it is used -------------------------------------------------------------


@pytest.fixture
def compiled_precheck(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pre-check found again by the next check, with the switch off."""
    monkeypatch.delenv(_extension.DISABLE_ENV, raising=False)
    monkeypatch.setattr(schema_checks, "_precheck", schema_checks._load_precheck)


def test_a_registration_it_passes_leaves_the_python_caches_alone(compiled_precheck):
    schema = bench_schema("cacheless")
    schema_checks.check_registration("cacheless", "set", schema, handler)
    assert schema_checks._precheck is plain
    assert schema_checks._PASSED.get(id(schema)) is not schema
    assert "cacheless" not in schema_checks._NAMES_PASSED


def test_what_it_leaves_to_python_is_refused_with_python_s_message():
    reg = ToolRegistry()
    params = {**OBJECT, "properties": {"a": {}}, "required": ["b"]}
    with pytest.raises(ValueError, match=r"'t'.*'parameters.required' names undeclared.*'b'"):
        reg.register("t", "set", {"parameters": params}, handler)
    with pytest.raises(ValueError, match="'t'.*nested too deeply"):
        reg.register("t", "set", {"parameters": nested(MAX_SCHEMA_DEPTH + 1)}, handler)
    assert len(reg) == 0


def test_it_is_not_used_where_the_extension_may_not_be(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, extension_refused: str
):
    refusal = extension_refused
    monkeypatch.setattr(schema_checks, "_precheck", schema_checks._load_precheck)
    with caplog.at_level(logging.WARNING, "toolreg.speedups"):
        schema_checks.check_registration("t", "set", bench_schema("t"), handler)
    assert schema_checks._precheck is None
    assert ("built for another toolreg" in caplog.text) is (refusal == "other ABI")


def test_it_is_loaded_by_the_first_check_and_not_with_the_switch_set():
    script = textwrap.dedent(
        """
        import sys
        from toolreg._contract import schema_checks
        before = "toolreg_speedups._hot" in sys.modules
        schema_checks.check_registration("t", "set", {"parameters": {"type": "object"}}, print)
        after = "toolreg_speedups._hot" in sys.modules
        print(before, after, type(schema_checks._precheck).__name__)
        """
    )
    outputs = outputs_with_and_without_extensions(script)
    assert outputs == [
        ["False", "True", "builtin_function_or_method\n"],
        ["False", "False", "NoneType\n"],
    ]
