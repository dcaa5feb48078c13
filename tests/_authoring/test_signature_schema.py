"""Schemas from signatures: each type compared with what pydantic gives for it.

The MCP SDK's ``inputSchema`` and the OpenAI Agents SDK's ``params_json_schema``
are both pydantic's ``model_json_schema()`` of a model with one field per
parameter, so that model is the reference. Intentional differences are tested
on their own below: no ``title`` keys, ``additionalProperties: false`` and an
always-present ``required`` at the top, plain-string and dict ``Annotated``
metadata, and ``typing.TypedDict`` on Pythons where pydantic refuses it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import inspect
import pathlib
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Annotated, Any, Literal, NewType, Optional, Union

import annotated_types as at
import pydantic
import pytest
import typing_extensions as te
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import Field

from toolreg._authoring.signature_schema import (
    _description,
    _parse_doc,
    _plain_description,
    function_schema,
)
from toolreg._authoring.type_schema import strip_titles


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    """How loud."""

    LOW = 1
    HIGH = 2


class Mixed(enum.Enum):
    ONE = 1
    BEE = "b"


class Movie(te.TypedDict):
    """A film."""

    title: str
    year: te.NotRequired[int]


class Filters(te.TypedDict, total=False):
    genre: str
    min_year: te.Required[int]


@dataclasses.dataclass
class Point:
    """A point on the plane."""

    x: int
    y: float = 0.0
    tags: list[str] = dataclasses.field(default_factory=list)
    color: Color = Color.RED


@dataclasses.dataclass
class Bare:
    x: int


@dataclasses.dataclass
class Node:
    """A tree."""

    value: int
    children: list[Node] = dataclasses.field(default_factory=list)


class Address(pydantic.BaseModel):
    """Where someone lives."""

    street: str
    city: str = "Paris"
    kind: Color = Color.GREEN


class Person(pydantic.BaseModel):
    name: str = Field(description="Full name")
    home: Address
    age: Annotated[int, Field(ge=0)] = 30


UserId = NewType("UserId", int)
_ = inspect.Parameter.empty

# (annotation, default) pairs pydantic can take as they are.
CASES: list[tuple[Any, Any]] = [
    (str, _),
    (int, _),
    (float, _),
    (bool, _),
    (None, _),
    (Optional[str], _),  # noqa: UP045 (both spellings must work)
    (int | None, None),
    (Union[int, str], _),  # noqa: UP007
    (Union[int, str, None], None),  # noqa: UP007
    (Literal["a"], _),
    (Literal["a", "b"], "a"),
    (Literal[1, 2], 2),
    (Literal[1, "a"], _),
    (Literal[True], _),
    (Literal["a", None], None),
    (Color, Color.RED),
    (Level, _),
    (Mixed, _),
    (Color | None, None),
    (list[int], _),
    (list, _),
    (Sequence[int], _),
    (list[Color], _),
    (set[str], _),
    (frozenset[int], frozenset({2, 1})),
    (tuple[int, str], (1, "a")),
    (tuple[int, ...], _),
    (tuple, _),
    (tuple[()], _),
    (dict[str, int], _),
    (dict, _),
    (dict[str, Any], _),
    (Mapping[str, float], _),
    (dict[Color, int], _),
    (dict[Literal["a", "b"], int], _),
    (dict[int, str], _),
    (dict[str, list[Color]], _),
    (Movie, _),
    (Filters, _),
    (Movie | None, None),
    (Point, _),
    (Point, Point(1)),
    (list[Point], _),
    (Bare, _),
    (Node, _),
    (Address, _),
    (Person, _),
    (Person | None, None),
    (Any, _),
    (Any, None),
    (Any | None, _),
    (dt.datetime, _),
    (dt.date, dt.date(2020, 1, 2)),
    (dt.time, _),
    (uuid.UUID, _),
    (pathlib.Path, _),
    (bytes, _),
    (decimal.Decimal, _),
    (UserId, _),
    (float, 1),
    (list[int], [1, 2]),
    (Annotated[int, Field(ge=1, le=5)], 3),
    (Annotated[str, Field(description="d", min_length=2, pattern="^a", examples=["ab"])], _),
    (Annotated[list[int], at.MinLen(1), at.MaxLen(3)], _),
    (Annotated[dict[str, int], at.MinLen(1)], _),
    (Annotated[float, at.Interval(gt=0, le=10)], _),
    (Annotated[int, at.MultipleOf(2)], _),
    (Annotated[int | None, Field(ge=0)], None),
    (Annotated[int, Field(ge=0)] | None, None),
    (Annotated[int, Field(json_schema_extra={"x-unit": "s"})], _),
    (Annotated[Color, Field(description="The colour")], _),
    (Literal[Color.RED], _),
    (list[Literal["x"]], _),
    (int | list[int], _),
]


def make_function(annotation: Any, default: Any = _) -> Callable[..., None]:
    def f(x):  # type: ignore[no-untyped-def]
        pass

    f.__annotations__ = {"x": annotation}
    if default is not _:
        f.__defaults__ = (default,)
    return f


def reference(fields: dict[str, tuple[Any, Any]]) -> dict[str, Any]:
    """pydantic's schema for a model of these fields, in our top-level shape."""
    model = pydantic.create_model("Args", **fields)  # type: ignore[call-overload]
    schema = strip_titles(model.model_json_schema())
    schema.setdefault("required", [])
    schema["additionalProperties"] = False
    return schema


@pytest.mark.parametrize(("annotation", "default"), CASES, ids=lambda v: repr(v)[:40])
def test_each_type_matches_pydantic(annotation: Any, default: Any) -> None:
    ours = function_schema(make_function(annotation, default)).parameters
    expected = reference({"x": (annotation, ... if default is _ else default)})
    assert ours == expected


def test_a_whole_signature_matches_pydantic_in_order() -> None:
    def book(
        city: str,
        nights: int,
        guests: list[Movie] | None = None,
        *,
        level: Level = Level.HIGH,
        where: Point | None = None,
    ) -> str:
        return ""

    ours = function_schema(book).parameters
    expected = reference(
        {
            "city": (str, ...),
            "nights": (int, ...),
            "guests": (list[Movie] | None, None),
            "level": (Level, Level.HIGH),
            "where": (Point | None, None),
        }
    )
    assert ours == expected
    assert list(ours["properties"]) == ["city", "nights", "guests", "level", "where"]
    assert ours["required"] == ["city", "nights"]


def test_a_type_used_directly_and_inside_a_model_is_filed_once() -> None:
    def f(color: Color, home: Address) -> None:
        pass

    ours = function_schema(f).parameters
    assert sorted(ours["$defs"]) == ["Address", "Color"]
    assert ours == reference({"color": (Color, ...), "home": (Address, ...)})


class Shade(enum.Enum):
    RED = "red"
    GREEN = "green"


def _local_color() -> type[enum.Enum]:
    class Color(enum.Enum):
        BLUE = "blue"

    return Color


OtherColor = _local_color()


def test_types_sharing_a_name_or_a_shape_are_named_as_pydantic_names_them() -> None:
    def f(a: Color, b: OtherColor, c: Shade, d: list[Color]) -> None:  # type: ignore[valid-type]
        pass

    ours = function_schema(f).parameters
    assert ours == reference(
        {"a": (Color, ...), "b": (OtherColor, ...), "c": (Shade, ...), "d": (list[Color], ...)}
    )
    assert len(ours["$defs"]) == 3  # Color and Shade have the same values, not the same name


# -- docstrings -------------------------------------------------------------------------------


def google(city: str, days: int = 3) -> str:
    """Get the forecast.

    Uses the national weather service.

    Args:
        city: The city's name,
            as spoken locally.
        days: How many days ahead.

    Returns:
        The forecast, as JSON.
    """
    return ""


def numpy(city: str, days: int = 3) -> str:
    """Get the forecast.

    Uses the national weather service.

    Parameters
    ----------
    city : str
        The city's name,
        as spoken locally.
    days : int
        How many days ahead.

    Returns
    -------
    str
        The forecast, as JSON.
    """
    return ""


def rest(city: str, days: int = 3) -> str:
    """Get the forecast.

    Uses the national weather service.

    :param city: The city's name,
        as spoken locally.
    :param days: How many days ahead.
    :returns: The forecast, as JSON.
    """
    return ""


@pytest.mark.parametrize("func", [google, numpy, rest])
def test_docstring_styles_give_the_same_descriptions(func: Callable[..., str]) -> None:
    spec = function_schema(func)
    assert spec.description == "Get the forecast.\n\nUses the national weather service."
    assert spec.summary == "Get the forecast."
    expected = reference(
        {
            "city": (str, Field(description="The city's name,\nas spoken locally.")),
            "days": (int, Field(3, description="How many days ahead.")),
        }
    )
    assert spec.parameters == expected


def test_annotated_description_wins_over_the_docstring() -> None:
    def f(
        a: Annotated[int, "From Annotated."],
        b: Annotated[int, Field(description="From Field.")],
        c: int,
    ) -> None:
        """Do it.

        Args:
            a: From the docstring.
            b: From the docstring.
            c: Only in the docstring.
        """

    properties = function_schema(f).parameters["properties"]
    assert properties["a"]["description"] == "From Annotated."
    assert properties["b"]["description"] == "From Field."
    assert properties["c"]["description"] == "Only in the docstring."


def test_a_summary_wrapped_over_lines_is_kept_whole() -> None:
    def f() -> None:
        """Run a long command that needs
        two lines to describe.

        More detail.
        """

    spec = function_schema(f)
    assert spec.summary == "Run a long command that needs two lines to describe."
    assert spec.description.endswith("More detail.")
    assert spec.parameters == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }


#: Docstring-like lines: words, and whatever could open a section in some style.
_DOC_LINES = st.lists(
    st.sampled_from(
        [
            "",
            "  ",
            "Get the forecast.",
            "    indented more.",
            "Args:",
            "Args: x",
            "Returns:",
            "Note: keep it short.",
            "Parameters",
            "----------",
            "-",
            "city : str",
            "city: The city.",
            ":param city: The city.",
            "@param city: The city.",
            ".. deprecated:: 1.0",
            "\tTab.",
            "Example::",
            "Raises",
            "  x: y",
            "a\rb",
            "\x0c",
        ]
    )
    | st.text(max_size=12),
    max_size=8,
).map("\n".join)


@settings(max_examples=400, deadline=None)
@given(_DOC_LINES)
def test_a_plain_docstring_reads_as_docstring_parser_reads_it(text: str) -> None:
    # The fast path must give docstring_parser's own answer, or step aside.
    plain = _plain_description(text)
    if plain is not None:
        doc = _parse_doc(text)
        assert not doc.meta and plain == _description(doc)


@pytest.mark.parametrize("func", [google, numpy, rest])
def test_a_docstring_with_sections_goes_to_docstring_parser(func: Callable[..., str]) -> None:
    assert _plain_description(inspect.getdoc(func) or "") is None


def test_a_plain_docstring_keeps_its_paragraphs() -> None:
    text = "Get the forecast.\n\nUses the national weather service,\nevery hour.\n\nCached."
    assert _plain_description(text) == text
    assert _plain_description("") == ""


def test_description_override_and_no_docstring() -> None:
    def f(x: int) -> None:
        pass

    assert function_schema(f).description == ""
    assert function_schema(f, description="Mine.").description == "Mine."


# -- intentional differences from pydantic -----------------------------------------------------


def test_plain_string_and_dict_metadata_are_used_where_pydantic_ignores_them() -> None:
    def f(timeout: Annotated[float, "Seconds.", {"exclusiveMinimum": 0, "maximum": 60}] = 5):
        pass

    assert function_schema(f).parameters["properties"]["timeout"] == {
        "type": "number",
        "description": "Seconds.",
        "exclusiveMinimum": 0,
        "maximum": 60,
        "default": 5,
    }


def test_no_titles_anywhere_but_a_property_named_title_stays() -> None:
    def f(movie: Movie, title: str) -> None:
        pass

    schema = function_schema(f).parameters
    assert "title" in schema["properties"]
    assert "title" in schema["$defs"]["Movie"]["properties"]
    text = repr(schema)
    assert "'title': {'type'" in text and "'title': 'Movie'" not in text


def test_typing_typeddict_is_supported_where_pydantic_refuses_it() -> None:
    import typing

    class Plain(typing.TypedDict):
        a: int

    def f(p: Plain) -> None:
        pass

    assert function_schema(f).parameters["$defs"]["Plain"] == {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "required": ["a"],
    }


def test_a_parameter_without_annotation_is_any_with_its_default() -> None:
    def f(a, b=2):  # type: ignore[no-untyped-def]
        pass

    schema = function_schema(f).parameters
    assert schema["properties"] == {"a": {}, "b": {"default": 2}}
    assert schema["required"] == ["a"]


def test_a_default_with_no_json_form_is_left_out() -> None:
    sentinel = object()

    def f(a: Any = sentinel) -> None:
        pass

    schema = function_schema(f).parameters
    assert schema["properties"] == {"a": {}}
    assert schema["required"] == []


def test_pydantic_field_as_the_default() -> None:
    def f(a: int = Field(3, ge=0, description="A."), b: list[int] = Field(default_factory=list)):  # noqa: B008
        pass

    schema = function_schema(f).parameters
    assert schema == reference(
        {
            "a": (int, Field(3, ge=0, description="A.")),
            "b": (list[int], Field(default_factory=list)),
        }
    )


def test_types_defined_in_a_function_are_resolved() -> None:
    @dataclasses.dataclass
    class Local:
        n: int

    def f(item: Local) -> None:  # a string annotation under PEP 563
        pass

    assert function_schema(f).parameters["$defs"]["Local"]["properties"] == {
        "n": {"type": "integer"}
    }


def test_self_is_skipped_and_bound_methods_work() -> None:
    class Tools:
        def add(self, a: int) -> int:
            return a

    assert list(function_schema(Tools.add).parameters["properties"]) == ["a"]
    assert list(function_schema(Tools().add).parameters["properties"]) == ["a"]


# -- what cannot be a tool -------------------------------------------------------------------


class Opaque:
    pass


@pytest.mark.parametrize(
    ("annotation", "culprit"),
    [
        (Opaque, None),
        (Callable[[int], int], None),
        (Iterator[int], None),
        (list[Opaque], "Opaque"),
        (dict[str, Opaque] | None, "Opaque"),
        (dict[tuple[int, int], str], "tuple"),
        (dt.timedelta, None),
    ],
    ids=repr,
)
def test_unsupported_types_name_the_tool_and_parameter(annotation: Any, culprit: str) -> None:
    def add(x: int, y) -> None:  # type: ignore[no-untyped-def]
        pass

    add.__annotations__ = {"x": int, "y": annotation}
    with pytest.raises(TypeError) as caught:
        function_schema(add)
    message = str(caught.value)
    assert message.startswith("Tool 'add': parameter 'y' has type ")
    assert "which has no JSON Schema" in message
    if culprit:
        assert f"({culprit}" in message


class UUID:
    """Named, and placed, like uuid.UUID: recognised by identity, never by name."""


UUID.__module__ = "uuid"


def test_a_class_named_like_a_standard_library_type_is_not_taken_for_it() -> None:
    def lookalike(x: UUID) -> None:
        pass

    with pytest.raises(TypeError, match="parameter 'x' has type UUID, which has no JSON Schema"):
        function_schema(lookalike)
    assert function_schema(make_function(uuid.UUID)).parameters["properties"]["x"] == {
        "type": "string",
        "format": "uuid",
    }


def test_star_args_and_kwargs_raise() -> None:
    def spread(*values: int) -> None:
        pass

    def options(a: int, **rest: str) -> None:
        pass

    with pytest.raises(TypeError, match=r"Tool 'spread': parameter '\*values'"):
        function_schema(spread)
    with pytest.raises(TypeError, match=r"Tool 'options': parameter '\*\*rest'"):
        function_schema(options)


def test_generators_raise() -> None:
    def numbers() -> Iterator[int]:
        yield 1

    with pytest.raises(TypeError, match="Tool 'numbers'.*generator"):
        function_schema(numbers)


def test_an_unresolvable_annotation_names_the_tool() -> None:
    def f(x: Missing) -> None:  # type: ignore[name-defined]  # noqa: F821
        pass

    with pytest.raises(TypeError, match="Tool 'f': cannot resolve the type hints"):
        function_schema(f)
