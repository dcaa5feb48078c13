"""Dispatch: run a tool call and hold the result to the contract.

``dispatch`` never raises. Unknown tools, handler exceptions and results of the
wrong type all come back as ``tool_error`` JSON, so one bad tool cannot take
down the agent loop. The fast path (a sync handler returning a short str) is a
dict read, a call and a length check.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from typing import Any, Protocol

from ._async_bridge import run_coroutine
from ._entry import ToolEntry
from ._results import describe_exception, failure_message, is_multimodal, tool_error, truncate

logger = logging.getLogger("toolreg.dispatch")


def _failed(name: str, exc: BaseException) -> str:
    logger.error(
        "Tool %s failed: %s",
        name,
        describe_exception(exc),
        exc_info=logger.isEnabledFor(logging.DEBUG),
    )
    return failure_message(exc)


def _off_contract(entry: ToolEntry, result: Any) -> str | dict[str, Any]:
    """Results other than a plain str: str subclasses, multimodal, or a contract error."""
    if inspect.iscoroutine(result):
        # An ``async def`` handler registered without is_async=True: run it
        # rather than hand the model a coroutine repr.
        try:
            result = run_coroutine(result)
        except (Exception, SystemExit) as exc:
            return _failed(entry.name, exc)
    if isinstance(result, str):
        return _cap(entry, str(result))
    if is_multimodal(result):
        return result
    result_type = type(result).__name__
    logger.error("Tool %s returned unsupported result type %s", entry.name, result_type)
    return tool_error(
        f"Tool {entry.name} returned {result_type}; a tool must return a str "
        'or a multimodal dict {"_multimodal": true, "content": [...]}',
        error_type="tool_result_contract",
        tool=entry.name,
        result_type=result_type,
    )


def _cap(entry: ToolEntry, result: str) -> str:
    limit = entry.max_result_size_chars
    if limit is None or len(result) <= limit:
        return result
    return truncate(result, limit)


class DispatchHooks(Protocol):
    """What the plugin layer plugs into dispatch (see ``toolreg.hookspecs``)."""

    def before(self, name: str, args: dict[str, Any]) -> str | None:
        """A block message, or None to let the call through."""

    def after(self, name: str, args: dict[str, Any], result: Any) -> str | dict[str, Any]:
        """The result to return, after observers and transforms have run."""


class DispatchMixin:
    """``dispatch`` and ``adispatch`` over a table's published ``_tools`` dict."""

    _tools: dict[str, ToolEntry]

    def _init_dispatch(self) -> None:
        self._dispatch_hooks: DispatchHooks | None = None
        self._hooked = False

    def set_dispatch_hooks(self, hooks: DispatchHooks | None) -> None:
        """Install (or with None, remove) the hooks around every dispatch.

        Without hooks, ``dispatch`` is the plain method: no hook layer costs
        anything until some pack implements a dispatch hook. (Touching
        ``__dict__`` directly would de-optimise every attribute read of the
        instance, so only plain attribute assignment and ``del`` are used.)
        """
        self._dispatch_hooks = hooks
        if hooks is None and self._hooked:
            del self.dispatch
            del self.adispatch
            self._hooked = False
        elif hooks is not None and not self._hooked:
            self.dispatch = self._hooked_dispatch  # type: ignore[method-assign]
            self.adispatch = self._hooked_adispatch  # type: ignore[method-assign]
            self._hooked = True

    def _hooked_dispatch(
        self, name: str, args: dict[str, Any], **kwargs: Any
    ) -> str | dict[str, Any]:
        hooks = self._dispatch_hooks
        if hooks is None:
            return DispatchMixin.dispatch(self, name, args, **kwargs)
        blocked = hooks.before(name, args)
        if blocked is not None:
            return tool_error(blocked, error_type="blocked", tool=name)
        result = DispatchMixin.dispatch(self, name, args, **kwargs)
        return hooks.after(name, args, result)

    async def _hooked_adispatch(
        self, name: str, args: dict[str, Any], **kwargs: Any
    ) -> str | dict[str, Any]:
        hooks = self._dispatch_hooks
        if hooks is None:
            return await DispatchMixin.adispatch(self, name, args, **kwargs)
        # Hooks are synchronous and may block: keep them off the event loop.
        blocked = await asyncio.to_thread(hooks.before, name, args)
        if blocked is not None:
            return tool_error(blocked, error_type="blocked", tool=name)
        result = await DispatchMixin.adispatch(self, name, args, **kwargs)
        return await asyncio.to_thread(hooks.after, name, args, result)

    def dispatch(self, name: str, args: dict[str, Any], **kwargs: Any) -> str | dict[str, Any]:
        """Run tool ``name`` with ``args``; always returns a str or multimodal dict."""
        entry = self._tools.get(name)
        if entry is None:
            return tool_error(f"Unknown tool: {name}")
        try:
            result = entry.handler(args, **kwargs) if kwargs else entry.handler(args)
            if entry.is_async:
                result = run_coroutine(result)
        except (Exception, SystemExit) as exc:
            return _failed(name, exc)
        if result.__class__ is str:
            limit = entry.max_result_size_chars
            if limit is None or len(result) <= limit:
                return result
            return truncate(result, limit)
        return _off_contract(entry, result)

    async def adispatch(
        self, name: str, args: dict[str, Any], **kwargs: Any
    ) -> str | dict[str, Any]:
        """The async twin of ``dispatch``: sync handlers run in a worker thread."""
        entry = self._tools.get(name)
        if entry is None:
            return tool_error(f"Unknown tool: {name}")
        try:
            if entry.is_async:
                result = await entry.handler(args, **kwargs)
            else:
                result = await asyncio.to_thread(entry.handler, args, **kwargs)
                if inspect.iscoroutine(result):
                    result = await result
        except (Exception, SystemExit) as exc:
            return _failed(name, exc)
        if result.__class__ is str:
            return _cap(entry, result)
        return _off_contract(entry, result)
