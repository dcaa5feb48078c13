"""The policy gate before a pack is imported: enabled?, compatible?, namespaces free?"""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolreg import Config, parse_config
from toolreg._policy import admission
from toolreg._policy.admission import (
    RESERVED_PACK_NAMESPACES,
    NotAdmitted,
    check_compatible,
    check_enabled,
    check_namespaces,
)

DEFAULT = Config()
PLUGINS = "TOOLREG_PLUGINS"
KILL = "TOOLREG_DISABLE_PLUGIN_AUTOLOAD"


def config(text: str) -> Config:
    return parse_config(text)


def enabled(plugin_id: str, cfg: Config = DEFAULT, **environ: str) -> NotAdmitted | None:
    return check_enabled(plugin_id, cfg, environ)


# -- check_enabled -----------------------------------------------------------------------------


def test_everything_is_enabled_by_default():
    assert enabled("toolreg-sqlite") is None
    assert enabled("local:hello") is None


@pytest.mark.parametrize("value", ["1", "true", "yes", " 1 "])
def test_autoload_kill_switch_disables_everything(value):
    verdict = enabled("toolreg-sqlite", **{KILL: value})
    assert verdict == NotAdmitted("disabled", f"plugin autoload is off ({KILL} is set)")
    # It beats every way of enabling a pack.
    cfg = config('[plugins]\nenabled = ["toolreg-sqlite"]')
    assert enabled("toolreg-sqlite", cfg, **{KILL: value, PLUGINS: "toolreg-sqlite"}) == verdict


@pytest.mark.parametrize("value", ["0", "", " ", " 0 "])
def test_kill_switch_zero_or_empty_is_off(value):
    assert enabled("toolreg-sqlite", **{KILL: value}) is None


def test_toolreg_plugins_lists_canonicalised_ids():
    env = {PLUGINS: "Toolreg_SQLite,toolreg.audit,,local:hello"}
    assert enabled("toolreg-sqlite", **env) is None
    assert enabled("toolreg-audit", **env) is None
    assert enabled("local:hello", **env) is None
    assert enabled("toolreg-sandbox", **env) == NotAdmitted("disabled", f"not listed in {PLUGINS}")


def test_toolreg_plugins_tolerates_spaces_around_ids():
    # canonicalize_name(" toolreg-audit") keeps the space, so "a, b" enables only a.
    env = {PLUGINS: "toolreg-sqlite, toolreg-audit"}
    assert enabled("toolreg-sqlite", **env) is None
    assert enabled("toolreg-audit", **env) is None


@pytest.mark.parametrize("value", ["", " ", ",", " , "])
def test_empty_toolreg_plugins_means_none(value):
    assert enabled("toolreg-sqlite", **{PLUGINS: value}) == NotAdmitted(
        "disabled", f"not listed in {PLUGINS}"
    )


def test_toolreg_plugins_takes_precedence_over_plugins_enabled():
    cfg = config('[plugins]\nenabled = ["toolreg-sqlite"]')
    env = {PLUGINS: "toolreg-audit"}
    assert enabled("toolreg-audit", cfg, **env) is None
    assert enabled("toolreg-sqlite", cfg, **env) == NotAdmitted(
        "disabled", f"not listed in {PLUGINS}"
    )


def test_plugins_enabled_when_present_is_an_allowlist():
    cfg = config('[plugins]\nenabled = ["Toolreg_SQLite"]')
    assert enabled("toolreg-sqlite", cfg) is None
    assert enabled("toolreg-audit", cfg) == NotAdmitted("disabled", "not listed in plugins.enabled")
    nothing = config("[plugins]\nenabled = []")
    assert enabled("toolreg-sqlite", nothing) == NotAdmitted(
        "disabled", "not listed in plugins.enabled"
    )


def test_plugins_disabled_wins_over_every_enabling_switch():
    cfg = config('[plugins]\nenabled = ["toolreg-sqlite"]\ndisabled = ["TOOLREG_sqlite"]')
    expected = NotAdmitted("disabled", "listed in plugins.disabled")
    assert enabled("toolreg-sqlite", cfg) == expected
    assert enabled("toolreg-sqlite", cfg, **{PLUGINS: "toolreg-sqlite"}) == expected
    assert enabled("toolreg-audit", config('[plugins]\ndisabled = ["toolreg-sqlite"]')) is None


def test_check_enabled_reads_the_environ_it_is_given(monkeypatch):
    monkeypatch.setenv(KILL, "1")
    monkeypatch.setenv(PLUGINS, "")
    assert check_enabled("toolreg-sqlite", DEFAULT, {}) is None


def test_local_plugin_with_an_underscore_can_be_listed_in_toolreg_plugins():
    # canonicalize_name("local:my_tool") == "local:my-tool"; LocalPlugin.plugin_id keeps "_".
    assert enabled("local:my_tool", **{PLUGINS: "local:my_tool"}) is None


def test_local_plugin_with_an_underscore_can_be_disabled():
    # Fails open: the operator's "disabled" entry is silently ignored and the file loads.
    cfg = config('[plugins]\ndisabled = ["local:my_tool"]')
    assert enabled("local:my_tool", cfg) == NotAdmitted("disabled", "listed in plugins.disabled")


def test_entry_for_a_local_plugin_with_an_underscore_applies():
    cfg = config('[plugins.entries."local:My_Tool"]\nallow_tool_override = true\n')
    assert cfg.plugins.entry("local:My_Tool").allow_tool_override is True


# -- check_compatible --------------------------------------------------------------------------


def compatible(
    requires: str | None, toolreg: str = "0.1.0", version: str = "1.0", cfg: Config = DEFAULT
) -> NotAdmitted | None:
    return check_compatible("toolreg-x", version, requires, toolreg, cfg)


@pytest.mark.parametrize(
    "requires", [None, "", "toolreg", "toolreg>=0.1,<0.2", "toolreg==0.1.*", "toolreg[cli]>=0.1"]
)
def test_requirement_satisfied(requires):
    assert compatible(requires) is None


@pytest.mark.parametrize(
    ("requires", "spec"),
    [("toolreg>=99", ">=99"), ("toolreg <0.1", "<0.1"), ("toolreg~=0.2", "~=0.2")],
)
def test_requirement_not_satisfied_names_both_versions(requires, spec):
    assert compatible(requires) == NotAdmitted(
        "incompatible", f"requires toolreg{spec}, but toolreg 0.1.0 is installed"
    )


@pytest.mark.parametrize(
    "requires", ['toolreg>=99; python_version < "3"', 'toolreg>=99; extra == "server"']
)
def test_requirement_whose_marker_does_not_apply_is_ignored(requires):
    assert compatible(requires) is None


def test_requirement_whose_marker_applies_is_checked():
    verdict = compatible('toolreg>=99; python_version >= "3"')
    assert verdict is not None and verdict.status == "incompatible" and ">=99" in verdict.reason


def test_unreadable_requirement_is_incompatible():
    verdict = compatible("toolreg >>> 1")
    assert verdict is not None and verdict.status == "incompatible"
    assert verdict.reason.startswith("unreadable requirement 'toolreg >>> 1': ")


@pytest.mark.parametrize(
    ("toolreg", "requires", "ok"),
    [
        ("0.2.0rc1", "toolreg>=0.1", True),  # a prerelease toolreg is a toolreg
        ("0.2.0rc1", "toolreg>=0.2", False),  # ... but not yet the release
        ("0.2.0.dev3", "toolreg>=0.1,<0.3", True),
        ("1.0.0b1", "toolreg<1", False),
    ],
)
def test_prerelease_toolreg(toolreg, requires, ok):
    assert (compatible(requires, toolreg=toolreg) is None) is ok


PIN = config('[plugins.entries.Toolreg_X]\nversion = ">=1.0,<2"\n')


@pytest.mark.parametrize("version", ["1.0", "1.9.9", "1.5b2", "1.0.post1"])
def test_operator_pin_inside(version):
    assert compatible(None, version=version, cfg=PIN) is None


@pytest.mark.parametrize("version", ["0.9", "2.0", "2.0a1", "not-a-version"])
def test_operator_pin_outside_names_the_key(version):
    verdict = compatible(None, version=version, cfg=PIN)
    assert verdict is not None and verdict.status == "incompatible"
    assert verdict.reason == (
        f"version {version} is outside the operator pin {PIN.plugins.entry('toolreg-x').version} "
        "(plugins.entries.toolreg-x.version)"
    )


def test_operator_pin_applies_only_to_its_own_pack():
    assert check_compatible("toolreg-y", "5.0", None, "0.1.0", PIN) is None


def test_pack_requirement_is_checked_before_the_pin():
    verdict = compatible("toolreg>=99", version="5.0", cfg=PIN)
    assert verdict is not None and "requires toolreg>=99" in verdict.reason
    pinned = compatible("toolreg>=0.1", version="5.0", cfg=PIN)
    assert pinned is not None and "operator pin" in pinned.reason


# -- check_namespaces --------------------------------------------------------------------------


def test_reserved_namespaces_are_exactly_these():
    assert {"toolreg", "builtin_tools", "toolreg_local"} == RESERVED_PACK_NAMESPACES


@pytest.mark.parametrize("namespace", sorted(RESERVED_PACK_NAMESPACES))
def test_reserved_namespace_is_refused(namespace):
    error = check_namespaces("toolreg-evil", ["evil_pack", namespace], {})
    assert isinstance(error, PermissionError)
    assert str(error) == f"pack 'toolreg-evil' claims the reserved module namespace {namespace!r}"


def test_another_packs_namespace_is_refused():
    claimed = {"toolreg_sqlite": "toolreg-sqlite"}
    error = check_namespaces("toolreg-squatter", ["toolreg_sqlite"], claimed)
    assert isinstance(error, PermissionError)
    assert "claims module namespace 'toolreg_sqlite'" in str(error)
    assert "belongs to pack 'toolreg-sqlite'" in str(error)


def test_free_or_own_namespaces_are_fine():
    claimed = {"toolreg_sqlite": "toolreg-sqlite"}
    assert check_namespaces("toolreg-sqlite", ["toolreg_sqlite"], claimed) is None
    assert (
        check_namespaces("toolreg-new", ["toolreg_new", "toolregx", "toolreg_x"], claimed) is None
    )
    assert check_namespaces("toolreg-none", [], claimed) is None


# A plain "name specifiers" requirement is read without packaging's requirement
# grammar; the answer must be the one the grammar gives, for any string.
REQUIREMENT_PIECES = st.sampled_from(
    [
        "toolreg-core", "toolreg", "toolreg_", " ", "\t", "\n", ",", ";", "@", "[cli]", "(", ")",
        ">=", "<", "==", "!=", "~=", "===", ">", "<=", " >= ", "0.1", "0.1.0", "99", "1.*",
        "0.2.0rc1", "1+local", "x", 'python_version >= "3"', "extra == 's'", "file:///x",
    ]
)  # fmt: skip


# Mostly plain requirements, with a tail that may make them something else.
PLAIN_LIKE = st.builds(
    lambda name, specs, comma, tail: name + comma.join(specs) + tail,
    st.sampled_from(["toolreg-core", "toolreg-core ", "\ttoolreg", "toolreg_core"]),
    st.lists(
        st.builds(
            str.__add__,
            st.sampled_from([">=", "<", "==", "!=", "~=", "===", " > ", "<= "]),
            st.sampled_from(["0.1", "0.2.0rc1", "1.*", "1+local", "0", "99", "v1", "1.0-"]),
        ),
        max_size=3,
    ),
    st.sampled_from([",", ", ", " ,", ",,", " "]),
    st.sampled_from(["", " ", "\t", ",", "\n", ";", ' ; python_version >= "3"', " x"]),
)


@settings(max_examples=600, deadline=None)
@given(st.one_of(st.lists(REQUIREMENT_PIECES, min_size=1, max_size=8).map("".join), PLAIN_LIKE))
def test_a_plain_requirement_is_judged_as_the_full_grammar_judges_it(requires):
    for toolreg in ("0.1.0", "0.2.0rc1"):
        fast = admission._check_requirement.__wrapped__(requires, toolreg)
        full = admission._check_full_requirement(requires, toolreg)
        assert (fast is None) == (full is None), (requires, fast, full)
        if fast is not None and not full.reason.startswith("unreadable"):
            assert fast == full


def test_a_plain_requirement_does_not_import_the_requirement_grammar():
    code = (
        "import sys; from toolreg import Config;"
        "from toolreg._policy.admission import check_compatible;"
        "assert check_compatible('x', '1', 'toolreg-core>=0.1,<9', '0.1.0', Config()) is None;"
        "assert check_compatible('x', '1', 'toolreg-core>=9', '0.1.0', Config()) is not None;"
        "print(sorted(m for m in sys.modules if m.startswith('packaging.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "packaging.requirements" not in out.stdout and "packaging.specifiers" in out.stdout


# -- check_entry_modules -----------------------------------------------------------------------

STDLIB_FILE = admission.os.path.realpath(admission.os.__file__)


def entry_check(chain, files, editable=False, module="x_pack"):
    return admission.check_entry_modules(
        "toolreg-x", "toolreg-x", [("x", module, chain)], files, editable
    )


def test_an_entry_module_its_record_lists_is_admitted(tmp_path):
    init, mod = str(tmp_path / "x_pack" / "__init__.py"), str(tmp_path / "x_pack" / "m.py")
    chain = [("x_pack", "file", init), ("x_pack.m", "file", mod)]
    assert entry_check(chain, frozenset({init, mod}), module="x_pack.m") is None
    # A folder runs no code; a missing module fails the import by itself.
    assert entry_check([("ns", "namespace", ""), ("ns.m", "file", mod)], frozenset({mod})) is None
    assert entry_check([("gone", "missing", "")], frozenset()) is None


@pytest.mark.parametrize(
    ("chain", "why"),
    [
        ([("threading", "file", STDLIB_FILE)], f"its code, {STDLIB_FILE}, is not"),
        ([("sys", "elsewhere", "built-in")], "it is built-in, not"),
        ([("zipped", "elsewhere", "")], "it is not a file, not"),
    ],
)
def test_an_entry_module_its_record_does_not_list_is_refused(chain, why):
    error = entry_check(chain, frozenset(), module=chain[0][0])
    assert isinstance(error, PermissionError)
    assert str(error) == (
        f"pack 'toolreg-x': entry point 'x' names module {chain[0][0]!r}, and importing it "
        f"runs module {chain[0][0]!r}, but {why} among the files distribution 'toolreg-x' "
        "installed (its RECORD); a pack's entry points name its own modules, never the "
        "standard library's or another distribution's"
    )


def test_every_package_the_import_runs_must_be_the_packs(tmp_path):
    """A module planted in another pack's package runs that package's __init__."""
    theirs, mine = str(tmp_path / "other" / "__init__.py"), str(tmp_path / "other" / "mine.py")
    chain = [("other", "file", theirs), ("other.mine", "file", mine)]
    error = entry_check(chain, frozenset({mine}), module="other.mine")
    assert "importing it runs module 'other'" in str(error)


def test_without_a_record_only_the_library_is_refused(tmp_path):
    """An editable install or a distribution with no RECORD: its RECORD cannot say."""
    import sysconfig

    checkout = str(tmp_path / "x_pack" / "__init__.py")
    assert entry_check([("x_pack", "file", checkout)], None) is None
    assert entry_check([("x_pack", "file", checkout)], None, editable=True) is None
    assert "'threading'" in str(
        entry_check([("threading", "file", STDLIB_FILE)], None, module="threading")
    )
    site_file = admission.os.path.join(sysconfig.get_paths()["purelib"], "pluggy", "__init__.py")
    assert entry_check([("pluggy", "file", site_file)], None) is None, "a RECORD-less dist's code"
    refused = entry_check([("pluggy", "file", site_file)], None, editable=True, module="pluggy")
    assert isinstance(refused, PermissionError), "an editable pack's code is its checkout's"
