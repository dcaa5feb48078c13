"""The MCP server inside an isolated pack's process: the pack's tools and hooks, for its parent.

``toolreg serve``'s :class:`ToolServer` over a one-pack registry, offering only
that pack's tools, with the ``_meta`` and reserved entries of
:mod:`~toolreg._loaders.isolated_wire`.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

from .._contract.results import describe_exception, tool_error
from .._mcp_serve.server import ToolServer
from .._registry.registry import ToolRegistry
from .hook_runner import HookRunner, _block_message
from .isolated_wire import HOOK_PREFIX, hook_entry, pack_entry, tool_meta
from .report import PluginOutcome

_REGISTER = inspect.signature(ToolRegistry.register)


class StagingRegistry(ToolRegistry):
    """The child's registry; it also remembers which tools asked to override.

    The table keeps no such flag, and the parent's gate needs it: a pack's
    ``override=True`` is a request the parent's operator has to grant.
    """

    def __init__(self) -> None:
        super().__init__()
        self.asked_override: dict[str, bool] = {}

    def register(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        asked = _REGISTER.bind(self, *args, **kwargs).arguments.get("override", False)
        entry = super().register(*args, **kwargs)
        if entry is not None:
            self.asked_override[entry.name] = bool(asked)
        return entry


class PackServer(ToolServer):
    """One loaded pack's tools, with ``_meta``, and its load outcome and hooks."""

    registry: StagingRegistry

    def __init__(
        self, registry: StagingRegistry, outcome: PluginOutcome, hooks: HookRunner | None
    ) -> None:
        super().__init__(registry)
        self.outcome = outcome
        self.hooks = hooks
        self._owned: tuple[int, frozenset[str]] = (-1, frozenset())

    def offered_names(self) -> frozenset[str]:
        """The pack's own tools, recomputed per generation."""
        generation, names = self._owned
        if generation != self.registry.generation:
            registry = self.registry
            names = frozenset(
                name
                for name in registry.get_all_tool_names()
                if registry.get_owner(name) == self.outcome.id
            )
            self._owned = (registry.generation, names)
        return names

    def definitions_json(self) -> str:
        tools = json.loads(super().definitions_json())
        for tool in tools:
            name = tool["name"]
            toolset = self.registry.get_toolset_for_tool(name) or ""
            tool["_meta"] = tool_meta(toolset, self.registry.asked_override.get(name, False))
        tools.append(pack_entry(self.outcome))
        # Listed so that calling them is a known tool to the client (no re-list per call).
        runner = self.hooks
        if runner is not None:
            implemented = {
                "toolreg_pre_tool_call": runner.pre,
                "toolreg_post_tool_call": runner.post,
                "toolreg_transform_tool_result": runner.transform,
            }
            tools += [hook_entry(hook) for hook, impls in implemented.items() if impls]
        return json.dumps(tools, ensure_ascii=False)

    def dispatch(self, name: str, arguments: dict[str, Any], *rest: Any) -> str | dict[str, Any]:
        # ``rest`` passes on whatever else serve's dispatch takes: an override that
        # listed them lagged behind once, and every isolated call failed.
        if name.startswith(HOOK_PREFIX):
            return self.run_hook(name.removeprefix(HOOK_PREFIX), arguments)
        return super().dispatch(name, arguments, *rest)

    def run_hook(self, hook: str, arguments: dict[str, Any]) -> str:
        """Run the pack's implementations of one dispatch hook: ``{"value": ...}`` as JSON.

        A hook that raises comes back as a tool_error, which the parent counts
        as that hook failing (the call is blocked).
        """
        try:
            value = _run(self.hooks, hook, arguments)
            return json.dumps({"value": value}, ensure_ascii=False)
        except Exception as exc:
            return tool_error(describe_exception(exc))


def _run(runner: HookRunner | None, hook: str, arguments: dict[str, Any]) -> Any:
    """The pack's answer for one hook, combined as the parent's hook runner would."""
    kwargs = {"name": arguments["name"], "args": arguments["args"]}
    if runner is None:
        raise LookupError(f"the pack implements no {hook}")
    if hook == "toolreg_pre_tool_call":
        for impl in runner.pre:
            verdict = impl.call(kwargs)
            message = None if verdict is None else _block_message(verdict)
            if message is not None:
                return message
        return None
    kwargs["result"] = arguments["result"]
    if hook == "toolreg_post_tool_call":
        for impl in runner.post:
            impl.call(kwargs)
        return None
    if hook == "toolreg_transform_tool_result":
        for impl in runner.transform:
            replacement = impl.call(kwargs)
            if replacement is not None:
                return replacement
        return None
    raise LookupError(f"no dispatch hook {hook!r}")
