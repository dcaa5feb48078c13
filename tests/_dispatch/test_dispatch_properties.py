"""Property tests: registration and dispatch hold their contracts for any input.

Registration raises ValueError (never anything else) for a schema it refuses,
and every schema it accepts can be validated. ``dispatch`` and ``adispatch``
return a plain str or a plain multimodal dict for any name, any arguments, any
handler behaviour, any hook behaviour and any result object: zero uncaught
exceptions.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import string
from typing import Any

import fastjsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import BadName, EvilDict, EvilStr, WeirdClass
from toolreg import ToolRegistry
from toolreg._contract.schema_limits import MAX_SCHEMA_DEPTH

PROPERTY_SETTINGS = settings(
    max_examples=200,
    deadline=None,  # the machine is shared: no timing in tests
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# -- JSON values and JSON-Schema documents, as an upstream MCP server could send them ----

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
names = st.text(alphabet=string.ascii_letters + "_$-/~%", min_size=1, max_size=6)


def refs() -> st.SearchStrategy[str]:
    pointer = st.lists(names | st.sampled_from(["properties", "$defs", "items", "0"]), max_size=3)
    local = pointer.map(lambda parts: "#" + "".join("/" + p for p in parts))
    return local | st.sampled_from(["#", "http://127.0.0.1:9/s.json", "other.json", "#anchor"])


def schemas(depth: int = 0) -> st.SearchStrategy[Any]:
    leaf = st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(["string", "integer", "number", "boolean", "null", "object"]),
            "enum": st.lists(json_scalars, min_size=1, max_size=3),
            "const": json_scalars,
            "minimum": st.integers(-5, 5),
            "maxLength": st.integers(0, 5),
            "$ref": refs(),
            "description": st.text(max_size=10),
        },
    )
    if depth >= 6:
        return leaf | st.booleans()
    sub = st.deferred(lambda: schemas(depth + 1))
    return (
        leaf
        | st.booleans()
        | st.fixed_dictionaries(
            {"type": st.just("object")},
            optional={
                "properties": st.dictionaries(names, sub, max_size=3),
                "additionalProperties": sub,
                "required": st.lists(names, max_size=2),
                "$defs": st.dictionaries(names, sub, max_size=2),
            },
        )
        | st.fixed_dictionaries(
            {"type": st.just("array")}, optional={"items": sub, "contains": sub}
        )
        | st.fixed_dictionaries(
            {}, optional={"anyOf": st.lists(sub, max_size=3), "allOf": st.lists(sub, max_size=2)}
        )
        | st.fixed_dictionaries({}, optional={"not": sub, "if": sub, "then": sub, "else": sub})
    )


def parameters() -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries(
        {"type": st.just("object")},
        optional={
            "properties": st.dictionaries(names, schemas(), max_size=4),
            "$defs": st.dictionaries(names, schemas(), max_size=2),
            "additionalProperties": st.booleans(),
            "allOf": st.lists(schemas(), max_size=2),
        },
    )


def chain(levels: int, keyword: str) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        if keyword == "properties":
            node = {"type": "object", "properties": {"a": node}}
        elif keyword in ("anyOf", "allOf", "oneOf"):
            node = {keyword: [node, {"type": "integer"}]}
        elif keyword in ("not", "if"):
            node = {keyword: node}
        else:
            node = {"type": "array", keyword: node}
    return node


@PROPERTY_SETTINGS
@given(parameters())
def test_registration_raises_only_value_error_and_what_it_accepts_compiles(params) -> None:
    reg = ToolRegistry()
    try:
        entry = reg.register("t", "ts", {"parameters": params}, lambda args: "ok")
    except ValueError as exc:
        assert "'t'" in str(exc)
        return
    assert entry is not None
    # A rule the schema itself breaks (duplicate "required" items, say) leaves that
    # tool unvalidated; a depth, recursion or fetch failure never happens.
    with contextlib.suppress(fastjsonschema.JsonSchemaDefinitionException):
        fastjsonschema.compile(params, use_default=False)
    json.dumps(reg.get_definitions())


@PROPERTY_SETTINGS
@given(
    st.sampled_from(
        ["properties", "items", "additionalProperties", "anyOf", "allOf", "not", "if", "contains"]
    ),
    st.integers(1, MAX_SCHEMA_DEPTH + 4),
)
def test_every_nesting_the_limit_accepts_compiles(keyword, levels) -> None:
    params = {"type": "object", "properties": {"x": chain(levels, keyword)}}
    reg = ToolRegistry()
    try:
        entry = reg.register("deep", "ts", {"parameters": params}, lambda args: "ok")
    except ValueError:
        return
    assert entry is not None
    fastjsonschema.compile(params)  # the validator's own limits are never reached


# -- dispatch: any name, arguments, handler, result, hook ------------------------------


class Boom(Exception):
    pass


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no words")


class Stranger(BaseException):
    pass


def _raiser(exc: BaseException) -> Any:
    def behave() -> Any:
        raise exc

    return behave


async def _coro(value: Any) -> Any:
    return value


RESULTS = st.sampled_from(
    [
        lambda: "plain",
        lambda: "x" * 50,
        lambda: EvilStr("evil"),
        lambda: EvilDict(_multimodal=True, content=[]),
        lambda: {"_multimodal": True, "content": [{"type": "text", "text": "t"}]},
        lambda: {"_multimodal": True, "content": "not a list"},
        lambda: None,
        lambda: 42,
        lambda: b"bytes",
        WeirdClass,
        lambda: _coro("from a coroutine"),
        lambda: _coro(WeirdClass()),
        _raiser(Boom("x" * 10_000)),
        _raiser(Unprintable()),
        _raiser(SystemExit(3)),
        _raiser(Stranger()),
        _raiser(GeneratorExit()),
        _raiser(asyncio.CancelledError()),
        _raiser(RecursionError()),
        _raiser(TimeoutError("own")),
    ]
)

# Objects too odd for hypothesis to hold (it inspects what it generates) are
# drawn as a tag and built inside the test.
ODD = {
    "list": lambda: ["list"],
    "dict": lambda: {"d": 1},
    "evil-hash": BadName,
    "evil-str": lambda: EvilStr("t"),
    "evil-dict": lambda: EvilDict(a=1),
    "weird-class": WeirdClass,
    "object": object,
    "float": lambda: 3.5,
    "bytes": lambda: b"t",
}


class Odd(str):
    """A tag for one of ODD's objects."""


odd = st.sampled_from(sorted(ODD)).map(Odd)
TOOL_NAMES = st.sampled_from(["t"]) | st.text(max_size=5) | st.integers() | st.none() | odd
ARGS = (
    json_values
    | json_values.map(lambda value: json.dumps(value))
    | st.integers(1, 100_000).map(lambda n: "[" * n + "]" * n)
    | st.sampled_from(["{bad json", '{"a": NaN}'])
    | odd
)


def built(value: Any) -> Any:
    return ODD[str.__str__(value)]() if type(value) is Odd else value


class RandomHooks:
    """The registry's hook seam itself, behaving as the draw says."""

    def __init__(self, before: Any, after: Any) -> None:
        self._before, self._after = before, after

    def before(self, name: str, args: Any) -> Any:
        return self._before()

    def after(self, name: str, args: Any, result: Any) -> Any:
        return self._after()


HOOK_BEHAVIOUR = st.sampled_from(
    [lambda: None, lambda: "blocked", _raiser(SystemExit(2)), _raiser(Boom()), WeirdClass]
)


def _assert_plain(out: Any) -> None:
    assert type(out) in (str, dict), type(out)
    if type(out) is dict:
        assert type(out.get("content")) is list
        json.dumps(out, default=str)


@PROPERTY_SETTINGS
@given(
    name=TOOL_NAMES,
    args=ARGS,
    params=parameters(),
    behave=RESULTS,
    is_async=st.booleans(),
    timeout=st.sampled_from([None, 30.0]),
    limit=st.sampled_from([None, 0, 10]),
    hooks=st.none() | st.tuples(HOOK_BEHAVIOUR, HOOK_BEHAVIOUR),
)
def test_dispatch_never_raises(name, args, params, behave, is_async, timeout, limit, hooks) -> None:
    reg = ToolRegistry()

    def handler(arguments: Any, **kwargs: Any) -> Any:
        return behave()

    async def ahandler(arguments: Any, **kwargs: Any) -> Any:
        return behave()

    try:
        reg.register(
            "t",
            "ts",
            {"parameters": params},
            ahandler if is_async else handler,
            is_async=is_async,
            timeout=timeout,
            max_result_size_chars=limit,
        )
    except ValueError:
        reg.register("t", "ts", {}, ahandler if is_async else handler, is_async=is_async)
    if hooks is not None:
        reg.set_dispatch_hooks(RandomHooks(*hooks))
    name, args = built(name), built(args)
    _assert_plain(reg.dispatch(name, args))
    _assert_plain(reg.dispatch(name, args, extra="kwarg"))
    _assert_plain(asyncio.run(reg.adispatch(name, args)))
