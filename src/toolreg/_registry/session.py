"""ToolSession: one conversation's deferred tools, and the ``tool_search`` that loads them.

A host keeps one per conversation. It offers the always-loaded tools and a
``tool_search`` tool; each search's hits are offered in full from then on.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .._contract.names import DefinitionFormat
from .._contract.results import clip, invalid_arguments, tool_result
from .._definitions.deferred import MAX_LIMIT, MAX_QUERY, TOOL_SEARCH

if TYPE_CHECKING:
    from .._search.hit import SearchHit
    from .registry import ToolRegistry

#: The longest description a ``tool_search`` answer carries per tool.
_DESCRIPTION_CHARS = 300


class ToolSession:
    """The tools offered in one conversation: the always-loaded ones, ``tool_search``,
    and what it has found. Made by :meth:`ToolRegistry.session`; safe to share
    between the threads of one conversation."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        always_loaded: Iterable[str] = (),
        toolsets: Iterable[str] | None = None,
        min_score: float | None = None,
    ) -> None:
        if isinstance(always_loaded, str):
            always_loaded = (always_loaded,)
        if isinstance(toolsets, str):
            toolsets = (toolsets,)
        self._registry = registry
        self._always_loaded = tuple(always_loaded)
        registry._pinned(self._always_loaded)  # a bad item fails here, not on the first turn
        self._toolsets = None if toolsets is None else tuple(toolsets)
        self._min_score = min_score
        # Insertion-ordered, so the definitions keep the order tools were found in.
        self._found: dict[str, None] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<ToolSession always_loaded={len(self._always_loaded)} found={len(self.found)}>"

    @property
    def registry(self) -> ToolRegistry:
        """The registry the session reads and dispatches through (its rules, its tools)."""
        return self._registry

    @property
    def found(self) -> tuple[str, ...]:
        """The tools ``tool_search`` has found that are still registered, in order."""
        live = self._registry.get_entry
        with self._lock:
            # A tool deregistered since is dropped, so the set never outgrows the registry.
            for name in [n for n in self._found if live(n) is None]:
                del self._found[name]
            return tuple(self._found)

    def definitions(
        self,
        format: DefinitionFormat = "openai",
        *,
        native: bool = False,
        strict: bool = False,
        inline_refs: bool = False,
        optional_as_absent: bool = False,
    ) -> list[Any]:
        """The always-loaded and found tools that are available now, in full, and
        ``tool_search``.

        ``native=True`` uses the provider's client-side form where it has one:
        for ``anthropic`` the other tools are listed with ``defer_loading`` (so
        :meth:`search_result`'s ``tool_reference`` blocks load them at once), for
        ``openai-responses`` the search tool is a ``tool_search`` with
        ``execution: "client"``. Elsewhere it changes nothing.
        """
        registry = self._registry
        native = native and format in ("anthropic", "openai-responses")
        return registry._deferred_definitions(
            None,
            registry._pinned(self._always_loaded),
            found=self.found,
            format=format,
            search="client" if native else "function",
            strict=strict,
            inline_refs=inline_refs,
            optional_as_absent=optional_as_absent,
        )

    def dispatch(self, name: str, arguments: Any, **kwargs: Any) -> str | dict[str, Any]:
        """Run a tool call: ``tool_search`` is answered here (JSON naming the tools found,
        which are offered from the next :meth:`definitions` on); any other name goes to
        the registry's ``dispatch``, offered yet or not. Never raises."""
        if name == TOOL_SEARCH:
            return self._answer(self._search(arguments))
        return self._registry.dispatch(name, arguments, **kwargs)

    async def adispatch(self, name: str, arguments: Any, **kwargs: Any) -> str | dict[str, Any]:
        """:meth:`dispatch` for async hosts (the registry's ``adispatch``)."""
        if name == TOOL_SEARCH:
            return self._answer(self._search(arguments))
        return await self._registry.adispatch(name, arguments, **kwargs)

    def search_result(
        self, arguments: Any, format: DefinitionFormat, *, call_id: str
    ) -> dict[str, Any]:
        """A search call's answer in the provider's native form.

        ``anthropic``: a ``tool_result`` block whose content is ``tool_reference``
        blocks (``ToolResultBlockParam``); ``openai-responses``: a
        ``tool_search_output`` item carrying the found tools' definitions
        (``ResponseToolSearchOutputItemParamParam``); any other format: its
        tool-result message of :meth:`dispatch`'s JSON. A bad call gives the
        error as the format's tool result.
        """
        from .._contract.result_messages import tool_result_message

        hits = self._search(arguments)
        if isinstance(hits, str) or format not in ("anthropic", "openai-responses"):
            return dict(
                tool_result_message(self._answer(hits), format, call_id=call_id, name=TOOL_SEARCH)
            )
        names = [hit.name for hit in hits]
        if format == "anthropic":
            content: list[dict[str, Any]] = [
                {"type": "tool_reference", "tool_name": name} for name in names
            ]
            if not content:
                content = [{"type": "text", "text": self._answer(hits)}]
            return {"type": "tool_result", "tool_use_id": call_id, "content": content}
        tools = self._registry.get_definitions(names, format="openai-responses")
        return {
            "type": "tool_search_output",
            "call_id": call_id,
            "execution": "client",
            "status": "completed",
            "tools": tools,
        }

    def _search(self, arguments: Any) -> list[SearchHit] | str:
        """The hits for a ``tool_search`` call, remembered as found; or its tool_error."""
        if isinstance(arguments, (str, bytes)):
            if len(arguments) > 4 * MAX_QUERY + 1000:
                return invalid_arguments(TOOL_SEARCH, "the arguments are too long")
            try:
                arguments = json.loads(arguments or "{}")
            except ValueError:
                return invalid_arguments(TOOL_SEARCH, "the arguments are not valid JSON")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            kind = type(arguments).__name__
            return invalid_arguments(TOOL_SEARCH, f"expected an object, got {kind}")
        unknown = sorted(set(arguments) - {"query", "limit"})
        if unknown:
            return invalid_arguments(TOOL_SEARCH, f"unknown argument {clip(str(unknown[0]), 80)!r}")
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            return invalid_arguments(TOOL_SEARCH, "'query' must be a non-empty string")
        if len(query) > MAX_QUERY:
            return invalid_arguments(
                TOOL_SEARCH, f"'query' is {len(query)} characters; at most {MAX_QUERY}"
            )
        limit = arguments.get("limit", 5)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            return invalid_arguments(
                TOOL_SEARCH, f"'limit' must be a whole number from 1 to {MAX_LIMIT}"
            )
        hits = self._registry.search(
            query, limit=limit, toolsets=self._toolsets, min_score=self._min_score
        )
        with self._lock:
            for hit in hits:
                self._found[hit.name] = None
        return hits

    def _answer(self, hits: list[SearchHit] | str) -> str:
        if isinstance(hits, str):
            return hits  # the tool_error
        tools = []
        for hit in hits:
            entry = self._registry.get_entry(hit.name)
            if entry is None:
                continue
            description = entry.schema.get("description") or entry.description or ""
            tools.append(
                {
                    "name": hit.name,
                    "toolset": hit.toolset,
                    "description": clip(str(description), _DESCRIPTION_CHARS),
                }
            )
        if not tools:
            return tool_result(tools=[], message="No tool fits; try other words.")
        return tool_result(tools=tools, message="These tools are loaded; call them by name.")
