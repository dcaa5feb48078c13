"""The registry's tools as openai-agents ``FunctionTool``s (extra ``openai-agents``).

>>> from agents import Agent
>>> from toolreg.integrations import openai_agents
>>> agent = Agent(name="helper", tools=openai_agents.tools(toolsets=["file"]))

Each tool is strict (the framework's default) with its schema rewritten for
strict mode; a schema that cannot be rewritten is logged at WARNING with the
reason and offered without strict mode. Calls go through
``registry.adispatch``, so validation, hooks and policy apply. Each tool's
``is_enabled`` asks the registry whether it is available now, so a tool whose
check_fn or environment changed comes and goes without rebuilding.

The operator's ``ask`` rules take the SDK's approval: each tool's
``needs_approval`` is true for a call the ``[permissions]`` rules would ask
about, so the run stops with a ``ToolApprovalItem`` (in ``result.interruptions``)
naming the tool and its arguments. A call the host approves
(``state.approve(item)``, then ``Runner.run(agent, state)``) is dispatched with a
per-call approver that allows it; one it rejects never reaches the registry, and
the model reads the SDK's rejection message. A ``deny`` rule is not asked about
and no SDK approval makes it run: dispatch judges every call again.

A ``tool_error`` result takes the SDK's own failure path, as an exception in
a ``@function_tool`` does: the tool's ``failure_error_function`` (by default
:func:`tool_error_message`, the error JSON, which tells the model what to fix)
makes what the model reads, and the tool's span is marked as an error. Pass
``failure_error_function=agents.default_tool_error_function`` to hide the
details from the model, or None to let the run fail (the SDK's ``UserError``,
caused by :class:`ToolCallFailed`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any, Literal, overload

from .._schemas.strict_schema import NotStrict, Restore, strict_schema
from ._registry_tools import (
    ToolCallFailed,
    ToolSpec,
    allow_approved,
    asks,
    available_tools,
    deferred_tools,
    failure,
    missing_framework,
)

try:
    from agents import (
        FunctionTool,
        RunContextWrapper,
        SpanError,
        ToolOutputImage,
        ToolOutputText,
        ToolSearchTool,
        default_tool_error_function,
        get_current_span,
        tool_namespace,
    )
    from agents.tool import (
        ToolErrorFunction,
        maybe_invoke_function_tool_failure_error_function,
        resolve_function_tool_failure_error_function,
        set_function_tool_failure_error_function,
    )
    from agents.tool_context import ToolContext
except ImportError as exc:
    raise missing_framework("openai_agents", "openai-agents", "openai-agents") from exc

from toolreg import ToolRegistry, tool_error, tool_result_message

logger = logging.getLogger("toolreg.integrations")

#: Who answers the operator's asks: the SDK's approval flow, or the registry's approver.
Approval = Literal["framework", "approver"]

__all__ = ["ToolCallFailed", "tool_error_message", "tools"]


def tool_error_message(ctx: RunContextWrapper[Any], error: Exception) -> str:
    """The default ``failure_error_function``: the error JSON dispatch returned."""
    return str(error)


@overload
def tools(
    registry: ToolRegistry | None = None,
    *,
    names: Iterable[str] | None = None,
    toolsets: Iterable[str] | None = None,
    strict: bool = True,
    failure_error_function: ToolErrorFunction | None = tool_error_message,
    defer: Literal[False] = False,
    always_loaded: Iterable[str] = (),
    approval: Approval = "framework",
) -> list[FunctionTool]: ...


@overload
def tools(
    registry: ToolRegistry | None = None,
    *,
    names: Iterable[str] | None = None,
    toolsets: Iterable[str] | None = None,
    strict: bool = True,
    failure_error_function: ToolErrorFunction | None = tool_error_message,
    defer: Literal[True],
    always_loaded: Iterable[str] = (),
    approval: Approval = "framework",
) -> list[FunctionTool | ToolSearchTool]: ...


def tools(
    registry: ToolRegistry | None = None,
    *,
    names: Iterable[str] | None = None,
    toolsets: Iterable[str] | None = None,
    strict: bool = True,
    failure_error_function: ToolErrorFunction | None = tool_error_message,
    defer: bool = False,
    always_loaded: Iterable[str] = (),
    approval: Approval = "framework",
) -> list[FunctionTool] | list[FunctionTool | ToolSearchTool]:
    """``FunctionTool``s for the available tools among ``names`` and ``toolsets``
    (all when both are None) of ``registry`` (default ``toolreg.registry``).

    ``strict=False`` offers every tool with its schema as registered.
    ``failure_error_function`` is the SDK's: what the model reads when a call
    fails (None: the run fails, its ``UserError`` caused by :class:`ToolCallFailed`).

    ``approval="framework"`` (the default) puts a call the operator's rules ask
    about to the SDK's approval (``needs_approval``: the run stops with a
    ``ToolApprovalItem``); ``approval="approver"`` leaves it to the registry's
    approver (``registry.set_approver``), as a call outside any framework.

    ``defer=True`` uses the Responses API's hosted tool search: the
    ``always_loaded`` tools (names, or ``toolset:NAME``) as they are, the others
    with ``defer_loading=True`` in a ``tool_namespace`` per toolset, and one
    ``ToolSearchTool()`` (none when nothing is deferred). The model sees the
    deferred tools only once the search has loaded them; a ``searchable=False``
    tool is offered only when it is always loaded. OpenAI Responses models only:
    the SDK refuses deferred tools on other backends. The SDK also refuses a
    search with nothing to search, so the first deferred tool stays listed when
    it becomes unavailable; a call to it then fails with ``error_type``
    ``unavailable``.
    """
    if approval not in ("framework", "approver"):
        raise ValueError(f'approval must be "framework" or "approver", got {approval!r}')
    sdk = approval == "framework"
    if not defer:
        registry, specs = available_tools(registry, names, toolsets, format="openai-responses")
        return [
            _function_tool(registry, spec, strict, failure_error_function, sdk=sdk)
            for spec in specs
        ]
    registry, split = deferred_tools(
        registry, names, toolsets, always_loaded, format="openai-responses"
    )
    offered: list[FunctionTool | ToolSearchTool] = [
        _function_tool(registry, spec, strict, failure_error_function, sdk=sdk)
        for spec in split.loaded
    ]
    namespaces: dict[str, list[FunctionTool]] = {}
    for index, (namespace, spec) in enumerate(split.deferred):
        # The SDK refuses a ToolSearchTool with nothing to search: the first deferred
        # tool stays enabled when it becomes unavailable, and answers an "unavailable" error.
        tool = _function_tool(
            registry,
            spec,
            strict,
            failure_error_function,
            defer_loading=True,
            anchor=index == 0,
            sdk=sdk,
        )
        if namespace == spec.name:
            # The SDK keeps a namespace named as its tool for deferred top-level tools.
            offered.append(tool)
        else:
            namespaces.setdefault(namespace, []).append(tool)
    for namespace, members in namespaces.items():
        description = f"Tools of the toolset {namespace}."
        offered.extend(tool_namespace(name=namespace, description=description, tools=members))
    if split.deferred:
        offered.append(ToolSearchTool())
    return offered


def _function_tool(
    registry: ToolRegistry,
    spec: ToolSpec,
    strict: bool,
    failure_error_function: ToolErrorFunction | None,
    defer_loading: bool = False,
    anchor: bool = False,
    sdk: bool = True,
) -> FunctionTool:
    schema, restore = spec.parameters, None
    if strict:
        try:
            schema, restore = strict_schema(spec.parameters)
        except NotStrict as exc:
            logger.warning("Tool %s is offered without strict mode: %s", spec.name, exc)
            strict = False

    async def on_invoke_tool(ctx: ToolContext[Any], arguments: str) -> Any:
        if anchor and not registry.is_tool_available(spec.name):
            _, why = registry.availability(spec.name)
            result: str | dict[str, Any] = tool_error(
                f"{spec.name} is not available now: {why or 'its check failed'}",
                error_type="unavailable",
                tool=spec.name,
            )
        else:
            # needs_approval asked and the host approved this call in the SDK's run
            # state: it answers the operator's ask for this call (a deny still denies).
            approved = _approved(ctx)
            result = await registry.adispatch(
                spec.name,
                _arguments(arguments, restore),
                approve=allow_approved(spec.name) if approved else None,
            )
        failed = failure(spec.name, result)
        if failed is None:
            return _output(result)
        return await _failed(tool, ctx, failed)

    async def needs_approval(
        ctx: RunContextWrapper[Any], parameters: dict[str, Any], call_id: str
    ) -> bool:
        # Read on every call: the operator's rules (and an ask_unless_read_only) now.
        if registry.permissions is None:  # no rules: the arguments are not restored for nothing
            return False
        arguments = parameters if restore is None else restore(parameters)
        return asks(registry, spec.name, arguments) is not None

    tool = FunctionTool(
        name=spec.name,
        description=spec.description,
        params_json_schema=schema,
        on_invoke_tool=on_invoke_tool,
        strict_json_schema=strict,
        # Asked by the Runner at every turn: availability changes show up without rebuilding.
        is_enabled=True if anchor else lambda ctx, agent: registry.is_tool_available(spec.name),
        defer_loading=defer_loading,
        needs_approval=needs_approval if sdk else False,
    )
    return set_function_tool_failure_error_function(tool, failure_error_function)


async def _failed(tool: FunctionTool, ctx: ToolContext[Any], failed: ToolCallFailed) -> Any:
    """The SDK's handling of a failed call, as ``@function_tool`` gets it: the tool's
    failure function makes the model's text, and the tool's span gets the error."""
    message = await maybe_invoke_function_tool_failure_error_function(
        function_tool=tool, context=ctx, error=failed
    )
    if message is None:  # failure_error_function=None: the run fails
        raise failed
    span = get_current_span()
    if span is not None:
        # As the SDK does: the error's text only when the run lets traces hold
        # sensitive data and the model was told more than the SDK's fixed text.
        sensitive = (ctx.run_config is None or ctx.run_config.trace_include_sensitive_data) and (
            resolve_function_tool_failure_error_function(tool, ctx)
            is not default_tool_error_function
        )
        span.set_error(
            SpanError(
                message="Error running tool (non-fatal)",
                data={
                    "tool_name": tool.name,
                    "error": failed.result if sensitive else "Error details are redacted.",
                    "error_type": failed.error_type,
                },
            )
        )
    return message


def _arguments(arguments: str, restore: Restore | None) -> Any:
    if restore is None:
        return arguments  # dispatch parses the JSON and names what is wrong with it
    try:
        parsed = json.loads(arguments) if arguments else {}
    except ValueError:
        return arguments
    return restore(parsed)


def _output(result: str | dict[str, Any]) -> Any:
    if isinstance(result, str):
        return result
    # The Responses API's own parts: images as data URLs, the rest as text.
    output = tool_result_message(result, "openai-responses", call_id="-")["output"]
    return [
        ToolOutputImage(image_url=part["image_url"])
        if part["type"] == "input_image"
        else ToolOutputText(text=part["text"])
        for part in output
    ]


def _approved(ctx: ToolContext[Any]) -> bool:
    """Whether the host approved this call in the SDK's run state (``RunState.approve``);
    a tool in a namespace is approved under its qualified name (``text.greet``)."""
    return ctx.is_tool_approved(ctx.qualified_tool_name, ctx.tool_call_id) is True
