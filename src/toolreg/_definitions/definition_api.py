"""The typed signatures of ``get_definition`` and ``get_definitions``: one overload per format.

Type checkers read these; at run time the registry's two attributes are its
``Definitions`` part's own bound methods (``_definitions/definitions.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, Protocol, overload

from .._schemas.definition_types import (
    AnthropicToolDefinition,
    DefinitionFormat,
    GeminiFunctionDeclaration,
    McpToolDefinition,
    OpenAIResponsesToolDefinition,
    OpenAIToolDefinition,
)

_Gemini = Literal["gemini", "gemini-json-schema"]


class GetDefinition(Protocol):
    """``get_definition(name, *, format="openai", strict=False)``: a tool's definition or None."""

    @overload
    def __call__(
        self, name: str, *, format: Literal["openai"] = ..., strict: bool = ...
    ) -> OpenAIToolDefinition | None: ...

    @overload
    def __call__(
        self, name: str, *, format: Literal["openai-responses"], strict: bool = ...
    ) -> OpenAIResponsesToolDefinition | None: ...

    @overload
    def __call__(
        self, name: str, *, format: Literal["anthropic"], strict: bool = ...
    ) -> AnthropicToolDefinition | None: ...

    @overload
    def __call__(
        self, name: str, *, format: _Gemini, strict: bool = ...
    ) -> GeminiFunctionDeclaration | None: ...

    @overload
    def __call__(
        self, name: str, *, format: Literal["mcp"], strict: bool = ...
    ) -> McpToolDefinition | None: ...

    @overload
    def __call__(
        self, name: str, *, format: DefinitionFormat, strict: bool = ...
    ) -> Any | None: ...


class GetDefinitions(Protocol):
    """``get_definitions(tool_names=None, *, format="openai", strict=False)``: the list."""

    @overload
    def __call__(
        self,
        tool_names: Iterable[str] | None = ...,
        *,
        format: Literal["openai"] = ...,
        strict: bool = ...,
    ) -> list[OpenAIToolDefinition]: ...

    @overload
    def __call__(
        self,
        tool_names: Iterable[str] | None = ...,
        *,
        format: Literal["openai-responses"],
        strict: bool = ...,
    ) -> list[OpenAIResponsesToolDefinition]: ...

    @overload
    def __call__(
        self,
        tool_names: Iterable[str] | None = ...,
        *,
        format: Literal["anthropic"],
        strict: bool = ...,
    ) -> list[AnthropicToolDefinition]: ...

    @overload
    def __call__(
        self,
        tool_names: Iterable[str] | None = ...,
        *,
        format: _Gemini,
        strict: bool = ...,
    ) -> list[GeminiFunctionDeclaration]: ...

    @overload
    def __call__(
        self,
        tool_names: Iterable[str] | None = ...,
        *,
        format: Literal["mcp"],
        strict: bool = ...,
    ) -> list[McpToolDefinition]: ...

    @overload
    def __call__(
        self,
        tool_names: Iterable[str] | None = ...,
        *,
        format: DefinitionFormat,
        strict: bool = ...,
    ) -> list[Any]: ...
