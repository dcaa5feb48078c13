"""``[mcp.servers.<name>]``: the MCP servers whose tools join the registry."""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from .config_reader import ConfigError, Reader, kind_of

if TYPE_CHECKING:
    from pathlib import Path

#: An MCP server's name in config: it becomes part of tool names (``mcp__<name>__<tool>``).
MCP_SERVER_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
#: Longest result (in characters) a server's tool may hand the model, unless configured.
DEFAULT_MCP_RESULT_CHARS = 100_000
#: The default of every mapping field: read-only, so one can serve every record.
_EMPTY: Mapping[str, Any] = MappingProxyType({})


# NamedTuples, not frozen dataclasses, as in config.py: defined at every start-up.
class McpServerConfig(NamedTuple):
    """``[mcp.servers.<name>]``: one MCP server whose tools become toolset ``mcp-<name>``.

    Exactly one of ``command`` (a stdio subprocess) and ``url`` (streamable
    HTTP) is set. Times are seconds.
    """

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = _EMPTY
    cwd: Path | None = None
    url: str | None = None
    headers: Mapping[str, str] = _EMPTY
    enabled: bool = True
    #: How long one tool call may take.
    timeout: float = 120.0
    #: How long connecting (and the first tool listing) may take.
    connect_timeout: float = 30.0
    #: Re-list the tools this often; None relies on the server's change signals.
    refresh_interval: float | None = None
    #: Tool names or globs to keep (None keeps all); a name it matches beats ``exclude``.
    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] = ()
    #: Longer results are cut (text) or left out (blocks of a multimodal result).
    max_result_size_chars: int = DEFAULT_MCP_RESULT_CHARS

    @property
    def transport(self) -> str:
        """``stdio`` or ``http``."""
        return "stdio" if self.command is not None else "http"


class McpConfig(NamedTuple):
    """``[mcp]``: the MCP servers whose tools join the registry."""

    servers: Mapping[str, McpServerConfig] = _EMPTY


_MCP_SERVER_KEYS = {
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "enabled",
    "timeout",
    "connect_timeout",
    "refresh_interval",
    "tools",
    "max_result_size_chars",
}


def parse_mcp(reader: Reader, data: dict[str, Any]) -> McpConfig:
    reader.keys(data, "mcp", {"servers"})
    servers: dict[str, McpServerConfig] = {}
    # Tool names carry the server name with '-' made '_': two names that differ
    # only there would hand out the same tool names.
    prefixes: dict[str, str] = {}
    for name, raw in reader.table(data, "mcp.servers").items():
        key = f"mcp.servers.{name}"
        if not MCP_SERVER_NAME_RE.fullmatch(name):
            raise ConfigError(
                reader.source,
                key,
                "expected a server name of 1-64 letters, digits, '_' or '-'",
            )
        if not isinstance(raw, dict):
            raise ConfigError(reader.source, key, f"expected a table, got {kind_of(raw)}")
        prefix = name.replace("-", "_")
        if prefix in prefixes:
            raise ConfigError(
                reader.source,
                key,
                f"gives the same tool names (mcp__{prefix}__*) as "
                f"mcp.servers.{prefixes[prefix]}; rename one of them",
            )
        prefixes[prefix] = name
        servers[name] = _mcp_server(reader, name, raw, key)
    return McpConfig(servers=servers)


def _mcp_server(reader: Reader, name: str, data: dict[str, Any], key: str) -> McpServerConfig:
    reader.keys(data, key, _MCP_SERVER_KEYS)
    command = reader.typed(data, key, "command", str, "a command (string)")
    url = reader.typed(data, key, "url", str, "an http:// or https:// URL (string)")
    if (command is None) == (url is None):
        raise ConfigError(
            reader.source, key, "expected exactly one of 'command' (stdio) and 'url' (HTTP)"
        )
    if command is not None and not command.strip():
        raise ConfigError(reader.source, f"{key}.command", "expected a non-empty command")
    if url is not None and not url.startswith(("http://", "https://")):
        raise ConfigError(
            reader.source, f"{key}.url", f"expected an http:// or https:// URL, got {url!r}"
        )
    stdio_only = ("args", "env", "cwd") if url is not None else ()
    http_only = ("headers",) if command is not None else ()
    for other in (*stdio_only, *http_only):
        if other in data:
            needs = "command" if other in stdio_only else "url"
            raise ConfigError(reader.source, f"{key}.{other}", f"only applies with '{needs}'")
    args = data.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(reader.source, f"{key}.args", "expected an array of strings")
    cwd = reader.typed(data, key, "cwd", str, "a directory (string)")
    from pathlib import Path  # a server's cwd, when a file declares one

    base = reader.source.parent if reader.source is not None else Path.cwd()
    tools = reader.table(data, f"{key}.tools")
    reader.keys(tools, f"{key}.tools", {"include", "exclude"})
    enabled = reader.typed(data, key, "enabled", bool, "true or false")
    limit = reader.typed(data, key, "max_result_size_chars", int, "a number of characters > 0")
    if limit is not None and limit < 1:
        raise ConfigError(
            reader.source,
            f"{key}.max_result_size_chars",
            f"expected a number of characters > 0, got {limit}",
        )
    return McpServerConfig(
        name=name,
        command=command,
        args=tuple(args),
        env=reader.string_table(data, key, "env"),
        cwd=(base / cwd).resolve() if cwd is not None else None,
        url=url,
        headers=reader.string_table(data, key, "headers"),
        enabled=True if enabled is None else enabled,
        timeout=reader.seconds(data, key, "timeout", 120.0),
        connect_timeout=reader.seconds(data, key, "connect_timeout", 30.0),
        refresh_interval=reader.seconds(data, key, "refresh_interval", None),
        include=reader.strings(tools, f"{key}.tools", "include"),
        exclude=reader.strings(tools, f"{key}.tools", "exclude") or (),
        max_result_size_chars=DEFAULT_MCP_RESULT_CHARS if limit is None else limit,
    )
