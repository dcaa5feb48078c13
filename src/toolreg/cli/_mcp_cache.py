"""The last tool list each MCP server gave, so ``list`` and ``show`` need not start them.

Written by a command that connected the servers, read without ``--mcp``. It only
feeds what is printed: nothing in it is registered or called.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolreg import Config, ToolRegistry

from .._contract.names import registry_name, toolset_name
from .._discovery.cache_files import cache_file, read_json, write_json_atomic
from .._policy.config_mcp import McpServerConfig

log = logging.getLogger("toolreg.mcp")

CACHE_FILE_NAME = "mcp-tools-v1.json"
_WHAT = "MCP tool list cache"
#: Bounds on what one server's entry may hold; a larger entry is ignored.
MAX_TOOLS = 2000


@dataclass(frozen=True)
class KnownTools:
    """One server's last tool list: when it was taken and the tools."""

    server: str
    at: float
    tools: tuple[dict[str, Any], ...]

    @property
    def when(self) -> str:
        """The time, as ``2026-12-01 17:30 UTC``."""
        return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(self.at))


def server_key(server: McpServerConfig) -> str:
    """What makes a server the same server: a different key means a different tool list."""
    identity = [
        server.command,
        list(server.args),
        sorted(server.env.items()),
        str(server.cwd) if server.cwd is not None else None,
        server.url,
        sorted(server.headers.items()),
        list(server.include) if server.include is not None else None,
        list(server.exclude),
    ]
    import hashlib  # only a config with MCP servers needs it

    # Values (tokens among them) are hashed, never stored.
    return hashlib.sha256(json.dumps(identity).encode()).hexdigest()


def remember(config: Config, registry: ToolRegistry, statuses: list[dict[str, Any]]) -> None:
    """Write the tool list of every connected server; the others keep their last one."""
    path = cache_file(CACHE_FILE_NAME, _WHAT)
    connected = [s["name"] for s in statuses if s.get("state") == "connected"]
    if path is None or not connected:
        return
    servers = _read_servers(path)
    now = time.time()
    for name in connected:
        server = config.mcp.servers.get(name)
        if server is None:
            continue
        tools = []
        for tool in registry.get_tool_names_for_toolset(toolset_name(name)):
            entry = registry.get_entry(tool)
            if entry is not None:
                tools.append(
                    {
                        "name": tool,
                        "description": entry.description,
                        "parameters": entry.schema.get("parameters", {}),
                        "annotations": dict(entry.annotations),
                        "output_schema": entry.output_schema,
                    }
                )
        servers[name] = {"key": server_key(server), "at": now, "tools": tools}
    write_json_atomic(path, {"servers": servers}, what=_WHAT)


def known_tools(config: Config) -> dict[str, KnownTools]:
    """The last tool list of each enabled server in ``config``, when one is known for it."""
    path = cache_file(CACHE_FILE_NAME, _WHAT)
    if path is None:
        return {}
    servers = _read_servers(path)
    found = {}
    for name, server in config.mcp.servers.items():
        entry = servers.get(name)
        if not server.enabled or not isinstance(entry, dict):
            continue
        if entry.get("key") != server_key(server):
            continue  # the config changed since: that list may not be this server's
        at, tools = entry.get("at"), entry.get("tools")
        if not isinstance(at, (int, float)) or not isinstance(tools, list):
            continue
        if len(tools) > MAX_TOOLS:
            continue
        found[name] = KnownTools(name, float(at), tuple(t for t in tools if isinstance(t, dict)))
    return found


def cached_registry(known: Mapping[str, KnownTools]) -> ToolRegistry:
    """The known tools in a registry of their own, for their definitions; never dispatched.

    Each tool passes the registry's checks (name, schema), and only names of
    the server's own toolset are taken; anything else in the file is skipped.
    """
    registry = ToolRegistry()
    for server, listing in known.items():
        prefix = registry_name(server, "")
        for tool in listing.tools:
            name, description = tool.get("name"), tool.get("description", "")
            parameters = tool.get("parameters")
            if not (isinstance(name, str) and name.startswith(prefix)):
                continue
            if not isinstance(description, str) or not isinstance(parameters, dict):
                continue
            schema = {"name": name, "description": description, "parameters": parameters}
            # Checked like an upstream server's: a bad value drops the tool.
            annotations, output_schema = tool.get("annotations") or {}, tool.get("output_schema")
            try:
                registry.register(
                    name,
                    toolset_name(server),
                    schema,
                    _never,
                    annotations=annotations,
                    output_schema=output_schema,
                )
            except (TypeError, ValueError, PermissionError) as exc:
                log.debug("Ignoring cached MCP tool %r: %s", name, exc)
        if registry.get_tool_names_for_toolset(toolset_name(server)):
            # As when connected: the server's name is its toolset's alias.
            registry.register_toolset_alias(server, toolset_name(server))
    return registry


def _never(args: dict[str, Any]) -> str:
    raise RuntimeError("a cached MCP tool is only shown, never called")


def _read_servers(path: str) -> dict[str, Any]:
    data = read_json(path, _WHAT)
    servers = data.get("servers") if isinstance(data, dict) else None
    return dict(servers) if isinstance(servers, dict) else {}
