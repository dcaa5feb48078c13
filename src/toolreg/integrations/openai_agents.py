"""The registry's tools as openai-agents ``FunctionTool``s (extra ``openai-agents``).

>>> from agents import Agent
>>> from toolreg.integrations import openai_agents
>>> agent = Agent(name="helper", tools=openai_agents.tools(toolsets=["file"]))

Each tool is strict (the framework's default) with its schema rewritten for
strict mode; a schema that cannot be rewritten is logged at WARNING with the
reason and offered without strict mode. Calls go through
``registry.adispatch``, so validation, hooks and policy apply.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

from .._schemas.strict_schema import NotStrict, Restore, strict_schema
from ._registry_tools import ToolSpec, available_tools, missing_framework

try:
    from agents import FunctionTool, ToolOutputImage, ToolOutputText
except ImportError as exc:
    raise missing_framework("openai_agents", "openai-agents", "openai-agents") from exc

from toolreg import ToolRegistry, tool_result_message

logger = logging.getLogger("toolreg.integrations")

__all__ = ["tools"]


def tools(
    registry: ToolRegistry | None = None,
    *,
    names: Iterable[str] | None = None,
    toolsets: Iterable[str] | None = None,
    strict: bool = True,
) -> list[FunctionTool]:
    """``FunctionTool``s for the available tools among ``names`` and ``toolsets``
    (all when both are None) of ``registry`` (default ``toolreg.registry``).

    ``strict=False`` offers every tool with its schema as registered.
    """
    registry, specs = available_tools(registry, names, toolsets, format="openai-responses")
    return [_function_tool(registry, spec, strict) for spec in specs]


def _function_tool(registry: ToolRegistry, spec: ToolSpec, strict: bool) -> FunctionTool:
    schema, restore = spec.parameters, None
    if strict:
        try:
            schema, restore = strict_schema(spec.parameters)
        except NotStrict as exc:
            logger.warning("Tool %s is offered without strict mode: %s", spec.name, exc)
            strict = False

    async def on_invoke_tool(ctx: Any, arguments: str) -> Any:
        return _output(await registry.adispatch(spec.name, _arguments(arguments, restore)))

    return FunctionTool(
        name=spec.name,
        description=spec.description,
        params_json_schema=schema,
        on_invoke_tool=on_invoke_tool,
        strict_json_schema=strict,
    )


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
