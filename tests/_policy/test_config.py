"""The operator config: TOML → immutable records, errors naming file/key/expected, search order."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from toolreg import Config, ConfigError, load_config, parse_config
from toolreg._policy.config import LockConfig, PluginEntryConfig, find_config, user_config_dir
from toolreg.cli import _commands, main

FULL = """
[plugins]
enabled = ["Toolreg_SQLite", "toolreg.sandbox"]
disabled = ["Toolreg-Audit"]
paths = ["local", "../shared", "/opt/toolreg/plugins"]
hook_timeout = 2.5
[plugins.entries.Toolreg_Sandbox]
allow_tool_override = true
version = ">=0.1,<0.2"
tools = ["terminal", "sandbox_*"]
settings = { allow = ["echo", "ls"], limits = { cpu = 2 } }
[toolsets]
enabled = ["file", "time"]
disabled = ["web"]
aliases = { db = "toolreg-sqlite", clock = "time" }
"""


@pytest.fixture(autouse=True)
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No $TOOLREG_CONFIG, an empty user config dir, and an empty working directory."""
    monkeypatch.delenv("TOOLREG_CONFIG", raising=False)
    for var in ("HOME", "XDG_CONFIG_HOME", "APPDATA"):
        monkeypatch.setenv(var, str(tmp_path / "home"))
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    return cwd


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# -- the documented shape -------------------------------------------------------------------


def test_full_documented_shape_parses(tmp_path):
    source = write(tmp_path / "etc" / "toolreg.toml", FULL)
    config = load_config(source)
    plugins = config.plugins
    assert config.source == source
    assert plugins.enabled == ("toolreg-sqlite", "toolreg-sandbox")
    assert plugins.disabled == ("toolreg-audit",)
    assert plugins.paths == (
        (tmp_path / "etc" / "local").resolve(),
        (tmp_path / "shared").resolve(),
        Path("/opt/toolreg/plugins").resolve(),
    )
    assert plugins.hook_timeout == 2.5
    assert list(plugins.entries) == ["toolreg-sandbox"]
    entry = plugins.entry("toolreg-sandbox")
    assert entry.allow_tool_override is True
    assert entry.version is not None and entry.version.contains("0.1.5")
    assert not entry.version.contains("0.2.0")
    assert entry.tools == ("terminal", "sandbox_*")
    assert entry.settings == {"allow": ["echo", "ls"], "limits": {"cpu": 2}}
    assert config.toolsets.enabled == ("file", "time")
    assert config.toolsets.disabled == ("web",)
    assert config.toolsets.aliases == {"db": "toolreg-sqlite", "clock": "time"}
    with pytest.raises(AttributeError):
        config.plugins.hook_timeout = 1.0  # type: ignore[misc]  # frozen


def test_empty_file_is_the_default_and_defaults_are_documented():
    assert parse_config("") == Config()
    plugins, default_entry = Config().plugins, PluginEntryConfig()
    assert (plugins.enabled, plugins.disabled, plugins.paths, plugins.hook_timeout) == (
        None, (), (), 10.0,
    )  # fmt: skip
    assert plugins.entry("anything") == default_entry and Config().toolsets.enabled is None
    assert (default_entry.allow_tool_override, default_entry.version, default_entry.tools) == (
        False, None, None,
    )  # fmt: skip
    timeout = parse_config("[plugins]\nhook_timeout = 0").plugins.hook_timeout  # 0 = no deadline
    assert timeout == 0.0 and isinstance(timeout, float)
    assert plugins.import_timeout == 10.0
    assert parse_config("[plugins]\nimport_timeout = 2").plugins.import_timeout == 2.0


def test_defaults_shared_by_every_config_cannot_be_changed_through_one():
    # Empty mappings are one read-only object, not a dict per record.
    config = Config()
    for mapping in (
        config.plugins.entries,
        config.toolsets.aliases,
        config.mcp.servers,
        PluginEntryConfig().settings,
    ):
        with pytest.raises(TypeError):
            mapping["x"] = 1  # type: ignore[index]
    assert Config().plugins.entries == {} and parse_config("") == Config()


def test_isolation_default_and_per_entry_choice():
    assert Config().plugins.isolation_of("toolreg-sqlite") == "none"
    assert PluginEntryConfig().env == () and PluginEntryConfig().isolation is None
    config = parse_config(
        '[plugins]\nisolation = "process"\n'
        '[plugins.entries.toolreg-trusted]\nisolation = "none"\n'
        '[plugins.entries.toolreg-keys]\nenv = ["API_TOKEN", "REGION"]\n'
    )
    plugins = config.plugins
    assert plugins.isolation_of("toolreg-anything") == "process"
    assert plugins.isolation_of("toolreg-trusted") == "none", "the entry wins"
    assert plugins.isolation_of("toolreg-keys") == "process"
    assert plugins.entry("toolreg-keys").env == ("API_TOKEN", "REGION")
    one = parse_config('[plugins.entries."local:x"]\nisolation = "process"\nenv = ["A"]')
    assert (one.plugins.isolation_of("local:x"), one.plugins.isolation_of("other")) == (
        "process", "none",
    )  # fmt: skip


def test_hooks_take_the_prefix_or_not_and_absent_means_all():
    config = parse_config(
        '[plugins.entries.a]\nhooks = ["post_tool_call", "toolreg_pre_tool_call"]\n'
        "[plugins.entries.b]\nhooks = []\n"
    )
    a, b = config.plugins.entry("a"), config.plugins.entry("b")
    assert a.hooks == ("toolreg_post_tool_call", "toolreg_pre_tool_call")
    assert a.allows_hook("toolreg_pre_tool_call")
    assert not a.allows_hook("toolreg_transform_tool_result")
    assert not b.allows_hook("toolreg_post_tool_call")
    assert config.plugins.entry("c").allows_hook("toolreg_transform_tool_result")


def test_ids_are_canonicalised_in_lists_and_entry_keys():
    config = parse_config(
        '[plugins]\nenabled = ["Toolreg_SQLite"]\ndisabled = ["TOOLREG.audit"]\n'
        "[plugins.entries.Toolreg_SQLite]\nallow_tool_override = true\n"
    )
    assert config.plugins.enabled == ("toolreg-sqlite",)
    assert config.plugins.disabled == ("toolreg-audit",)
    assert set(config.plugins.entries) == {"toolreg-sqlite"}
    assert config.plugins.entry("toolreg-sqlite").allow_tool_override is True
    # Toolset names are not distribution names: they are kept as written.
    assert parse_config('[toolsets]\nenabled = ["My_Ts"]').toolsets.enabled == ("My_Ts",)


def test_tracing_is_asked_for_turned_off_or_left_to_the_environment():
    assert parse_config("[tracing]\nenabled = true").tracing.enabled is True
    assert parse_config("[tracing]\nenabled = false").tracing.enabled is False
    assert parse_config("").tracing.enabled is None  # OTEL_* decides


def test_search_says_whether_to_defer_what_to_pin_and_the_threshold():
    config = parse_config(
        '[search]\ndefer = true\nalways_loaded = ["read_file", "toolset:mail"]\nmin_score = 1'
    )
    assert config.search.defer is True
    assert config.search.always_loaded == ("read_file", "toolset:mail")
    assert config.search.min_score == 1.0 and isinstance(config.search.min_score, float)
    default = parse_config("").search
    assert (default.defer, default.always_loaded, default.min_score) == (False, (), None)


def test_relative_paths_resolve_against_the_config_folder_not_the_cwd(tmp_path, clean_env):
    source = write(tmp_path / "conf" / "toolreg.toml", '[plugins]\npaths = ["plugins"]\n')
    assert load_config(source).plugins.paths == ((tmp_path / "conf" / "plugins").resolve(),)
    # Without a file, there is no folder: the current directory stands in.
    assert parse_config('[plugins]\npaths = ["p"]').plugins.paths == ((clean_env / "p").resolve(),)


# -- errors name the file, the key and what was expected ----------------------------------

ENTRY, X = "[plugins.entries.x]\n", "plugins.entries.x"
ERRORS = [
    (
        "colour = 1",
        "colour",
        "dispatch, lock, mcp, permissions, plugins, search, toolsets, tracing",
    ),
    ("[search]\ndeferred = true", "search.deferred", "did you mean 'defer'?; expected one of: a"),
    ('[search]\ndefer = "yes"', "search.defer", "expected true or false, got a string"),
    ('[search]\nalways_loaded = "x"', "search.always_loaded", "an array of strings, got a str"),
    ("[search]\nalways_loaded = [1]", "search.always_loaded[0]", "a non-empty string, got an int"),
    ("[search]\nmin_score = -1", "search.min_score", "expected a number >= 0, got -1"),
    ("[search]\nmin_score = nan", "search.min_score", "expected a number >= 0, got nan"),
    ("[search]\nmin_score = true", "search.min_score", "expected a number >= 0, got a boolean"),
    ("[tracing]\nenable = true", "tracing.enable", "key; did you mean 'enabled'?; expected"),
    ('[tracing]\nenabled = "yes"', "tracing.enabled", "expected true or false, got a string"),
    ("[plugins]\nenable = []", "plugins.enable", "did you mean 'enabled'?; expected one of: disab"),
    (ENTRY + "allow = true", "plugins.entries.x.allow", "expected one of: allow_tool_override,"),
    ("[toolsets]\nalias = {}", "toolsets.alias", "expected one of: aliases, disabled, enabled"),
    ("plugins = 1", "plugins", "expected a table, got an integer"),
    ("[plugins]\nentries = []", "plugins.entries", "expected a table, got an array"),
    ("[plugins.entries]\nx = 1", "plugins.entries.x", "expected a table, got an integer"),
    (ENTRY + 'allow_tool_override = "y"', f"{X}.allow_tool_override", "expected true or false"),
    (ENTRY + "version = 1", f"{X}.version", "a version specifier string, got an integer"),
    (ENTRY + 'version = "banana"', f"{X}.version", "such as '>=1.2,<2', got 'banana'"),
    ("[plugins.entries.Toolreg_X]\nversion = '=>1'", "plugins.entries.Toolreg_X.version",
     "expected a version specifier"),
    (ENTRY + 'tools = "a*"', "plugins.entries.x.tools", "an array of strings, got a string"),
    (ENTRY + 'tools = ["a", 1]', "plugins.entries.x.tools[1]", "non-empty string, got an integer"),
    (ENTRY + "settings = 1", "plugins.entries.x.settings", "expected a table, got an integer"),
    (ENTRY + 'hooks = "pre_tool_call"', f"{X}.hooks", "an array of strings, got a string"),
    ('[plugins]\nenabled = "a"', "plugins.enabled", "expected an array of strings, got a string"),
    ("[plugins]\nenabled = {a = 1}", "plugins.enabled", "an array of strings, got a table"),
    ('[plugins]\ndisabled = ["a", 2]', "plugins.disabled[1]", "non-empty string, got an integer"),
    ('[plugins]\ndisabled = ["a", true]', "plugins.disabled[1]", "got a boolean"),
    ('[plugins]\npaths = [""]', "plugins.paths[0]", "expected a non-empty string"),
    ("[plugins]\nhook_timeout = true", "plugins.hook_timeout", "expected a number of seconds >= 0"),
    ('[plugins]\nhook_timeout = "5"', "plugins.hook_timeout", "expected a number of seconds >= 0"),
    ("[plugins]\nhook_timeout = -1", "plugins.hook_timeout", "got -1"),
    ("[plugins]\nimport_timeout = -1", "plugins.import_timeout", "got -1"),
    ('[plugins]\nimport_timeout = "5"', "plugins.import_timeout", "seconds >= 0"),
    ('[toolsets]\nenabled = "file"', "toolsets.enabled", "expected an array of strings"),
    ("[toolsets]\ndisabled = [1]", "toolsets.disabled[0]", "got an integer"),
    ('[toolsets]\naliases = ["a"]', "toolsets.aliases", "expected a table, got an array"),
    ("[toolsets.aliases]\ndb = 1", "toolsets.aliases.db", "expected a toolset name (string)"),
    ('[plugins]\nisolation = "proc"', "plugins.isolation", "expected \"none\" or \"process\""),
    ("[plugins]\nisolation = true", "plugins.isolation", "got a boolean"),
    (ENTRY + 'isolation = "sandbox"', f"{X}.isolation", "got 'sandbox'"),
    (ENTRY + 'isolation = "process"\nenv = "A"', f"{X}.env", "array of strings, got a string"),
    (ENTRY + 'isolation = "process"\nenv = ["A=1"]', f"{X}.env[0]", "variable name"),
    (ENTRY + 'isolation = "process"\nenv = ["OK", "9X"]', f"{X}.env[1]", "got '9X'"),
    (ENTRY + 'env = ["TOKEN"]', f"{X}.env", 'only applies to a pack with isolation = "process"'),
    ('[plugins]\nisolation = "process"\n' + ENTRY + 'isolation = "none"\nenv = ["TOKEN"]',
     f"{X}.env", "only applies"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "key", "expected"), ERRORS)
def test_every_error_names_file_key_and_expectation(tmp_path, text, key, expected):
    source = write(tmp_path / "toolreg.toml", text + "\n")
    with pytest.raises(ConfigError) as info:
        load_config(source)
    error = info.value
    assert (error.source, error.key) == (source, key)
    assert expected in error.problem
    assert str(error) == f"{source}: {key}: {error.problem}"


def test_invalid_toml_names_the_file(tmp_path):
    source = write(tmp_path / "toolreg.toml", "[plugins\nenabled = [")
    with pytest.raises(ConfigError) as info:
        load_config(source)
    assert info.value.key == ""
    assert str(info.value).startswith(f"{source}: not valid TOML (")
    with pytest.raises(ConfigError, match=r"^<config>: not valid TOML"):  # no file to name
        parse_config("[plugins")


@pytest.mark.parametrize("key", ["hook_timeout", "import_timeout"])
@pytest.mark.parametrize("value", ["nan", "inf"])
def test_non_finite_timeouts_are_rejected(key, value):
    # HookRunner turns nan into an instant HookTimeout and inf into OverflowError, so
    # every dispatch hook fails closed and blocks every tool call.
    with pytest.raises(ConfigError, match=rf"plugins\.{key}"):
        parse_config(f"[plugins]\n{key} = {value}\n")


def test_undecodable_file_is_a_config_error(tmp_path):
    source = tmp_path / "toolreg.toml"
    source.write_bytes(b'[plugins]\nenabled = ["\xff"]\n')
    with pytest.raises(ConfigError, match="toolreg.toml"):
        load_config(source)


def test_two_spellings_of_one_entry_are_an_error():
    with pytest.raises(ConfigError, match=r"plugins\.entries\."):
        parse_config(
            '[plugins.entries.Toolreg_SQLite]\nversion = ">=1"\n'
            "[plugins.entries.toolreg-sqlite]\nallow_tool_override = true\n"
        )


# -- where the file is looked for ------------------------------------------------------------


def test_search_order(tmp_path, monkeypatch, clean_env):
    # Nothing anywhere: the defaults, and a lock looked for in the user config folder.
    assert find_config() is None
    assert load_config() == Config(lock=LockConfig(str(user_config_dir() / "toolreg.lock")))
    user = write(user_config_dir() / "toolreg.toml", "")
    if sys.platform.startswith("linux"):  # $XDG_CONFIG_HOME/toolreg/toolreg.toml
        assert user == tmp_path / "home" / "toolreg" / "toolreg.toml"
    assert find_config() == user and load_config().source == user
    local = write(clean_env / "toolreg.toml", "")
    assert find_config() == local
    from_env = write(tmp_path / "env.toml", "")
    monkeypatch.setenv("TOOLREG_CONFIG", str(from_env))
    assert find_config() == from_env
    explicit = write(tmp_path / "explicit.toml", "")
    assert find_config(explicit) == explicit and load_config(str(explicit)).source == explicit


def test_empty_env_var_is_ignored_and_a_directory_is_not_a_file(monkeypatch, clean_env):
    monkeypatch.setenv("TOOLREG_CONFIG", "")
    (clean_env / "toolreg.toml").mkdir()
    assert find_config() is None


@pytest.mark.parametrize("how", ["argument", "env"])
def test_a_named_missing_file_is_an_error_naming_it(tmp_path, monkeypatch, clean_env, how):
    write(clean_env / "toolreg.toml", "")  # must not be used as a fallback
    missing = tmp_path / "nope.toml"
    if how == "env":
        monkeypatch.setenv("TOOLREG_CONFIG", str(missing))
    with pytest.raises(ConfigError, match="cannot read the file") as info:
        load_config(missing if how == "argument" else None)
    assert info.value.source == missing and str(info.value).startswith(str(missing))


# -- the command line ------------------------------------------------------------------------


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLREG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TOOLREG_PLUGINS", "")


BAD = '[plugins.entries.x]\nversion = "banana"\n'


def one_line_error(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("toolreg: error: "), err
    return lines[0]


@pytest.mark.parametrize(
    "argv", [["--config", "BAD", "list"], ["list", "--json", "--config", "BAD"], ["list"]]
)
def test_bad_config_stops_list_before_anything_loads(tmp_path, capsys, monkeypatch, cli_env, argv):
    source = write(tmp_path / "bad.toml", BAD)
    if argv == ["list"]:
        monkeypatch.setenv("TOOLREG_CONFIG", str(source))
    calls: list[str] = []
    monkeypatch.setattr(_commands, "discover_builtin_tools", lambda: calls.append("builtins"))
    monkeypatch.setattr(_commands, "load_plugins", lambda *a, **k: calls.append("plugins"))
    monkeypatch.setattr(_commands.state, "config", None)
    code = main([str(source) if arg == "BAD" else arg for arg in argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert f"{source}: plugins.entries.x.version" in one_line_error(err)
    assert calls == [] and _commands.state.config is None


def test_good_config_is_applied_by_list(tmp_path, capsys, cli_env):
    source = write(tmp_path / "toolreg.toml", '[toolsets.aliases]\ncfgtest-clock = "time"\n')
    assert main(["--config", str(source), "list", "--toolset", "cfgtest-clock", "--json"]) == 0
    names = [tool["name"] for tool in json.loads(capsys.readouterr().out)]
    assert names == ["current_time"]


def test_toolsets_table_applies_aliases_and_turns_toolsets_off():
    from toolreg import ToolRegistry, apply_toolset_config

    reg = ToolRegistry()
    for name, toolset in [("a1", "alpha"), ("b1", "beta"), ("g1", "gamma")]:
        reg.register(name, toolset, {}, lambda args: "x")
    config = parse_config('[toolsets]\ndisabled = ["b"]\n[toolsets.aliases]\nb = "beta"\n')
    assert apply_toolset_config(config, reg) == ["b1"]
    assert reg.get_all_tool_names() == ["a1", "g1"]
    only = parse_config('[toolsets]\nenabled = ["alpha"]\n')
    assert apply_toolset_config(only, reg) == ["g1"]
    assert reg.get_all_tool_names() == ["a1"]


@pytest.mark.parametrize(
    "text",
    [
        "[plugins]\nenabled = " + "[" * 100_000 + "]" * 100_000,
        "x = " + "{a=" * 5000 + "1" + "}" * 5000,
    ],
    ids=["arrays", "inline-tables"],
)
def test_a_config_nested_too_deeply_is_a_config_error_naming_the_file(tmp_path, text):
    source = write(tmp_path / "toolreg.toml", text + "\n")
    with pytest.raises(ConfigError) as info:
        load_config(source)
    assert str(info.value) == f"{source}: nested too deeply to read (arrays or inline tables)"


# -- [lock] ----------------------------------------------------------------------------------


def test_the_lock_sits_beside_the_config_unless_a_path_is_given(tmp_path):
    source = tmp_path / "etc" / "toolreg.toml"
    assert parse_config("", source).lock == LockConfig(str(tmp_path / "etc" / "toolreg.lock"))
    moved = parse_config('[lock]\npath = "locks/prod.lock"\nmcp_drift = "warn"', source).lock
    assert moved.path == str(tmp_path / "etc" / "locks" / "prod.lock")
    assert (moved.on_change, moved.new_packs, moved.mcp_drift) == ("refuse", "refuse", "warn")
    assert parse_config("").lock.path is None  # text alone: no file to sit beside


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('[lock]\non_change = "ask"', "lock.on_change"),
        ("[lock]\nnew_packs = true", "lock.new_packs"),
        ('[lock]\nmcp_drift = "refuse"', "lock.mcp_drift"),
        ('[lock]\non_chnage = "warn"', "lock.on_chnage"),
    ],
)
def test_a_bad_lock_switch_names_its_key(text, key):
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    assert info.value.key == key
