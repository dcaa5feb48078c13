"""Operator config: a small TOML file that says which packs load and what they may do.

Parsing is all-or-nothing: the first problem raises ``ConfigError`` naming the file, the
key and what was expected, before anything uses the file. Nothing is ever half-applied.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from .config_mcp import McpConfig, McpServerConfig, parse_mcp
from .config_reader import ConfigError, Reader, kind_of

if TYPE_CHECKING:
    from pathlib import Path

    from packaging.specifiers import SpecifierSet

    from .._core.permissions import Permissions

CONFIG_ENV = "TOOLREG_CONFIG"
#: Where a pack's code runs: in the host process, or in a child process of its own.
ISOLATION_MODES = ("none", "process")
# Portable environment variable names: what every shell and OS accepts.
_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
LOCAL_PREFIX = "local:"
LOCAL_CONFIG_NAME = "toolreg.toml"
#: The lock's file name (docs/lock.md), beside the config file.
LOCK_NAME = "toolreg.lock"
#: Every toolreg hook's name starts with it; config may leave it out.
HOOK_PREFIX = "toolreg_"
#: The default of every mapping field: read-only, so one can serve every record.
_NO_ENTRIES: Mapping[str, Any] = MappingProxyType({})


# NamedTuples, not frozen dataclasses: every start-up defines them and makes a
# Config, and a dataclass costs about half a millisecond to create.
class PluginEntryConfig(NamedTuple):
    """``[plugins.entries.<id>]``: what one pack may do."""

    allow_tool_override: bool = False
    version: SpecifierSet | None = None
    tools: tuple[str, ...] | None = None
    settings: Mapping[str, Any] = _NO_ENTRIES
    #: ``"none"`` or ``"process"``; None means the ``[plugins] isolation`` default.
    isolation: str | None = None
    #: Environment variables an isolated pack's process gets besides the minimal set.
    env: tuple[str, ...] = ()
    #: The dispatch hooks it may run, full names (``toolreg_pre_tool_call``); None: all.
    #: A name that is no dispatch hook stays here, so the check can name it.
    hooks: tuple[str, ...] | None = None

    def allows_hook(self, hook: str) -> bool:
        """Whether this plugin's implementation of dispatch hook ``hook`` may run.

        Only dispatch hooks are asked about: the setup hooks always run.
        """
        return self.hooks is None or hook in self.hooks


class PluginsConfig(NamedTuple):
    enabled: tuple[str, ...] | None = None
    disabled: tuple[str, ...] = ()
    paths: tuple[Path, ...] = ()
    entries: Mapping[str, PluginEntryConfig] = _NO_ENTRIES
    #: Seconds a dispatch hook may run before it counts as failed; 0 turns it off.
    hook_timeout: float = 10.0
    #: Seconds a pack's or local plugin's import may take before it counts as failed; 0: no limit.
    import_timeout: float = 10.0
    #: Where packs run unless their entry says otherwise: ``"none"`` or ``"process"``.
    isolation: str = "none"

    def entry(self, plugin_id: str) -> PluginEntryConfig:
        return self.entries.get(plugin_id, PluginEntryConfig())

    def isolation_of(self, plugin_id: str) -> str:
        """``"none"`` (in this process) or ``"process"`` (a child process) for one plugin."""
        return self.entry(plugin_id).isolation or self.isolation


class ToolsetsConfig(NamedTuple):
    enabled: tuple[str, ...] | None = None
    disabled: tuple[str, ...] = ()
    aliases: Mapping[str, str] = _NO_ENTRIES

    def allows(self, toolset: str, resolve: Callable[[str], str] = str) -> bool:
        """Whether the enabled/disabled lists keep ``toolset``.

        ``resolve`` turns a name written in the lists (maybe an alias) into the
        toolset it means.
        """
        if self.enabled is not None and toolset not in {resolve(n) for n in self.enabled}:
            return False
        return toolset not in {resolve(n) for n in self.disabled}


class DispatchConfig(NamedTuple):
    #: Validate every call's arguments against its tool's schema.
    validate: bool = True


class TracingConfig(NamedTuple):
    #: ``toolreg serve`` and ``toolreg call`` trace tool calls: True, False, or None
    #: (absent), which leaves it to the standard ``OTEL_*`` environment variables.
    enabled: bool | None = None


class SearchConfig(NamedTuple):
    """``[search]``: how hosts offer a large catalog (docs/search.md, "Deferred loading").

    Read by hosts, handed to ``get_definitions(defer=..., always_loaded=...)`` and
    ``registry.session(always_loaded=..., min_score=...)``; the registry never reads it.
    """

    #: Send the always-loaded tools and a search tool rather than every tool.
    defer: bool = False
    #: Tool names, or ``toolset:NAME``, always sent in full.
    always_loaded: tuple[str, ...] = ()
    #: The search threshold; None leaves ``search``'s default.
    min_score: float | None = None


class LockConfig(NamedTuple):
    """``[lock]``: where ``toolreg.lock`` is and what a difference from it does (docs/lock.md)."""

    #: The lock file: ``[lock] path``, else ``toolreg.lock`` beside the config file (or,
    #: with none, in the user config folder); None when the config was given as text.
    path: str | None = None
    #: A locked pack whose version or RECORD changed: ``"refuse"`` holds it back,
    #: ``"warn"`` loads it without override consent and offers its tools.
    on_change: str = "refuse"
    #: A pack the lock does not name: ``"refuse"`` or ``"allow"`` (it loads unlocked).
    new_packs: str = "refuse"
    #: A locked MCP server's tool that changed or is new: ``"withhold"`` or ``"warn"``.
    mcp_drift: str = "withhold"


#: The words each ``[lock]`` switch takes, the first its default.
LOCK_CHOICES = {
    "on_change": ("refuse", "warn"),
    "new_packs": ("refuse", "allow"),
    "mcp_drift": ("withhold", "warn"),
}


class Config(NamedTuple):
    """The whole operator config; ``Config()`` is the built-in default."""

    plugins: PluginsConfig = PluginsConfig()
    toolsets: ToolsetsConfig = ToolsetsConfig()
    source: Path | None = None
    dispatch: DispatchConfig = DispatchConfig()
    mcp: McpConfig = McpConfig()
    tracing: TracingConfig = TracingConfig()
    search: SearchConfig = SearchConfig()
    #: The ``[permissions]`` table compiled; None when the config has none (every call runs).
    permissions: Permissions | None = None
    lock: LockConfig = LockConfig()


def plugin_id(name: str) -> str:
    """The id config and env vars use for a plugin, however it was spelled.

    Packs are known by their canonical distribution name (``Toolreg_SQLite`` is
    ``toolreg-sqlite``); local folder plugins by ``local:<stem>``, exactly.
    """
    name = name.strip()
    if name.startswith(LOCAL_PREFIX):
        return name
    # packaging.utils pulls in packaging.tags (~20 ms): only pay for it when
    # there is a name to canonicalise.
    from packaging.utils import canonicalize_name

    return canonicalize_name(name)


def user_config_dir() -> Path:
    """Where an operator's config lives when nothing more specific is given."""
    from pathlib import Path

    return Path(_user_config_folder())


# Config discovery runs on every start and mostly finds nothing: it looks with
# os.path, and pathlib (with urllib.parse behind it) loads only for a file found.
def _user_config_folder() -> str:
    if sys.platform == "win32":
        base = os.environ.get("APPDATA") or os.path.join(_home(), "AppData", "Roaming")
        return os.path.join(base, "toolreg")
    if sys.platform == "darwin":
        return os.path.join(_home(), "Library", "Application Support", "toolreg")
    return os.path.join(
        os.environ.get("XDG_CONFIG_HOME") or os.path.join(_home(), ".config"), "toolreg"
    )


def _home() -> str:
    home = os.path.expanduser("~")
    if home.startswith("~"):  # as Path.home() says it
        raise RuntimeError("Could not determine home directory.")
    return home


def _is_file(path: str) -> bool:
    """A regular file there? False when nothing is; other errors (no access) raise, as pathlib."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False


def find_config(path: str | os.PathLike[str] | None = None) -> Path | None:
    """The config file to use: ``path``, else $TOOLREG_CONFIG, ./toolreg.toml, the user dir."""
    found = _config_file(path)
    if found is None:
        return None
    from pathlib import Path

    return Path(found)


def _config_file(path: str | os.PathLike[str] | None) -> str | os.PathLike[str] | None:
    if path is not None:
        return path
    from_env = os.environ.get(CONFIG_ENV)
    if from_env:
        return from_env
    for folder in (os.getcwd(), _user_config_folder()):
        candidate = os.path.join(folder, LOCAL_CONFIG_NAME)
        if _is_file(candidate):
            return candidate
    return None


def load_config(path: str | os.PathLike[str] | None = None) -> Config:
    """Find, read and check the operator config; the default when there is none.

    An explicitly named file (argument or $TOOLREG_CONFIG) must exist.
    """
    source = find_config(path)
    if source is None:
        return Config(lock=LockConfig(path=os.path.join(_user_config_folder(), LOCK_NAME)))
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
    """Check the TOML ``text`` of an operator config; ``source`` names it in errors.

    Raises ConfigError naming the file, the key and what was expected.
    """
    # Imported here: most runs find no config file and never parse one.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(source, "", f"not valid TOML ({exc})") from None
    except RecursionError:
        raise ConfigError(
            source, "", "nested too deeply to read (arrays or inline tables)"
        ) from None
    reader = Reader(source)
    reader.keys(
        data,
        "",
        {"plugins", "toolsets", "dispatch", "mcp", "tracing", "search", "permissions", "lock"},
    )
    plugins = reader.table(data, "plugins")
    toolsets = reader.table(data, "toolsets")
    dispatch = reader.table(data, "dispatch")
    reader.keys(dispatch, "dispatch", {"validate"})
    validate = reader.typed(dispatch, "dispatch", "validate", bool, "true or false")
    tracing = reader.table(data, "tracing")
    reader.keys(tracing, "tracing", {"enabled"})
    return Config(
        plugins=_plugins(reader, plugins),
        toolsets=_toolsets(reader, toolsets),
        source=source,
        dispatch=DispatchConfig(validate=True if validate is None else validate),
        mcp=parse_mcp(reader, reader.table(data, "mcp")),
        tracing=TracingConfig(reader.typed(tracing, "tracing", "enabled", bool, "true or false")),
        search=_search(reader, reader.table(data, "search")),
        permissions=_permissions(reader, data),
        lock=_lock(reader, reader.table(data, "lock")),
    )


def _lock(reader: Reader, data: dict[str, Any]) -> LockConfig:
    reader.keys(data, "lock", {"path", *LOCK_CHOICES})
    chosen = {}
    for key, choices in LOCK_CHOICES.items():
        value = reader.typed(data, "lock", key, str, " or ".join(map(repr, choices)))
        if value is not None and value not in choices:
            raise ConfigError(
                reader.source,
                f"lock.{key}",
                f"expected {' or '.join(map(repr, choices))}, got {value!r}",
            )
        chosen[key] = value or choices[0]
    written = reader.typed(data, "lock", "path", str, "a file path")
    base = reader.source.parent if reader.source is not None else None
    if written:
        path: str | None = os.path.join(base, written) if base is not None else written
    elif base is not None:
        path = os.path.join(base, LOCK_NAME)
    else:
        path = None
    return LockConfig(path=path, **chosen)


def _search(reader: Reader, data: dict[str, Any]) -> SearchConfig:
    reader.keys(data, "search", {"defer", "always_loaded", "min_score"})
    min_score = data.get("min_score")
    if min_score is not None and (
        isinstance(min_score, bool)
        or not isinstance(min_score, (int, float))
        or not 0 <= min_score < float("inf")
    ):
        number = isinstance(min_score, (int, float)) and not isinstance(min_score, bool)
        got = repr(min_score) if number else kind_of(min_score)
        raise ConfigError(reader.source, "search.min_score", f"expected a number >= 0, got {got}")
    return SearchConfig(
        defer=bool(reader.typed(data, "search", "defer", bool, "true or false")),
        always_loaded=reader.strings(data, "search", "always_loaded") or (),
        min_score=None if min_score is None else float(min_score),
    )


def _permissions(reader: Reader, data: dict[str, Any]) -> Permissions | None:
    """``[permissions]`` compiled, each rule checked; None when the table is absent."""
    if "permissions" not in data:
        return None
    table = reader.table(data, "permissions")
    from .._core.permissions import KEYS, LEVELS, Permissions, RuleError, parse_rule

    reader.keys(table, "permissions", set(KEYS))
    default = reader.typed(table, "permissions", "default", str, '"allow", "ask" or "deny"')
    if default is not None and default not in LEVELS:
        raise ConfigError(
            reader.source,
            "permissions.default",
            f'expected "allow", "ask" or "deny", got {default!r}',
        )
    read_only = reader.typed(table, "permissions", "ask_unless_read_only", bool, "true or false")
    if read_only and (default or "allow") != "allow":
        raise ConfigError(
            reader.source,
            "permissions.ask_unless_read_only",
            f'needs default = "allow", got {default!r}: it asks for the calls the default '
            "would allow, except a trusted read-only tool's",
        )
    trust = reader.strings(table, "permissions", "trust_hints") or ()
    rules = {}
    try:
        for level in LEVELS:
            written = reader.strings(table, "permissions", level) or ()
            rules[level] = [parse_rule(text, level, i) for i, text in enumerate(written)]
        # Permissions reads each trust_hints entry (parse_trust) as it is made.
        return Permissions(default or "allow", rules, bool(read_only), trust)
    except RuleError as exc:
        raise ConfigError(reader.source, exc.where, f"{exc.rule!r}: {exc.problem}") from None


def _plugins(reader: Reader, data: dict[str, Any]) -> PluginsConfig:
    reader.keys(
        data,
        "plugins",
        {"enabled", "disabled", "paths", "entries", "hook_timeout", "import_timeout", "isolation"},
    )
    isolation = _isolation(reader, data, "plugins") or "none"
    hook_timeout = _seconds_or_off(reader, data, "hook_timeout")
    import_timeout = _seconds_or_off(reader, data, "import_timeout")
    enabled = _ids(reader.strings(data, "plugins", "enabled"))
    paths = reader.strings(data, "plugins", "paths") or ()
    from pathlib import Path  # a file is being parsed: its folders are Paths

    base = reader.source.parent if reader.source is not None else Path.cwd()
    entries: dict[str, PluginEntryConfig] = {}
    spellings: dict[str, str] = {}
    for raw_id, raw in reader.table(data, "plugins.entries").items():
        canonical = plugin_id(raw_id)
        key = f"plugins.entries.{raw_id}"
        if not isinstance(raw, dict):
            raise ConfigError(reader.source, key, f"expected a table, got {kind_of(raw)}")
        if canonical in spellings:
            raise ConfigError(
                reader.source,
                key,
                f"names the same plugin as plugins.entries.{spellings[canonical]} "
                f"({canonical}); merge the two tables",
            )
        spellings[canonical] = raw_id
        entries[canonical] = entry = _entry(reader, raw, key)
        if entry.env and (entry.isolation or isolation) != "process":
            raise ConfigError(
                reader.source, f"{key}.env", 'only applies to a pack with isolation = "process"'
            )
    return PluginsConfig(
        enabled=enabled,
        disabled=_ids(reader.strings(data, "plugins", "disabled")) or (),
        paths=tuple((base / p).resolve() for p in paths),
        entries=entries,
        hook_timeout=hook_timeout,
        import_timeout=import_timeout,
        isolation=isolation,
    )


def _seconds_or_off(reader: Reader, data: dict[str, Any], key: str) -> float:
    """``plugins.<key>``: seconds >= 0 (0 turns the deadline off), 10 when absent."""
    import math  # a C extension to load: only a config file that is read needs it

    timeout = data.get(key, 10.0)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not math.isfinite(timeout)
        or timeout < 0
    ):
        raise ConfigError(
            reader.source, f"plugins.{key}", f"expected a number of seconds >= 0, got {timeout!r}"
        )
    return float(timeout)


def _entry(reader: Reader, data: dict[str, Any], key: str) -> PluginEntryConfig:
    reader.keys(
        data,
        key,
        {"allow_tool_override", "version", "tools", "settings", "isolation", "env", "hooks"},
    )
    version = reader.typed(data, key, "version", str, "a version specifier string")
    specifier = None
    if version is not None:
        try:
            from packaging.specifiers import InvalidSpecifier, SpecifierSet

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
        isolation=_isolation(reader, data, key),
        env=_env_names(reader, data, key),
        hooks=_hook_names(reader.strings(data, key, "hooks")),
    )


def _isolation(reader: Reader, data: dict[str, Any], where: str) -> str | None:
    mode = reader.typed(data, where, "isolation", str, '"none" or "process"')
    if mode is not None and mode not in ISOLATION_MODES:
        raise ConfigError(
            reader.source, f"{where}.isolation", f'expected "none" or "process", got {mode!r}'
        )
    return mode


def _env_names(reader: Reader, data: dict[str, Any], where: str) -> tuple[str, ...]:
    names = reader.strings(data, where, "env") or ()
    for index, name in enumerate(names):
        if not _ENV_NAME_RE.fullmatch(name):
            raise ConfigError(
                reader.source,
                f"{where}.env[{index}]",
                f"expected an environment variable name (letters, digits, '_'), got {name!r}",
            )
    return names


def _hook_names(names: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """Hook names as written, the ``toolreg_`` prefix optional, in full form."""
    if names is None:
        return None
    return tuple(name if name.startswith(HOOK_PREFIX) else HOOK_PREFIX + name for name in names)


def _toolsets(reader: Reader, data: dict[str, Any]) -> ToolsetsConfig:
    reader.keys(data, "toolsets", {"enabled", "disabled", "aliases"})
    aliases = reader.table(data, "toolsets.aliases")
    for alias, target in aliases.items():
        if not isinstance(target, str) or not target:
            raise ConfigError(
                reader.source,
                f"toolsets.aliases.{alias}",
                f"expected a toolset name (string), got {kind_of(target)}",
            )
    return ToolsetsConfig(
        enabled=reader.strings(data, "toolsets", "enabled"),
        disabled=reader.strings(data, "toolsets", "disabled") or (),
        aliases=dict(aliases),
    )


def _ids(values: tuple[str, ...] | None) -> tuple[str, ...] | None:
    return None if values is None else tuple(plugin_id(v) for v in values)


__all__ = [
    "Config",
    "ConfigError",
    "McpConfig",
    "McpServerConfig",
    "SearchConfig",
    "load_config",
    "parse_config",
]
