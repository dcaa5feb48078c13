"""The typed API: the format names as a Literal, definitions as the SDKs' TypedDicts, Mapping args.

``make typecheck`` (part of ``make test``) runs ``mypy --strict`` on docs/examples and
the integrations, which pass these definitions straight to the SDKs; these tests
catch what mypy cannot see: the names drifting from the formats, and an SDK adding
a key (a TypedDict matches another only when it has every one of its keys).
"""

from __future__ import annotations

import asyncio
import typing
from types import MappingProxyType
from typing import Any

import pytest
from anthropic.types import ToolParam, ToolResultBlockParam
from google.genai.types import FunctionDeclarationDict, PartDict
from openai.types.chat import ChatCompletionToolMessageParam, ChatCompletionToolParam
from openai.types.responses import FunctionToolParam
from openai.types.responses.response_input_param import FunctionCallOutput
from openai.types.shared_params import FunctionDefinition

import toolreg
from toolreg import ToolRegistry
from toolreg._schemas.formats import FORMATS


def test_definition_format_names_every_format() -> None:
    assert set(typing.get_args(toolreg.DefinitionFormat)) == set(FORMATS)


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (toolreg.OpenAIToolDefinition, ChatCompletionToolParam),
        (toolreg.OpenAIFunction, FunctionDefinition),
        (toolreg.OpenAIResponsesToolDefinition, FunctionToolParam),
        (toolreg.AnthropicToolDefinition, ToolParam),
        (toolreg.GeminiFunctionDeclaration, FunctionDeclarationDict),
        (toolreg.OpenAIToolMessage, ChatCompletionToolMessageParam),
        (toolreg.OpenAIFunctionCallOutput, FunctionCallOutput),
        (toolreg.AnthropicToolResult, ToolResultBlockParam),
        (toolreg.GeminiFunctionResponsePart, PartDict),
    ],
)
def test_each_definition_type_has_every_key_of_the_sdks_type(ours: Any, theirs: Any) -> None:
    assert set(theirs.__annotations__) <= set(typing.get_type_hints(ours)), theirs.__name__
    assert set(ours.__annotations__) <= set(theirs.__annotations__) | {"async"}


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (toolreg.OpenAIToolMessage, ChatCompletionToolMessageParam),
        (toolreg.OpenAIFunctionCallOutput, FunctionCallOutput),
        (toolreg.AnthropicToolResult, ToolResultBlockParam),
    ],
)
def test_each_result_type_requires_what_the_sdks_type_requires(ours: Any, theirs: Any) -> None:
    # The SDKs write Required[...] as text: read it from there (mypy reads it the same).
    required = {
        key
        for key, hint in theirs.__annotations__.items()
        if str(getattr(hint, "__forward_arg__", hint)).startswith("Required[")
    }
    assert required, theirs.__name__
    assert ours.__required_keys__ == required


def test_tool_result_message_takes_the_definition_formats() -> None:
    hints = typing.get_type_hints(toolreg.tool_result_message)
    assert hints["format"] == toolreg.DefinitionFormat


def echo(args: dict[str, Any]) -> str:
    assert type(args) is dict  # handlers always get a dict
    return str(sorted(args.items()))


@pytest.mark.parametrize("validate", [True, False])
def test_dispatch_takes_any_mapping_and_validates_it(validate: bool) -> None:
    reg = ToolRegistry()
    schema = {"parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}
    reg.register("echo", "t", schema, echo)
    reg.set_validation(validate)
    assert reg.dispatch("echo", MappingProxyType({"n": 1})) == "[('n', 1)]"
    assert asyncio.run(reg.adispatch("echo", MappingProxyType({"n": 2}))) == "[('n', 2)]"
    if validate:
        assert toolreg.is_tool_error(reg.dispatch("echo", MappingProxyType({"n": "x"})))
