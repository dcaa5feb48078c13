"""The parent's end of one isolated pack: its tools and hooks, reached over MCP.

:class:`IsolatedLink` is a :class:`~toolreg._mcp.link.ServerLink` that registers
each listed tool as the pack's, through the same gate as an in-process pack,
and turns its hooks into a pluggy plugin that calls the child.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from .._contract.entry import ToolEntry
from .._contract.results import is_tool_error
from .._core.plugin_policy import PluginPolicy
from .._mcp.calls import call_sync
from .._mcp.link import ServerLink, Verdict
from .._policy.config import ToolsetsConfig
from ..hookspecs import hookimpl
from .isolated_wire import ListedTool, Manifest, hook_tool, read_listing

logger = logging.getLogger("toolreg.plugins")


def unwrap(result: str | dict[str, Any]) -> str | dict[str, Any]:
    """A child's tool_error as the child wrote it, not wrapped in a second one.

    The MCP client reads an ``isError`` result as the text of an error and
    wraps it; the child's text already is a tool_error.
    """
    if isinstance(result, str) and is_tool_error(result):
        inner = json.loads(result)["error"]
        if isinstance(inner, str) and is_tool_error(inner):
            return inner
    return result


class IsolatedToolHandler:
    """The registry's handler for one isolated pack's tool: a call into its process."""

    __slots__ = ("link", "name")

    def __init__(self, link: IsolatedLink, name: str) -> None:
        self.link = link
        self.name = name

    def __call__(self, args: dict[str, Any], **_context: Any) -> str | dict[str, Any]:
        return unwrap(call_sync(self.link, self.name, self.name, args))

    def __repr__(self) -> str:
        return f"<tool {self.name!r} of isolated pack {self.link.name!r}>"


class HookForwardingError(RuntimeError):
    """A forwarded hook failed in the pack's process, or could not reach it."""


class IsolatedLink(ServerLink):
    """One isolated pack's process, its tools published through the parent's gate."""

    def __init__(
        self, *args: Any, gate: PluginPolicy, toolsets: ToolsetsConfig, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.gate = gate
        self.toolsets = toolsets
        #: The child's last listing, read; None until it first answers.
        self.manifest: Manifest | None = None
        # Names the gate turned down: not asked again on every reregister.
        self._turned_down: set[str] = set()

    @property
    def label(self) -> str:
        return f"isolated pack {self.name}"

    def verdict(self) -> Verdict:
        if self.state == "connected":
            return True, ""
        why = self.down_detail() or self.state
        return False, f"isolated pack {self.name}: its process is not running ({why})"

    # -- publishing ------------------------------------------------------------

    def _swap(self, listing: list[dict[str, Any]], *_mcp_names: Any) -> None:
        # The MCP names and their contest are for mcp-* toolsets; a pack's tools
        # keep their own names, so only the listing matters here.
        self.manifest = manifest = read_listing(self.name, listing)
        for reason in manifest.skipped:
            logger.warning("%s", reason)
        if manifest.status == "loaded":
            self.tool_names = self._register(manifest.tools)

    def _register(self, tools: tuple[ListedTool, ...]) -> list[str]:
        """Register the listed tools as the pack; drop what it no longer lists."""
        registry = self.registry
        published: list[str] = []
        with registry.acting_for(self.gate):
            for tool in tools:
                if tool.name in self._turned_down:
                    continue
                if not self.toolsets.allows(tool.toolset, self._resolver(tool.toolset)):
                    continue  # the operator turned its toolset off
                if self._register_one(tool):
                    published.append(tool.name)
                else:
                    self._turned_down.add(tool.name)
            for name in set(self.tool_names) - set(published):
                if registry.get_owner(name) == self.gate.plugin_id:
                    registry.deregister(name)
        return sorted(published)

    def _resolver(self, toolset: str) -> Callable[[str], str]:
        """What a name in ``[toolsets]`` means, judging ``toolset``: the config's aliases first.

        The registry has the config's aliases only once the config is applied,
        after loading, and loses one when its toolset empties (turned off, or
        this process restarting); the config has them all along. A name that is
        ``toolset`` itself, or a live toolset, means that toolset, as the
        registry would refuse an alias hiding it.
        """
        registry = self.registry
        aliases = self.toolsets.aliases

        def resolve(name: str) -> str:
            if name == toolset or name not in aliases or name in registry.get_toolsets():
                return registry.resolve_toolset(name)
            return registry.resolve_toolset(aliases[name])

        return resolve

    def _register_one(self, tool: ListedTool) -> bool:
        """Whether the gate let ``tool`` in; a refusal is logged and in the decision log."""
        handler = IsolatedToolHandler(self, tool.name)
        try:
            entry = self.registry.register(
                tool.name,
                tool.toolset,
                tool.schema,
                handler,
                check_fn=self._check,
                description=tool.description,
                # Cut like an MCP server's results: the pack's own limit, if
                # any, applies in its process; this one bounds what the host takes.
                max_result_size_chars=self.config.max_result_size_chars,
                override=tool.override,
                validate=False,  # the pack's process validates, with the pack's own options
                annotations=tool.annotations or None,
                output_schema=tool.output_schema,
            )
        except PermissionError:
            return False  # logged and recorded by the table
        except ValueError as exc:
            rejected = ToolEntry(name=tool.name, toolset=tool.toolset, schema={}, handler=handler)
            reason = f"tool {tool.name!r} of isolated pack {self.name!r}: {exc}"
            logger.error("Tool registration REJECTED: %s", reason)
            self.registry.record_rejection(rejected, reason)
            return False
        return entry is not None

    def remove_tools(self) -> None:
        # The plugin host removes the pack's tools (remove_owner), which also
        # puts back what they overrode; here, only stop publishing.
        self._stopping = True
        self.tool_names = []

    # -- hooks --------------------------------------------------------------------

    def forward(self, hook: str, payload: dict[str, Any]) -> Any:
        """Run the pack's ``hook`` in its process; raises if it failed or cannot run."""
        result = call_sync(self, hook_tool(hook), f"hook {hook}", payload, listen=False)
        if not isinstance(result, str):
            raise HookForwardingError(f"{hook} answered with {type(result).__name__}")
        if is_tool_error(result):
            raise HookForwardingError(json.loads(unwrap(result))["error"])
        return json.loads(result)["value"]

    def hook_plugin(self, hooks: tuple[str, ...]) -> ForwardedHooks:
        """A pluggy plugin implementing ``hooks`` by forwarding each call to the child."""

        def toolreg_pre_tool_call(name: str, args: dict[str, Any]) -> Any:
            return self.forward("toolreg_pre_tool_call", {"name": name, "args": args})

        def toolreg_post_tool_call(name: str, args: dict[str, Any], result: Any) -> None:
            self.forward("toolreg_post_tool_call", {"name": name, "args": args, "result": result})

        def toolreg_transform_tool_result(name: str, args: dict[str, Any], result: Any) -> Any:
            payload = {"name": name, "args": args, "result": result}
            return self.forward("toolreg_transform_tool_result", payload)

        forwarders: dict[str, Callable[..., Any]] = {
            f.__name__: f
            for f in (toolreg_pre_tool_call, toolreg_post_tool_call, toolreg_transform_tool_result)
        }
        plugin = ForwardedHooks(self.name)
        for hook in hooks:
            if hook in forwarders:
                setattr(plugin, hook, hookimpl(forwarders[hook]))
        return plugin


class ForwardedHooks:
    """The pluggy plugin standing for an isolated pack: its hooks run in the pack's process."""

    def __init__(self, plugin_id: str) -> None:
        self.plugin_id = plugin_id

    def __repr__(self) -> str:
        return f"<hooks of isolated pack {self.plugin_id!r}>"
