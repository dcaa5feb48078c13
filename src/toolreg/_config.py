"""Operator config: a small TOML file that says which packs load and what they may do.

Parsing is all-or-nothing: the whole file is checked into frozen dataclasses
before anything uses it, and the first problem raises ``ConfigError`` naming
the file, the key and what was expected. Nothing is ever half-applied.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

CONFIG_ENV = "TOOLREG_CONFIG"
LOCAL_PREFIX = "local:"
LOCAL_CONFIG_NAME = "toolreg.toml"

T = TypeVar("T")


class ConfigError(ValueError):
    """A config file that cannot be used, with where and why."""

    def __init__(self, source: Path | None, key: str, problem: str) -> None:
        self.source = source
        self.key = key
        self.problem = problem
        where = str(source) if source is not None else "<config>"
        super().__init__(f"{where}: {key}: {problem}" if key else f"{where}: {problem}")


@dataclass(frozen=True)
class PluginEntryConfig:
    """``[plugins.entries.<id>]``: what one pack may do."""

    allow_tool_override: bool = False
    version: SpecifierSet | None = None
    tools: tuple[str, ...] | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PluginsConfig:
    enabled: tuple[str, ...] | None = None
    disabled: tuple[str, ...] = ()
    paths: tuple[Path, ...] = ()
    entries: Mapping[str, PluginEntryConfig] = field(default_factory=dict)
    #: Seconds a dispatch hook may run before it counts as failed; 0 turns it off.
    hook_timeout: float = 10.0

    def entry(self, plugin_id: str) -> PluginEntryConfig:
        return self.entries.get(plugin_id, PluginEntryConfig())


@dataclass(frozen=True)
class ToolsetsConfig:
    enabled: tuple[str, ...] | None = None
    disabled: tuple[str, ...] = ()
    aliases: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class DispatchConfig:
    #: Validate every call's arguments against its tool's schema.
    validate: bool = True


#: An MCP server's name in config: it becomes part of tool names (``mcp__<name>__<tool>``).
MCP_SERVER_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class McpServerConfig:
    """``[mcp.servers.<name>]``: one MCP server whose tools become toolset ``mcp-<name>``.

    Exactly one of ``command`` (a stdio subprocess) and ``url`` (streamable
    HTTP) is set. Times are seconds.
    """

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
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

    @property
    def transport(self) -> str:
        """``stdio`` or ``http``."""
        return "stdio" if self.command is not None else "http"


@dataclass(frozen=True)
class McpConfig:
    """``[mcp]``: the MCP servers whose tools join the registry."""

    servers: Mapping[str, McpServerConfig] = field(default_factory=dict)


@dataclass(frozen=True)
class Config:
    """The whole operator config; ``Config()`` is the built-in default."""

    plugins: PluginsConfig = field(default_factory=PluginsConfig)
    toolsets: ToolsetsConfig = field(default_factory=ToolsetsConfig)
    source: Path | None = None
    dispatch: DispatchConfig = field(default_factory=DispatchConfig)
    mcp: McpConfig = field(default_factory=McpConfig)


def plugin_id(name: str) -> str:
    """The id config and env vars use for a plugin, however it was spelled.

    Packs are known by their canonical distribution name (``Toolreg_SQLite`` is
    ``toolreg-sqlite``); local folder plugins by ``local:<stem>``, exactly.
    """
    name = name.strip()
    if name.startswith(LOCAL_PREFIX):
        return name
    return canonicalize_name(name)


def user_config_dir() -> Path:
    """Where an operator's config lives when nothing more specific is given."""
    if sys.platform == "win32":
        base = os.environ.get("APPDATA") or str(Path.home() / "AppData" / "Roaming")
        return Path(base) / "toolreg"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "toolreg"
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "toolreg"


def find_config(path: str | os.PathLike[str] | None = None) -> Path | None:
    """The config file to use: ``path``, else $TOOLREG_CONFIG, ./toolreg.toml, the user dir."""
    if path is not None:
        return Path(path)
    from_env = os.environ.get(CONFIG_ENV)
    if from_env:
        return Path(from_env)
    for candidate in (Path.cwd() / LOCAL_CONFIG_NAME, user_config_dir() / LOCAL_CONFIG_NAME):
        if candidate.is_file():
            return candidate
    return None


def load_config(path: str | os.PathLike[str] | None = None) -> Config:
    """Find, read and check the operator config; the default when there is none.

    An explicitly named file (argument or $TOOLREG_CONFIG) must exist.
    """
    source = find_config(path)
    if source is None:
        return Config()
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(source, "", f"cannot read the file ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            source, "", f"not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    return parse_config(text, source)


def parse_config(text: str, source: Path | None = None) -> Config:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(source, "", f"not valid TOML ({exc})") from None
    reader = _Reader(source)
    reader.keys(data, "", {"plugins", "toolsets", "dispatch", "mcp"})
    plugins = reader.table(data, "plugins")
    toolsets = reader.table(data, "toolsets")
    dispatch = reader.table(data, "dispatch")
    reader.keys(dispatch, "dispatch", {"validate"})
    validate = reader.typed(dispatch, "dispatch", "validate", bool, "true or false")
    return Config(
        plugins=_plugins(reader, plugins),
        toolsets=_toolsets(reader, toolsets),
        source=source,
        dispatch=DispatchConfig(validate=True if validate is None else validate),
        mcp=_mcp(reader, reader.table(data, "mcp")),
    )


def _plugins(reader: _Reader, data: dict[str, Any]) -> PluginsConfig:
    reader.keys(data, "plugins", {"enabled", "disabled", "paths", "entries", "hook_timeout"})
    timeout = data.get("hook_timeout", 10.0)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not math.isfinite(timeout)
        or timeout < 0
    ):
        raise ConfigError(
            reader.source,
            "plugins.hook_timeout",
            f"expected a number of seconds >= 0, got {timeout!r}",
        )
    enabled = reader.names(data, "plugins", "enabled")
    paths = reader.strings(data, "plugins", "paths") or ()
    base = reader.source.parent if reader.source is not None else Path.cwd()
    entries: dict[str, PluginEntryConfig] = {}
    spellings: dict[str, str] = {}
    for raw_id, raw in reader.table(data, "plugins.entries").items():
        canonical = plugin_id(raw_id)
        key = f"plugins.entries.{raw_id}"
        if not isinstance(raw, dict):
            raise ConfigError(reader.source, key, f"expected a table, got {_kind(raw)}")
        if canonical in spellings:
            raise ConfigError(
                reader.source,
                key,
                f"names the same plugin as plugins.entries.{spellings[canonical]} "
                f"({canonical}); merge the two tables",
            )
        spellings[canonical] = raw_id
        entries[canonical] = _entry(reader, raw, key)
    return PluginsConfig(
        enabled=enabled,
        disabled=reader.names(data, "plugins", "disabled") or (),
        paths=tuple((base / p).resolve() for p in paths),
        entries=entries,
        hook_timeout=float(timeout),
    )


def _entry(reader: _Reader, data: dict[str, Any], key: str) -> PluginEntryConfig:
    reader.keys(data, key, {"allow_tool_override", "version", "tools", "settings"})
    version = reader.typed(data, key, "version", str, "a version specifier string")
    specifier = None
    if version is not None:
        try:
            specifier = SpecifierSet(version)
        except InvalidSpecifier:
            raise ConfigError(
                reader.source,
                f"{key}.version",
                f"expected a version specifier such as '>=1.2,<2', got {version!r}",
            ) from None
    allow = reader.typed(data, key, "allow_tool_override", bool, "true or false")
    return PluginEntryConfig(
        allow_tool_override=bool(allow),
        version=specifier,
        tools=reader.strings(data, key, "tools"),
        settings=dict(reader.table(data, f"{key}.settings")),
    )


def _toolsets(reader: _Reader, data: dict[str, Any]) -> ToolsetsConfig:
    reader.keys(data, "toolsets", {"enabled", "disabled", "aliases"})
    aliases = reader.table(data, "toolsets.aliases")
    for alias, target in aliases.items():
        if not isinstance(target, str) or not target:
            raise ConfigError(
                reader.source,
                f"toolsets.aliases.{alias}",
                f"expected a toolset name (string), got {_kind(target)}",
            )
    return ToolsetsConfig(
        enabled=reader.strings(data, "toolsets", "enabled"),
        disabled=reader.strings(data, "toolsets", "disabled") or (),
        aliases=dict(aliases),
    )


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
}


def _mcp(reader: _Reader, data: dict[str, Any]) -> McpConfig:
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
            raise ConfigError(reader.source, key, f"expected a table, got {_kind(raw)}")
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


def _mcp_server(reader: _Reader, name: str, data: dict[str, Any], key: str) -> McpServerConfig:
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
    base = reader.source.parent if reader.source is not None else Path.cwd()
    tools = reader.table(data, f"{key}.tools")
    reader.keys(tools, f"{key}.tools", {"include", "exclude"})
    enabled = reader.typed(data, key, "enabled", bool, "true or false")
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
    )


def _kind(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
    names.update({list: "an array", dict: "a table"})
    return names.get(type(value), type(value).__name__)


class _Reader:
    """Typed access to parsed TOML that reports the dotted key on failure."""

    def __init__(self, source: Path | None) -> None:
        self.source = source

    def keys(self, data: dict[str, Any], where: str, allowed: set[str]) -> None:
        for key in data:
            if key not in allowed:
                dotted = f"{where}.{key}" if where else key
                expected = ", ".join(sorted(allowed))
                raise ConfigError(self.source, dotted, f"unknown key; expected one of: {expected}")

    def table(self, data: dict[str, Any], dotted: str) -> dict[str, Any]:
        value = data.get(dotted.rsplit(".", 1)[-1], {})
        if not isinstance(value, dict):
            raise ConfigError(self.source, dotted, f"expected a table, got {_kind(value)}")
        return value

    def typed(
        self, data: dict[str, Any], where: str, key: str, kind: type[T], expected: str
    ) -> T | None:
        value = data.get(key)
        if value is None:
            return None
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise ConfigError(
                self.source, f"{where}.{key}", f"expected {expected}, got {_kind(value)}"
            )
        return value

    def strings(self, data: dict[str, Any], where: str, key: str) -> tuple[str, ...] | None:
        value = data.get(key)
        if value is None:
            return None
        if not isinstance(value, list):
            raise ConfigError(
                self.source, f"{where}.{key}", f"expected an array of strings, got {_kind(value)}"
            )
        for index, item in enumerate(value):
            if not isinstance(item, str) or not item:
                raise ConfigError(
                    self.source,
                    f"{where}.{key}[{index}]",
                    f"expected a non-empty string, got {_kind(item)}",
                )
        return tuple(value)

    def string_table(self, data: dict[str, Any], where: str, key: str) -> dict[str, str]:
        table = self.table(data, f"{where}.{key}")
        for name, value in table.items():
            if not isinstance(value, str):
                raise ConfigError(
                    self.source, f"{where}.{key}.{name}", f"expected a string, got {_kind(value)}"
                )
        return dict(table)

    def seconds(self, data: dict[str, Any], where: str, key: str, default: T) -> float | T:
        value = data.get(key)
        if value is None:
            return default
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or value <= 0
        ):
            raise ConfigError(
                self.source,
                f"{where}.{key}",
                f"expected a number of seconds > 0, got {value!r}",
            )
        return float(value)

    def names(self, data: dict[str, Any], where: str, key: str) -> tuple[str, ...] | None:
        values = self.strings(data, where, key)
        return None if values is None else tuple(plugin_id(v) for v in values)
