"""The compiled checks let only certainly valid arguments through, and change no answer.

A tool whose schema has a check program (``_schemas/check_programs.py``)
has its arguments read in C (toolreg-speedups' ``Checks``) before anything
else: what they accept goes straight to the handler, everything else to the
tool's Python fast call. Hypothesis generates schemas of the program's shape
and arguments drawn from them, plain and hostile (bool for an integer, 1.0
for an integer, NaN and infinities, huge ints, subclasses of str, int,
float, list and dict, keys that are not str or explode, extra and missing
keys, nested lists), and holds the compiled dispatch to three things: the
full validator accepts whatever the checks accept; the handler runs only for
arguments the validator accepts; and the answer is the Python dispatch's.
The hand-written cases are the hostile parties: a key whose ``__eq__``
mutates the arguments, a handler that replaces its own tool, Ctrl-C, and
recursion through dispatch (test_compiled.py).
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from conftest import (
    DictSub,
    ExplodingKey,
    FloatSub,
    IntSub,
    ListSub,
    StrSub,
    compiled_module_or_skip,
    compiled_path_settings,
    validator_accepts,
)
from toolreg import ToolRegistry, _extension
from toolreg._dispatch import compiled
from toolreg._schemas.check_programs import Field, Program, check_program
from toolreg._schemas.validation import compiled_schema

_hot = compiled_module_or_skip()

SETTINGS = compiled_path_settings(300)
NAMES = ["a", "b", "é", "a" * 40]


@pytest.fixture
def reg(monkeypatch: pytest.MonkeyPatch) -> ToolRegistry:
    monkeypatch.delenv(_extension.DISABLE_ENV, raising=False)
    return ToolRegistry()


def spec(parameters: dict[str, Any]) -> dict[str, Any]:
    return {"description": "a tool", "parameters": parameters}


def hot_checks(reg: ToolRegistry, name: str) -> Any:
    """The compiled checks of a hot tool (dispatching it once makes it hot)."""
    reg.dispatch(name, {})
    assert type(reg.dispatch) is _hot.HotDispatch
    return reg._dispatcher.hot[name][4]


# -- schemas of the program's shape ------------------------------------------------------

counts = st.integers(0, 3)
integer_bounds = st.integers(-3, 3) | st.sampled_from([2**62, -(2**62), 2**63 - 1])
number_bounds = st.sampled_from([-1.5, 0, 0.5, 2, -2.0, 2**53, 1e300])
ITEM_KINDS = ["string", "integer", "number", "boolean"]


def typed(kind: str, **optional: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"type": st.just(kind)}, optional={"description": st.just("d"), **optional}
    )


fields = st.one_of(
    typed(
        "string",
        minLength=counts,
        maxLength=counts,
        enum=st.lists(st.sampled_from(["", "x", "xy", "é", "text"]), min_size=1, max_size=3),
    ),
    typed("integer", minimum=integer_bounds, maximum=integer_bounds),
    typed("number", minimum=number_bounds, maximum=number_bounds),
    typed("boolean", default=st.booleans()),
    typed("array", items=st.sampled_from(ITEM_KINDS).map(lambda kind: {"type": kind})).map(
        lambda schema: {"items": {"type": "string"}, **schema}
    ),
)


@st.composite
def schemas(draw: Any) -> dict[str, Any]:
    properties = draw(st.dictionaries(st.sampled_from(NAMES), fields, min_size=1, max_size=4))
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if draw(st.booleans()):
        schema["required"] = draw(st.lists(st.sampled_from(sorted(properties)), unique=True))
    others = draw(st.sampled_from([None, True, False, False]))
    if others is not None:
        schema["additionalProperties"] = others
    return schema


# -- arguments drawn from the schema, often valid, often odd -------------------------------

odd_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([2**100, -(2**100), 2**63, -(2**63) - 1, -0.0, 1.0, Decimal("1"), ()]),
    st.text(alphabet="xyé", max_size=3),
    st.builds(StrSub, st.text(alphabet="xy", max_size=2)),
    st.builds(IntSub, st.integers(-3, 3)),
    st.builds(FloatSub, st.floats(-3, 3)),
    st.just([[1]]),
)


def sometimes(draw: Any, one_in: int) -> bool:
    return draw(st.integers(0, one_in - 1)) == one_in - 1


def item_for(draw: Any, kind: str) -> Any:
    if sometimes(draw, 10):
        return draw(odd_values)
    if kind == "string":
        return draw(st.text(alphabet="xyé", max_size=3) | st.builds(StrSub, st.just("x")))
    if kind == "integer":
        return draw(st.integers(-4, 4) | st.sampled_from([2**70, True, 1.0, IntSub(2)]))
    if kind == "number":
        odd = st.sampled_from([math.nan, math.inf, -math.inf, 2**53 + 1, -0.0, FloatSub(1.5)])
        return draw(st.integers(-4, 4) | st.floats(-4, 4) | odd)
    return draw(st.booleans() | st.sampled_from([0, 1]))


def value_for(draw: Any, schema: dict[str, Any]) -> Any:
    if sometimes(draw, 8):
        return draw(odd_values)
    kind = schema["type"]
    if kind == "string":
        members = schema.get("enum", [])
        # Lengths at the limits and either side, where < and <= part ways.
        limits = [
            schema[k] + d for k in ("minLength", "maxLength") if k in schema for d in (-1, 0, 1)
        ]
        edges = ["é" * n for n in limits if n >= 0]
        choice = st.sampled_from([*members, *edges] or ["x"])
        value = draw(choice | st.text(alphabet="xyé", max_size=4))
        return StrSub(value) if sometimes(draw, 6) else value
    if kind == "array":
        items = [item_for(draw, schema["items"]["type"]) for _ in range(draw(st.integers(0, 3)))]
        return draw(st.sampled_from([items, items, items, tuple(items), ListSub(items)]))
    if kind == "boolean":
        return draw(st.booleans() | st.sampled_from([0, 1, None]))
    # Values on the bounds themselves, and just past them.
    edges = [schema[k] for k in ("minimum", "maximum") if k in schema]
    near = [e + d for e in edges for d in (-1, 0, 1)] + [e + 0.5 for e in edges]
    numbers = st.sampled_from(near or [0]) | st.integers(-4, 4)
    if kind == "integer":
        odd = st.sampled_from([2**70, -(2**70), 2**63, True, False, 1.0, IntSub(1), -0.0])
        return draw(numbers | odd)
    odd = st.sampled_from([math.nan, math.inf, -math.inf, 2**53 + 1, 2**70, True, FloatSub(0.5)])
    return draw(numbers | st.floats(-4, 4) | odd)


def arguments_for(draw: Any, schema: dict[str, Any]) -> Any:
    if sometimes(draw, 15):
        return draw(st.sampled_from([None, [], "{}", '{"a": "x"}', "not json", ()]))
    properties = schema["properties"]
    out: dict[Any, Any] = {}
    for name in properties:
        if name in schema.get("required", []) or not sometimes(draw, 3):
            key = StrSub(name) if sometimes(draw, 8) else name
            out[key] = value_for(draw, properties[name])
    if sometimes(draw, 4):
        extra = draw(st.sampled_from(["z", 1, ("a",), ExplodingKey("a"), ExplodingKey("z")]))
        names = {str.__str__(k) for k in out}  # every key so far is a name or a StrSub of one
        if not (isinstance(extra, ExplodingKey) and str.__str__(extra) in names):
            # (where its name is already a key, it would explode right here)
            out[extra] = draw(odd_values)
    return DictSub(out) if sometimes(draw, 10) else out


# -- the two sides ---------------------------------------------------------------------------


def ordinary(value: Any) -> bool:
    """Exact JSON types all the way down, with no number the checks leave to Python:
    no float that could pass for an integer, no NaN or infinity, no int past 2**53."""
    if type(value) is dict:
        return all(type(k) is str and ordinary(v) for k, v in value.items())
    if type(value) is list:
        return all(ordinary(v) for v in value)
    if type(value) is float:
        return math.isfinite(value) and not value.is_integer()
    if type(value) is int:
        return abs(value) <= 2**53
    return type(value) in (str, bool)


def agree(reg: ToolRegistry, schema: dict[str, Any], data: Any) -> None:
    """The checks, the validator and both dispatches, on ten arguments drawn for ``schema``."""
    ran: list[Any] = []
    reg.register("t", "ts", spec(schema), lambda args: ran.append(args) or "ran")
    checks = hot_checks(reg, "t")
    assert type(checks) is _hot.Checks, "every schema drawn here has a program"
    validate = compiled_schema(schema).validate  # type: ignore[union-attr]
    compiled_dispatch, python_dispatch = reg.dispatch, reg.dispatch.slow
    for _ in range(10):
        args = arguments_for(data.draw, schema)
        accepted = checks.accepts(args)
        valid = isinstance(args, dict) and validator_accepts(validate, args)
        event(f"checks {accepted}, validator {valid}")
        if accepted:
            assert valid, f"the checks accepted what the validator refuses: {args!r}"
        elif ordinary(args):
            assert not valid, f"plain arguments the validator takes were left to Python: {args!r}"
        ran.clear()
        answer = compiled_dispatch("t", args)
        ran_compiled = list(ran)
        ran.clear()
        assert answer == python_dispatch("t", args), args
        assert ran_compiled == ran, "the handler ran on one path and not the other"
        if isinstance(args, dict):
            assert (ran_compiled == [args]) is valid, "the handler ran for refused arguments"


@SETTINGS
@given(schemas(), st.data())
def test_the_checks_accept_only_what_the_validator_accepts_and_change_no_answer(
    reg: ToolRegistry, schema: dict[str, Any], data: Any
):
    agree(reg, schema, data)


@SETTINGS
@given(fields, st.booleans(), st.data())
def test_each_kind_of_field_alone(reg: ToolRegistry, field: Any, required: bool, data: Any):
    # The same guarantee, with every example spent on one field's rules: bounds
    # and lengths at their edges, values of the next type over.
    schema = {"type": "object", "properties": {"a": field}, "required": ["a"] if required else []}
    agree(reg, schema, data)


# -- hostile parties, by hand ---------------------------------------------------------------

ONE_STRING = {
    "type": "object",
    "properties": {"a": {"type": "string"}},
    "required": ["a"],
}


class MutatingKey(str):
    """A key equal to "a" by hash, whose comparison rewrites the arguments it is in."""

    __hash__ = str.__hash__
    compared = 0

    def __eq__(self, other: object) -> bool:
        MutatingKey.compared += 1
        self.arguments.clear()  # type: ignore[attr-defined]
        self.arguments["a"] = 5  # type: ignore[attr-defined]
        return str.__eq__(self, other)


def mutating_arguments() -> dict[Any, Any]:
    key = MutatingKey("a")
    arguments = {key: "x"}
    key.arguments = arguments  # type: ignore[attr-defined]
    return arguments


@pytest.mark.parametrize("others", [True, False])
def test_a_key_that_mutates_the_arguments_is_compared_only_by_python(
    reg: ToolRegistry, others: bool
):
    ran: list[Any] = []
    reg.register("t", "ts", spec({**ONE_STRING, "additionalProperties": others}), ran.append)
    checks = hot_checks(reg, "t")
    assert checks.accepts(mutating_arguments()) is False
    assert MutatingKey.compared == 0, "the checks ran none of the key's code"
    MutatingKey.compared = 0
    answers = []
    for dispatch in (reg.dispatch, reg.dispatch.slow):
        answers.append(dispatch("t", mutating_arguments()))
        answers.append(MutatingKey.compared)
        MutatingKey.compared = 0
    assert answers[0] == answers[2] and answers[1] == answers[3]


def test_keys_that_are_not_plain_str_are_left_to_python_even_where_any_key_may_come(
    reg: ToolRegistry,
):
    reg.register("t", "ts", spec(ONE_STRING), lambda args: "ran")
    checks = hot_checks(reg, "t")
    assert checks.accepts({"a": "x", "other": [1, {}]}) is True
    for args in [{"a": "x", 1: "y"}, {StrSub("a"): "x"}, {"a": "x", ExplodingKey("z"): 1}]:
        assert checks.accepts(args) is False
        assert reg.dispatch("t", args) == reg.dispatch.slow("t", args)


def test_a_handler_that_replaces_or_removes_its_own_tool_on_the_compiled_path(
    reg: ToolRegistry,
):
    def first(args: dict[str, Any]) -> str:
        reg.register("t", "ts", spec(ONE_STRING), lambda args: "second")
        return "first"

    reg.register("t", "ts", spec(ONE_STRING), first)
    assert type(hot_checks(reg, "t")) is _hot.Checks
    assert reg.dispatch("t", {"a": "x"}) == "first"
    assert reg.dispatch("t", {"a": "x"}) == "second"
    reg.register("gone", "ts", spec(ONE_STRING), lambda args: str(reg.deregister("gone")))
    assert type(hot_checks(reg, "gone")) is _hot.Checks
    assert reg.dispatch("gone", {"a": "x"}) == "True"
    assert "Unknown tool" in reg.dispatch("gone", {"a": "x"})


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), type("Sub", (KeyboardInterrupt,), {})()])
def test_ctrl_c_in_a_handler_reaches_the_caller_on_the_compiled_path(
    reg: ToolRegistry, exc: BaseException
):
    def handler(args: dict[str, Any]) -> str:
        raise exc

    reg.register("t", "ts", spec(ONE_STRING), handler)
    assert hot_checks(reg, "t").accepts({"a": "x"})
    with pytest.raises(KeyboardInterrupt):
        reg.dispatch("t", {"a": "x"})
    assert "Invalid arguments" in reg.dispatch("t", {"a": 1}), "refused: the handler never ran"


def test_a_handler_failure_and_an_odd_result_are_answered_as_in_python(reg: ToolRegistry):
    def failing(args: dict[str, Any]) -> str:
        raise ValueError("boom")

    reg.register("fails", "ts", spec(ONE_STRING), failing)
    reg.register("odd", "ts", spec(ONE_STRING), lambda args: 42)
    reg.register("long", "ts", spec(ONE_STRING), lambda args: "x" * 50, max_result_size_chars=5)
    for name in ("fails", "odd", "long"):
        assert hot_checks(reg, name).accepts({"a": "x"})
        assert reg.dispatch(name, {"a": "x"}) == reg.dispatch.slow(name, {"a": "x"})
    assert json.loads(reg.dispatch("fails", {"a": "x"}))["error"].endswith("ValueError: boom")


# -- which tools get checks, and the checks themselves ---------------------------------------


def test_a_schema_outside_the_programs_shape_keeps_its_python_checks(reg: ToolRegistry):
    nullable = {"type": "object", "properties": {"a": {"type": ["string", "null"]}}}
    reg.register("t", "ts", spec(nullable), lambda args: "ran")
    reg.register("free", "ts", spec(ONE_STRING), lambda args: "ran", validate=False)
    assert hot_checks(reg, "t") is None and reg._dispatcher.hot["t"][0] is not None
    assert hot_checks(reg, "free") is None and reg._dispatcher.hot["free"][0] is None
    assert reg.dispatch("t", {"a": None}) == "ran"


EVERY_KIND = {
    "type": "object",
    "properties": {
        "s": {"type": "string"},
        "i": {"type": "integer"},
        "n": {"type": "number"},
        "b": {"type": "boolean"},
        "l": {"type": "array", "items": {"type": "integer"}},
        "t": {"type": "array", "items": {"type": "string"}},
    },
}


@pytest.mark.parametrize(
    "args",
    [
        DictSub(s="x"),
        {"s": StrSub("x")},
        {"i": True},
        {"i": IntSub(1)},
        {"i": 1.0},
        {"n": math.nan},
        {"n": -math.inf},
        {"n": FloatSub(0.5)},
        {"n": True},
        {"b": 1},
        {"l": (1,)},
        {"l": ListSub([1])},
        {"l": [1, True]},
        {"l": [[1]]},
        {"t": ["x", StrSub("y")]},
    ],
    ids=repr,
)
def test_only_exact_types_pass_the_checks(reg: ToolRegistry, args: dict[str, Any]):
    # Some of these the validator takes (a subclass of dict, str or list, NaN for a
    # number): it is the one to say so, through the fast call.
    reg.register("t", "ts", spec(EVERY_KIND), lambda args: "ran")
    checks = hot_checks(reg, "t")
    assert checks.accepts({"s": "x", "i": 2**80, "n": -0.0, "b": False, "l": [2**80], "t": ["y"]})
    assert checks.accepts(args) is False
    assert reg.dispatch("t", args) == reg.dispatch.slow("t", args)


def test_a_tool_registered_again_with_an_equal_schema_keeps_its_compiled_checks(
    reg: ToolRegistry,
):
    reg.register("t", "ts", spec(ONE_STRING), lambda args: "ran")
    checks = hot_checks(reg, "t")
    reg.register("t", "ts", spec(json.loads(json.dumps(ONE_STRING))), lambda args: "again")
    assert hot_checks(reg, "t") is checks
    assert reg.dispatch("t", {"a": "x"}) == "again"


def test_turning_validation_off_and_on_drops_and_brings_back_the_checks(reg: ToolRegistry):
    reg.register("t", "ts", spec(ONE_STRING), lambda args: "ran")
    assert hot_checks(reg, "t") is not None
    reg.set_validation(False)
    assert hot_checks(reg, "t") is None and reg.dispatch("t", {"a": 1}) == "ran"
    reg.set_validation(True)
    assert hot_checks(reg, "t") is not None and "Invalid" in reg.dispatch("t", {"a": 1})


def field(**changes: Any) -> Field:
    return Field("a", "string", None, False, None, None, None)._replace(**changes)


@pytest.mark.parametrize(
    ("program", "error", "message"),
    [
        ((True,), TypeError, "a program is"),
        ([True, ()], TypeError, "a program is"),
        ((1, ()), TypeError, "a program is"),
        ((True, [field()]), TypeError, "a program is"),
        ((True, (("a",),)), TypeError, "a field is"),
        ((True, (field(name=StrSub("a")),)), TypeError, "name must be a str"),
        ((True, (field(kind="object"),)), ValueError, "'a': unknown kind"),
        ((True, (field(required=1),)), ValueError, "'a': required must be a bool"),
        ((True, (field(kind="array"),)), ValueError, "'a': items must be"),
        ((True, (field(items="string"),)), ValueError, "'a': items must be"),
        ((True, (field(kind="array", items="array"),)), ValueError, "'a': items must be"),
        ((True, (field(low=-1),)), ValueError, "'a': a length must not be negative"),
        ((True, (field(low=1.5),)), ValueError, "'a': a bound must be an int"),
        ((True, (field(kind="integer", high=2**63),)), ValueError, "'a': a bound must be"),
        ((True, (field(kind="integer", high=True),)), ValueError, "'a': a bound must be"),
        ((True, (field(kind="boolean", high=1),)), ValueError, "'a': a bound must be"),
        ((True, (field(kind="number", low=1),)), ValueError, "'a': a number's bound"),
        ((True, (field(kind="number", low=math.nan),)), ValueError, "'a': a number's bound"),
        ((True, (field(enum={"x"}),)), ValueError, "'a': an enum must be a frozenset"),
        ((True, (field(kind="integer", enum=frozenset({1})),)), ValueError, "'a': an enum"),
        ((True, (field(enum=frozenset({"x", 1})),)), ValueError, "'a': an enum's members"),
        ((True, (field(), field())), ValueError, "'a': named twice"),
    ],
    ids=repr,
)
def test_the_checks_refuse_a_malformed_program_naming_the_field(
    program: Any, error: type[Exception], message: str
):
    with pytest.raises(error, match=message.replace("(", r"\(")):
        _hot.Checks(program)


def test_every_program_compiles():
    program = check_program(
        {
            "type": "object",
            "properties": {
                "s": {"type": "string", "minLength": 0, "maxLength": 2**62, "enum": ["x"]},
                "i": {"type": "integer", "minimum": -(2**63), "maximum": 2**63 - 1},
                "n": {"type": "number", "minimum": -(2**53), "maximum": 0.5},
                "b": {"type": "boolean"},
                **{f"l{k}": {"type": "array", "items": {"type": k}} for k in ITEM_KINDS},
            },
            "required": ["s"],
        }
    )
    assert program is not None
    checks = _hot.Checks(program)
    assert checks.accepts({"s": "x", "i": -(2**63), "n": 0.5, "b": True, "lnumber": [1, 2.5]})
    assert not checks.accepts({"i": 1})


def test_many_fields_are_found_by_name_in_any_order():
    # Past the fields scanned one by one, a key is looked up in a dict.
    names = [f"f{i}" for i in range(40)]
    fields = tuple(Field(n, "integer", None, n != "f39", 0, None, None) for n in names)
    checks = _hot.Checks(Program(False, fields))
    # Keys made at run time: equal text, other objects than the program's names.
    args = {"".join(["f", str(i)]): i for i in reversed(range(39))}
    assert checks.accepts(args)
    assert not checks.accepts({**args, "f39": -1})
    assert checks.accepts({**args, "f39": 5})
    assert not checks.accepts({**args, "f40": 0})
    del args["f0"]
    assert not checks.accepts(args)


def test_a_program_the_c_code_refuses_leaves_the_tool_to_its_fast_call(
    reg: ToolRegistry, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    def refusing(program: Program) -> Any:
        raise ValueError("no such program")

    made = compiled.checks_compiler
    monkeypatch.setattr(compiled, "checks_compiler", lambda compile_program: made(refusing))
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    reg.register("t", "set", {"parameters": schema}, lambda args: "ran")
    reg.dispatch("t", {})  # the first dispatch makes the compiled one
    fast = reg.dispatch
    for args in ({"a": "x"}, {"a": 1}, {}):
        fast("t", args)
        assert fast("t", args) == fast.slow("t", args)
    assert fast("t", {"a": "x"}) == "ran"
    assert reg._dispatcher.hot["t"][4] is None, "no compiled checks"
    assert "could not compile a check program" in caplog.text
