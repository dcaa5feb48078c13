"""A function's tool schema, from its signature, type hints and docstring.

The parameters schema is pydantic's ``model_json_schema()`` for one field per
parameter, minus ``title``, plus ``"additionalProperties": false``; descriptions
come from the docstring unless ``Annotated`` metadata gives one.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, get_args

from .._contract.names import BUILTIN_NAMESPACE
from .._contract.tool_context import ToolContext
from .schema_metadata import apply_metadata
from .tool_args import Convert, Converters
from .tool_json import to_jsonable
from .type_kinds import UnsupportedType, is_field_info, type_name
from .type_schema import SchemaBuilder

if TYPE_CHECKING:
    import docstring_parser

_KINDS_SUPPORTED = "str, int, float, bool, list, dict, Literal, an Enum, a TypedDict, a dataclass"
_SKIPPED_FIRST = ("self", "cls")


# NamedTuples, not frozen dataclasses: importing this module is part of every
# start-up that loads a decorated tool.
class Param(NamedTuple):
    """One parameter as the handler fills it in."""

    name: str
    convert: Convert
    required: bool
    positional_only: bool
    #: Called for a missing argument whose Python default cannot stand in for
    #: itself (``x: int = Field(3)``), or that is positional-only; else None.
    fill: Callable[[], Any] | None


class FunctionSchema(NamedTuple):
    """Everything ``@tool`` derives from a function."""

    name: str
    #: What the model reads: the docstring's text without its sections.
    description: str
    #: Its first paragraph on one line, for UIs (``ToolEntry.description``).
    summary: str
    parameters: dict[str, Any]
    params: tuple[Param, ...]
    is_async: bool
    #: The resolved return annotation (``inspect.Signature.empty`` when there is none).
    returns: Any = inspect.Signature.empty
    #: The parameter annotated ``ToolContext`` (given the call's context, not in the schema).
    context_param: str | None = None


def function_schema(
    func: Callable[..., Any], *, name: str | None = None, description: str | None = None
) -> FunctionSchema:
    """Build the tool schema of ``func``; raises TypeError naming what cannot be expressed."""
    target = func.func if isinstance(func, functools.partial) else func
    tool = name or getattr(target, "__name__", None)
    if not isinstance(tool, str):
        raise TypeError(f"Cannot name a tool after {func!r}; pass name=...")
    if inspect.isgeneratorfunction(target) or inspect.isasyncgenfunction(target):
        raise TypeError(
            f"Tool {tool!r}: {_qualname(target)} is a generator; a tool must return its result"
        )
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"Tool {tool!r}: cannot read the signature of {func!r}: {exc}") from None
    hints = _type_hints(target, tool)
    doc_text, param_docs = _read_docstring(inspect.getdoc(target) or "")

    builder = SchemaBuilder()
    converters = Converters()
    properties: dict[str, Any] = {}
    params: list[Param] = []
    context_param: str | None = None
    for index, param in enumerate(signature.parameters.values()):
        if index == 0 and param.name in _SKIPPED_FIRST and not inspect.ismethod(func):
            continue  # an unbound method's receiver; a bound one has none
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            star = "*" if param.kind == param.VAR_POSITIONAL else "**"
            raise TypeError(
                f"Tool {tool!r}: parameter '{star}{param.name}' takes any number of "
                "arguments, which a model cannot pass; declare each parameter by name"
            )
        annotation = hints.get(param.name, param.annotation)
        if _is_context(annotation):
            if context_param is not None or param.kind == param.POSITIONAL_ONLY:
                raise TypeError(
                    f"Tool {tool!r}: parameter {param.name!r} cannot take the ToolContext: "
                    + ("it is positional-only" if context_param is None else "one is enough")
                )
            context_param = param.name
            continue
        try:
            prop = builder.schema(annotation)
            convert = converters.build(annotation)
        except UnsupportedType as exc:
            raise TypeError(_unsupported(tool, param.name, annotation, exc.culprit)) from None
        default, fill = _default(param)
        if is_field_info(param.default):  # ``x: int = Field(3, ge=0)``: like Annotated metadata
            apply_metadata(prop, [param.default])
        if param.name in param_docs and "description" not in prop:
            prop["description"] = param_docs[param.name]
        if default is not inspect.Parameter.empty:
            # pydantic, too, leaves out a default with no JSON form.
            with contextlib.suppress(TypeError, ValueError):
                prop["default"] = to_jsonable(default)
        properties[param.name] = prop
        params.append(
            Param(
                name=param.name,
                convert=convert,
                required=default is inspect.Parameter.empty and fill is None,
                positional_only=param.kind == param.POSITIONAL_ONLY,
                fill=fill,
            )
        )

    properties, defs = builder.finish(properties)
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": [p.name for p in params if p.required],
        "additionalProperties": False,
    }
    if defs:
        parameters["$defs"] = defs
    text = description if description is not None else doc_text
    return FunctionSchema(
        name=tool,
        description=text,
        summary=" ".join(text.split("\n\n", 1)[0].split()),
        parameters=parameters,
        params=tuple(params),
        is_async=_is_async(target),
        returns=hints.get("return", signature.return_annotation),
        context_param=context_param,
    )


def _is_context(annotation: Any) -> bool:
    """``ToolContext``, or ``ToolContext | None``."""
    if annotation is ToolContext:
        return True
    members = get_args(annotation)
    return ToolContext in members and all(m in (ToolContext, type(None)) for m in members)


def _is_async(target: Any) -> bool:
    return any(
        inspect.iscoroutinefunction(candidate)
        for candidate in (target, inspect.unwrap(target), type(target).__call__)
    )


def _default(param: inspect.Parameter) -> tuple[Any, Callable[[], Any] | None]:
    """(the default the schema shows, or empty; a filler for a missing argument, or None).

    A pydantic ``Field(...)`` default is resolved here, because the function
    would otherwise receive the FieldInfo object itself.
    """
    default = param.default
    if is_field_info(default):
        factory = default.default_factory
        if factory is not None:
            return inspect.Parameter.empty, factory
        value = default.default
        if type(value).__name__ == "PydanticUndefinedType":  # Field() with no default
            return inspect.Parameter.empty, None
        return value, lambda: value
    if default is not inspect.Parameter.empty and param.kind == param.POSITIONAL_ONLY:
        return default, lambda: default  # keeps later positional arguments in place
    return default, None


def _type_hints(func: Any, tool: str) -> dict[str, Any]:
    """Resolved annotations; names defined in the decorating scope are found too."""
    target = func if inspect.isroutine(func) else type(func).__call__
    # inspect.get_annotations, not typing.get_type_hints: before 3.11 the
    # latter turns every parameter defaulting to None into Optional[...].
    try:
        return inspect.get_annotations(target, eval_str=True)
    except NameError:
        pass  # perhaps a type defined in the decorating function: see below
    except Exception as exc:
        raise TypeError(f"Tool {tool!r}: cannot resolve the type hints: {exc}") from None
    # Under PEP 563 a type defined inside a function is only a name, which only
    # the caller's locals know; pydantic looks there for its models too.
    try:
        return inspect.get_annotations(target, eval_str=True, locals=_caller_locals())
    except Exception as exc:
        raise TypeError(f"Tool {tool!r}: cannot resolve the type hints: {exc}") from None


def _caller_locals() -> dict[str, Any]:
    """Locals of the innermost frame outside toolreg: the scope that decorated."""
    frame = sys._getframe(1)
    while frame is not None and _is_toolreg_machinery(frame.f_globals.get("__name__", "")):
        frame = frame.f_back  # type: ignore[assignment]
    return dict(frame.f_locals) if frame is not None else {}


def _is_toolreg_machinery(module: str) -> bool:
    # The built-ins live inside the package but decorate like any tool author.
    return module.startswith("toolreg.") and not module.startswith(BUILTIN_NAMESPACE + ".")


def _read_docstring(text: str) -> tuple[str, dict[str, str]]:
    """(the docstring's text without its sections, each parameter's description)."""
    plain = _plain_description(text)
    if plain is not None:
        return plain, {}
    doc = _parse_doc(text)
    return _description(doc), {p.arg_name: p.description for p in doc.params if p.description}


def _plain_description(text: str) -> str | None:
    """What docstring_parser makes of ``text`` when no line could open a section, else None.

    Each style only finds sections at such lines: a title ending in ``:``
    (Google), a title underlined with dashes (NumPy), a line starting with
    ``:`` (reST), ``@`` (Epydoc) or ``..`` (a Sphinx directive). Without one,
    every style reads the text alike: the first line, then the rest stripped,
    after a blank line if there was one. The test suite holds this to
    docstring_parser's own answer.
    """
    text = inspect.cleandoc(text)
    for line in text.splitlines():
        line = line.strip()
        if line.endswith(":") or line.startswith((":", "@", "..")) or _is_rule(line):
            return None
    first, _, rest = text.partition("\n")
    rest_text = rest.strip()
    if not rest_text:
        return first.strip()
    return (first + ("\n\n" if rest.startswith("\n") else "\n") + rest_text).strip()


def _is_rule(line: str) -> bool:
    """A line of dashes alone, as under a NumPy section title."""
    return bool(line) and not line.strip("-")


def _parse_doc(text: str) -> docstring_parser.Docstring:
    import docstring_parser

    try:
        return docstring_parser.parse(text)
    except docstring_parser.ParseError:
        # A docstring no style can read still describes the tool, as plain text.
        doc = docstring_parser.Docstring()
        doc.short_description = text
        return doc


def _description(doc: docstring_parser.Docstring) -> str:
    """The docstring's text, its Args/Returns/Raises sections left out."""
    parts = [doc.short_description or ""]
    if doc.long_description:
        parts.append("\n\n" if doc.blank_after_short_description else "\n")
        parts.append(doc.long_description)
    return "".join(parts).strip()


def _unsupported(tool: str, param: str, annotation: Any, culprit: Any) -> str:
    message = (
        f"Tool {tool!r}: parameter {param!r} has type {type_name(annotation)}, "
        "which has no JSON Schema"
    )
    if culprit is not annotation:
        message += f" ({type_name(culprit)} cannot be expressed)"
    return f"{message}; use {_KINDS_SUPPORTED} or a pydantic model"


def _qualname(func: Any) -> str:
    return getattr(func, "__qualname__", None) or repr(func)
