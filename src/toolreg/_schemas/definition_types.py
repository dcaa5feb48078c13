"""Static types of the definition formats: one TypedDict per provider SDK's parameter type.

Each matches its SDK's type by structure, so a type checker accepts it where the SDK
asks (which type each matches: docs/formats.md, "Types"). The SDKs are never imported.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict


# Schema-valued fields are ``Any``: the SDKs type them differently (``Dict[str, object]``,
# unions of their own TypedDicts), and ``Any`` is the one type that matches each of them.
class _OpenAIFunctionRequired(TypedDict):
    name: str


class OpenAIFunction(_OpenAIFunctionRequired, total=False):
    """The ``function`` of an ``openai`` definition (openai's ``FunctionDefinition``)."""

    description: str
    parameters: Any
    strict: bool | None


class OpenAIToolDefinition(TypedDict):
    """An ``openai`` definition (Chat Completions ``tools[]``)."""

    type: Literal["function"]
    function: OpenAIFunction


# "async" is a keyword: only the functional syntax can declare it.
_OpenAIResponsesReserved = TypedDict("_OpenAIResponsesReserved", {"async": Any}, total=False)


class _OpenAIResponsesRequired(_OpenAIResponsesReserved):
    type: Literal["function"]
    name: str
    parameters: Any
    strict: bool | None


class OpenAIResponsesToolDefinition(_OpenAIResponsesRequired, total=False):
    """An ``openai-responses`` definition (Responses API ``tools[]``).

    The keys toolreg never sets are declared too: a TypedDict matches another
    only when it has all of the other's keys.
    """

    description: str | None
    allowed_callers: Any
    defer_loading: bool
    output_schema: Any


class _AnthropicRequired(TypedDict):
    name: str
    input_schema: Any


class AnthropicToolDefinition(_AnthropicRequired, total=False):
    """An ``anthropic`` definition (Messages API ``tools[]``)."""

    description: str
    allowed_callers: Any
    cache_control: Any
    defer_loading: bool
    eager_input_streaming: bool | None
    input_examples: Any
    strict: bool
    type: Literal["custom"] | None


class GeminiFunctionDeclaration(TypedDict, total=False):
    """A ``gemini`` or ``gemini-json-schema`` definition (``function_declarations[]``).

    ``parameters`` (``gemini``) or ``parameters_json_schema`` (``gemini-json-schema``)
    is left out for a tool without parameters.
    """

    name: str | None
    description: str | None
    parameters: Any
    parameters_json_schema: Any
    behavior: Any
    response: Any
    response_json_schema: Any


class McpToolDefinition(TypedDict):
    """An ``mcp`` definition (a ``tools/list`` entry)."""

    name: str
    description: str
    inputSchema: Any
