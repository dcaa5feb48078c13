"""``@tool``: a typed Python function becomes a registered tool.

Its schema comes from the signature and the docstring (``signature_schema``),
its arguments are converted back to the declared types (``tool_args``), and
the function itself is given back unchanged. docs/writing-tools.md is the
reference: types to JSON Schema, calls, results, ownership.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from .._contract.results import invalid_arguments

if TYPE_CHECKING:
    from typing_extensions import TypedDict, Unpack

    from .._contract.entry import CheckFn, SchemaOverrides
    from .._registry.registry import ToolRegistry
    from .signature_schema import FunctionSchema

#: The decorated function's own type: ``@tool`` gives the function back unchanged, so a
#: type checker keeps its parameters, return type and overloads.
F = TypeVar("F", bound=Callable[..., Any])

if TYPE_CHECKING:

    class ToolOptions(TypedDict, total=False):
        """``@tool(...)``'s options, as type checkers read them (``@registry.tool`` too)."""

        name: str | None
        toolset: str | None
        description: str | None
        check_fn: CheckFn | None
        requires_env: Sequence[str] | None
        emoji: str
        max_result_size_chars: int | None
        override: bool
        timeout: float | None
        validate: bool
        searchable: bool
        dynamic_schema_overrides: SchemaOverrides | None
        annotations: Mapping[str, Any] | None
        output_schema: dict[str, Any] | Literal[False] | None


@overload
def tool(func: F, /) -> F: ...


@overload
def tool(
    func: None = None, *, registry: ToolRegistry | None = None, **options: Unpack[ToolOptions]
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
    searchable: bool = True,
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
            searchable=searchable,
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
