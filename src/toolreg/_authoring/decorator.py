"""``@tool``: a typed Python function becomes a registered tool.

::

    from typing import Annotated, Literal
    from toolreg import tool

    @tool(toolset="weather", emoji="🌦")
    def forecast(city: str, days: Annotated[int, {"minimum": 1, "maximum": 7}] = 3,
                 units: Literal["metric", "imperial"] = "metric") -> dict:
        \"\"\"Get the weather forecast for a city.

        Args:
            city: City name, e.g. "Paris".
            days: How many days ahead.
        \"\"\"
        return {...}

``@tool``, ``@tool(...)`` and ``@registry.tool(...)`` all register at once and
give back the function itself, unchanged and still callable as written. The
tool's schema is on it as ``func.__toolreg_schema__`` and its registered
handler as ``func.__toolreg_handler__``.

**Name, toolset, descriptions.** The name defaults to the function's name. The
toolset defaults to the last part of the function's module name (``weather``
for ``acme.tools.weather``); pass ``toolset=`` to group tools across modules.
The model reads the docstring's text without its sections (``Args:``,
``Parameters``, ``:param x:``, ``Returns``...); ``description=`` replaces it.
``ToolEntry.description``, for UIs, is the first paragraph of that text.

**Parameters → JSON Schema** (see ``_signature_schema`` for the object around
them). Each type gets the schema pydantic v2 gives it, without ``title``:

- ``str``, ``int``, ``float``, ``bool``: ``{"type": "string"}`` (``integer``, ``number``,
  ``boolean``); ``None``: ``{"type": "null"}``
- ``X | None``, ``Optional[X]``: ``{"anyOf": [X, {"type": "null"}]}``; ``Union[X, Y]``:
  ``{"anyOf": [X, Y]}``
- ``Literal["a"]``: ``{"const": "a", "type": "string"}``; ``Literal["a", "b"]``:
  ``{"enum": ["a", "b"], "type": "string"}`` (no ``type`` when the values' types differ)
- an Enum: ``{"$ref": "#/$defs/Name"}``, and under ``$defs`` ``{"enum": [values], "type": ...}``
  with the class docstring as description
- ``list[X]``, ``Sequence[X]``: ``{"type": "array", "items": X}``; ``set[X]``,
  ``frozenset[X]``: the same plus ``"uniqueItems": true``
- ``tuple[X, Y]``: ``{"type": "array", "prefixItems": [X, Y], "minItems": 2, "maxItems": 2}``;
  ``tuple[X, ...]``: ``{"type": "array", "items": X}``
- ``dict[str, X]``, ``Mapping[str, X]``: ``{"type": "object", "additionalProperties": X}``
  (``true`` for ``Any``); Enum or Literal keys add ``propertyNames``
- a TypedDict or a dataclass: a ``$ref`` to ``{"type": "object", "properties", "required"}``
  (``total=False``, ``NotRequired`` and field defaults honoured; docstring as description)
- a pydantic model: a ``$ref`` to its own ``model_json_schema()``; other pydantic types
  (``HttpUrl``, ``constr()``) through ``TypeAdapter``
- ``datetime``, ``date``, ``time``, ``UUID``, ``Path``, ``bytes``: ``{"type": "string"}`` with
  ``format`` ``date-time``, ``date``, ``time``, ``uuid``, ``path``, ``binary``;
  ``Decimal``: ``{"anyOf": [{"type": "number"}, {"type": "string"}]}``
- ``Any``, ``object``, or no annotation: ``{}``

``Annotated[X, ...]`` metadata: a str is the description (it wins over the
docstring); a dict is merged in as JSON Schema keywords (``{"minimum": 1}``); a
pydantic ``Field(description=..., ge=...)`` and annotated_types constraints
(``Ge(1)``, ``MaxLen(5)``) give their descriptions and bounds. A default that
has a JSON form appears as ``"default"``. Any other type (a plain class, a
``Callable``, an iterator), and ``*args`` or ``**kwargs``, raise TypeError at
decoration, naming the function and the parameter. A first parameter named
``self`` or ``cls`` is left out (decorate the bound method). pydantic is
optional: it is used only for pydantic's own types, which cannot exist without it.

**The call's context.** A parameter annotated ``toolreg.ToolContext`` (any
name; ``ToolContext | None`` too) is not in the schema: each call gets a
context whose ``report_progress`` and ``log`` reach whoever listens to the
call (see ``toolreg._contract.tool_context``).

**Calls.** The handler is ``handler(args: dict, **context)``; the context
keyword arguments that hosts pass to dispatch are not given to the function.
Each argument is converted to the declared type: enum values to members,
objects to dataclasses, TypedDicts and models (``model_validate``), arrays to
tuples and sets, ISO strings to dates, an integer to ``float`` for a float
parameter (and 3.0 to 3 for an int one). An argument that is missing, unknown
or cannot be converted comes back as a tool_error naming it (``error_type:
"invalid_arguments"``); dispatch normally rejects such calls earlier, against
the schema. An ``async def`` function is registered with ``is_async=True``.

**Results.** A str is returned as is, and so is the multimodal dict
``{"_multimodal": True, ...}``. Anything else is JSON-encoded: dataclasses and
models as objects, enums as their values, dates in ISO 8601, sets and tuples as
arrays, ``None`` as ``null``, and anything unknown as its ``str()``. Exceptions
propagate to dispatch, which turns them into a tool_error.

**Structured results.** A function annotated to return a TypedDict, a
dataclass or a pydantic model gets an output schema (``ToolEntry.output_schema``,
MCP's ``outputSchema``; see ``result_schema``): dispatch still returns the JSON
text, and ``toolreg serve`` sends the object as ``structuredContent`` too.
``output_schema=`` gives one by hand; ``output_schema=False``, none.

**Annotations.** ``annotations=`` takes MCP's tool hints, with MCP's names or
the MCP SDK's: ``{"readOnlyHint": True}``, ``{"read_only_hint": True}``, or
the SDK's ``ToolAnnotations`` model.

**Ownership.** The handler carries ``__wrapped__ = func``, so a function defined
in a plugin's package belongs to that plugin, whoever decorates it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from .._contract.results import invalid_arguments

if TYPE_CHECKING:
    from .._contract.entry import CheckFn, SchemaOverrides
    from .._registry.registry import ToolRegistry
    from .signature_schema import FunctionSchema

#: The decorated function's own type: ``@tool`` gives the function back unchanged, so a
#: type checker keeps its parameters, return type and overloads.
F = TypeVar("F", bound=Callable[..., Any])


@overload
def tool(func: F, /) -> F: ...


@overload
def tool(
    func: None = None,
    *,
    name: str | None = None,
    toolset: str | None = None,
    description: str | None = None,
    check_fn: CheckFn | None = None,
    requires_env: Sequence[str] | None = None,
    emoji: str = "",
    max_result_size_chars: int | None = None,
    override: bool = False,
    timeout: float | None = None,
    validate: bool = True,
    dynamic_schema_overrides: SchemaOverrides | None = None,
    annotations: Mapping[str, Any] | None = None,
    output_schema: dict[str, Any] | Literal[False] | None = None,
    registry: ToolRegistry | None = None,
) -> Callable[[F], F]: ...


def tool(
    func: F | None = None,
    *,
    name: str | None = None,
    toolset: str | None = None,
    description: str | None = None,
    check_fn: CheckFn | None = None,
    requires_env: Sequence[str] | None = None,
    emoji: str = "",
    max_result_size_chars: int | None = None,
    override: bool = False,
    timeout: float | None = None,
    validate: bool = True,
    dynamic_schema_overrides: SchemaOverrides | None = None,
    annotations: Mapping[str, Any] | None = None,
    output_schema: dict[str, Any] | Literal[False] | None = None,
    registry: ToolRegistry | None = None,
) -> Any:
    """Register a typed function as a tool; returns the function unchanged.

    Use as ``@tool`` or ``@tool(...)``. Without ``registry``, the tool goes into
    ``toolreg.registry`` as it is at decoration time. ``output_schema`` is
    derived from a structured return type unless given (False: none). Raises
    TypeError when a parameter's or the return's type has no JSON Schema, and
    whatever ``register`` raises.
    """
    if func is not None and not callable(func):
        raise TypeError(f"@tool takes keyword arguments only (name=...), got {func!r}")

    def decorate(f: F) -> F:
        # Imported on first use, so that `import toolreg` stays cheap for hosts
        # that never decorate.
        from .result_schema import result_schema
        from .signature_schema import function_schema

        spec = function_schema(f, name=name, description=description)
        output = result_schema(spec.name, spec.returns) if output_schema is None else output_schema
        handler = make_handler(f, spec)
        schema: dict[str, Any] = {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.parameters,
        }
        target = registry if registry is not None else _current_registry()
        target.register(
            spec.name,
            toolset or _default_toolset(f),
            schema,
            handler,
            check_fn=check_fn,
            requires_env=requires_env,
            is_async=spec.is_async,
            description=spec.summary,
            emoji=emoji,
            max_result_size_chars=max_result_size_chars,
            dynamic_schema_overrides=dynamic_schema_overrides,
            override=override,
            validate=validate,
            timeout=timeout,
            annotations=annotations,
            output_schema=None if output is False else output,
        )
        try:
            f.__toolreg_schema__ = schema  # type: ignore[attr-defined]
            f.__toolreg_handler__ = handler  # type: ignore[attr-defined]
        except AttributeError:
            pass  # a bound method or a builtin takes no attributes; the tool still works
        return f

    return decorate if func is None else decorate(func)


def make_handler(func: Callable[..., Any], spec: FunctionSchema) -> Callable[..., Any]:
    """The ``(args, **context)`` handler that calls ``func`` with converted arguments."""
    from .tool_json import encode_result

    prepare = _preparer(spec)
    if spec.is_async:

        async def handler(args: dict[str, Any] | None = None, **context: Any) -> Any:
            call = prepare(args)
            if isinstance(call, str):
                return call
            return encode_result(await func(*call[0], **call[1]))

    else:

        def handler(args: dict[str, Any] | None = None, **context: Any) -> Any:
            call = prepare(args)
            if isinstance(call, str):
                return call
            return encode_result(func(*call[0], **call[1]))

    # wraps sets __wrapped__ (ownership follows it to the author's module), the
    # name and the docstring; the signature stays the handler's own, truthfully.
    signature = inspect.signature(handler)
    functools.wraps(func)(handler)
    handler.__signature__ = signature  # type: ignore[attr-defined]
    return handler


Call = tuple[list[Any], dict[str, Any]]


def _preparer(spec: FunctionSchema) -> Callable[[Any], Call | str]:
    """``prepare(args)``: the positional and keyword arguments, or a tool_error."""
    from .tool_args import Invalid

    params = spec.params
    known = dict.fromkeys(p.name for p in params)  # ordered, for the message
    tool_name = spec.name
    context_param = spec.context_param
    if context_param is not None:
        from .._contract.tool_context import context_for

    def refuse(problem: str) -> str:
        return invalid_arguments(tool_name, problem)

    def prepare(args: Any) -> Call | str:
        if args is None:
            args = {}
        elif not isinstance(args, dict):
            return refuse(f"the arguments must be a JSON object, got {type(args).__name__}")
        unknown = [key for key in args if key not in known]
        if unknown:
            allowed = ", ".join(map(repr, known)) or "none"
            return refuse(
                f"unknown argument(s) {', '.join(map(repr, unknown))}; allowed: {allowed}"
            )
        positional: list[Any] = []
        keywords: dict[str, Any] = {}
        try:
            for param in params:
                if param.name in args:
                    value = param.convert(args[param.name], param.name)
                elif param.required:
                    return refuse(f"argument {param.name!r} is required")
                elif param.fill is not None:
                    value = param.fill()
                else:
                    continue  # the function's own default applies
                if param.positional_only:
                    positional.append(value)
                else:
                    keywords[param.name] = value
        except Invalid as exc:
            return refuse(str(exc))
        if context_param is not None:
            keywords[context_param] = context_for(tool_name)
        return positional, keywords

    return prepare


def _default_toolset(func: Callable[..., Any]) -> str:
    target = func.func if isinstance(func, functools.partial) else func
    module = getattr(target, "__module__", None)
    return module.rpartition(".")[2] if isinstance(module, str) and module else "default"


def _current_registry() -> ToolRegistry:
    # Looked up on every decoration, not bound at import, so a loader that
    # swaps ``toolreg.registry`` (tests, a pack host) gets the tools.
    import toolreg

    return toolreg.registry
