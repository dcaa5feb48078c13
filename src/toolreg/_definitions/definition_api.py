"""The typed signatures of ``get_definition``, ``get_definitions`` (one overload per
format) and ``get_definitions_json``.

Type checkers read these; at run time the registry's three attributes are its
``Definitions`` part's own bound methods (``_definitions/definitions.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, Protocol, overload

from .._contract.names import DefinitionFormat
from .._schemas.definition_types import (
    AnthropicToolDefinition,
    GeminiFunctionDeclaration,
    McpToolDefinition,
    OpenAIResponsesToolDefinition,
    OpenAIToolDefinition,
)

_Gemini = Literal["gemini", "gemini-json-schema"]


class GetDefinition(Protocol):
    """``get_definition(name, *, format="openai", **options)``: a tool's definition or None.

    The options (``strict``, ``inline_refs``, ``optional_as_absent``) are
    ``get_definitions``'.
    """

    @overload
    def __call__(
        self,
        name: str,
        *,
        format: Literal["openai"] = ...,
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
    ) -> OpenAIToolDefinition | None: ...

    @overload
    def __call__(
        self,
        name: str,
        *,
        format: Literal["openai-responses"],
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
    ) -> OpenAIResponsesToolDefinition | None: ...

    @overload
    def __call__(
        self,
        name: str,
        *,
        format: Literal["anthropic"],
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
    ) -> AnthropicToolDefinition | None: ...

    @overload
    def __call__(
        self,
        name: str,
        *,
        format: _Gemini,
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
    ) -> GeminiFunctionDeclaration | None: ...

    @overload
    def __call__(
        self,
        name: str,
        *,
        format: Literal["mcp"],
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
    ) -> McpToolDefinition | None: ...

    @overload
    def __call__(
        self,
        name: str,
        *,
        format: DefinitionFormat,
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
    ) -> Any | None: ...


class GetDefinitions(Protocol):
    """``get_definitions(tool_names=None, *, format="openai", **options)``: the list.

    ``strict``: OpenAI's strict mode; ``inline_refs``: every local ``$ref``
    inlined; ``optional_as_absent``: an optional nullable property written as a
    non-null one. A tool an option cannot hold is left out, with a warning.
    """

    @overload
    def __call__(
        self,
        tool_names: Iterable[str] | None = ...,
        *,
        format: Literal["openai"] = ...,
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
    ) -> list[OpenAIToolDefinition]: ...

    @overload
    def __call__(
        self,
        tool_names: Iterable[str] | None = ...,
        *,
        format: Literal["openai-responses"],
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
    ) -> list[OpenAIResponsesToolDefinition]: ...

    @overload
    def __call__(
        self,
        tool_names: Iterable[str] | None = ...,
        *,
        format: Literal["anthropic"],
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
    ) -> list[AnthropicToolDefinition]: ...

    @overload
    def __call__(
        self,
        tool_names: Iterable[str] | None = ...,
        *,
        format: _Gemini,
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
    ) -> list[GeminiFunctionDeclaration]: ...

    @overload
    def __call__(
        self,
        tool_names: Iterable[str] | None = ...,
        *,
        format: Literal["mcp"],
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
    ) -> list[McpToolDefinition]: ...

    @overload
    def __call__(
        self,
        tool_names: Iterable[str] | None = ...,
        *,
        format: DefinitionFormat,
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
    ) -> list[Any]: ...


class GetDefinitionsJson(Protocol):
    """``get_definitions_json(tool_names=None, *, format="openai", **options)``: the list as JSON.

    Memoised whole when no tool is dynamic.
    """

    def __call__(
        self,
        tool_names: Iterable[str] | None = ...,
        *,
        format: DefinitionFormat = ...,
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
    ) -> str: ...
