"""Tests for built-in discovery: which files are imported, naming, and failure reporting."""

from __future__ import annotations

import ast
import importlib.util
import logging
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolreg import discover_builtin_tools, get_discovery_failures, registry
from toolreg._discovery import builtins as _discovery

REPO_ROOT = Path(__file__).resolve().parents[2]


def register_src(*names: str, toolset: str = "tdisc") -> str:
    """Source of a tool module that registers ``names`` at top level."""
    calls = "".join(
        f"registry.register({n!r}, {toolset!r}, _schema({n!r}), _handler)\n" for n in names
    )
    return HEADER + calls


HEADER = textwrap.dedent(
    """\
    from toolreg import registry


    def _handler(args, **kwargs):
        return "ok"


    def _schema(name):
        return {
            "name": name,
            "description": "test tool",
            "parameters": {"type": "object", "properties": {}},
        }


    """
)


def marker_src(marker: Path) -> str:
    """A line that proves the module's top level ran, by appending to ``marker``."""
    return f"with open({str(marker)!r}, 'a') as _f:\n    _f.write('ran\\n')\n"


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Private cache dir, clean failure state, and removal of test modules and tools.

    Yields a list; tests append the tool names they expect to be registered.
    """
    monkeypatch.setenv("TOOLREG_CACHE_DIR", str(tmp_path / "cache"))
    saved_failures = dict(_discovery._failures)
    modules_before = set(sys.modules)
    tools: list[str] = []
    yield tools
    for name in tools:
        if registry.get_entry(name) is not None:
            registry.deregister(name)
    for name in set(sys.modules) - modules_before:
        if name.startswith(("toolreg_ext_", "tdisc_pkg")):
            del sys.modules[name]
    _discovery._failures.clear()
    _discovery._failures.update(saved_failures)


@pytest.fixture
def tools_dir(tmp_path: Path) -> Path:
    """A tools dir exercising every kind of file discovery must tell apart."""
    d = tmp_path / "tools"
    d.mkdir()
    markers = tmp_path / "markers"
    markers.mkdir()
    (d / "__init__.py").write_text(marker_src(markers / "init"))
    (d / "registry.py").write_text(marker_src(markers / "registry") + register_src("tdisc_reg"))
    (d / "mcp_tool.py").write_text(marker_src(markers / "mcp") + register_src("tdisc_mcp"))
    (d / "a_top.py").write_text(marker_src(markers / "a_top") + register_src("tdisc_top"))
    (d / "b_loop.py").write_text(
        HEADER
        + "for _n in ('tdisc_loop_1', 'tdisc_loop_2'):\n"
        + "    registry.register(_n, 'tdisc', _schema(_n), _handler)\n"
    )
    (d / "c_in_function.py").write_text(
        marker_src(markers / "c_in_function")
        + HEADER
        + "def setup():\n"
        + "    registry.register('tdisc_fn', 'tdisc', _schema('tdisc_fn'), _handler)\n"
    )
    (d / "d_plain.py").write_text(marker_src(markers / "d_plain") + "VALUE = 1\n")
    (d / "e_broken.py").write_text(
        HEADER + "import tdisc_missing_dependency_xyz\n" + "registry.register('tdisc_never')\n"
    )
    (d / "f_nested.py").write_text(
        HEADER
        + "if True:\n    try:\n        registry.register('tdisc_nested', 'tdisc',"
        + " _schema('tdisc_nested'), _handler)\n    finally:\n        pass\n"
    )
    return d


def synthetic_name(directory: Path, stem: str) -> str:
    return f"{_discovery._synthetic_package(str(directory.resolve()))}.{stem}"


def test_imports_only_registering_modules(
    tools_dir: Path, isolated: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    expected_tools = ["tdisc_top", "tdisc_loop_1", "tdisc_loop_2", "tdisc_nested"]
    isolated.extend(expected_tools + ["tdisc_fn", "tdisc_reg", "tdisc_mcp"])
    caplog.set_level(logging.WARNING, logger="toolreg.discovery")

    names = discover_builtin_tools(tools_dir)

    assert names == [synthetic_name(tools_dir, s) for s in ("a_top", "b_loop", "f_nested")]
    for tool in expected_tools:
        assert registry.get_entry(tool) is not None, tool
    markers = tools_dir.parent / "markers"
    assert sorted(p.name for p in markers.iterdir()) == ["a_top"]
    assert registry.get_entry("tdisc_fn") is None
    assert registry.get_entry("tdisc_reg") is None

    broken = synthetic_name(tools_dir, "e_broken")
    assert "Could not import tool module" in caplog.text
    assert broken in caplog.text
    assert get_discovery_failures()[broken].startswith("ModuleNotFoundError: ")


def test_already_imported_module_is_listed_not_reexecuted(tmp_path: Path, isolated: list[str]):
    isolated.append("tdisc_once")
    d = tmp_path / "tools"
    d.mkdir()
    counter = tmp_path / "count"
    (d / "once.py").write_text(marker_src(counter) + register_src("tdisc_once"))

    first = discover_builtin_tools(str(d))
    second = discover_builtin_tools(d)

    assert first == second == [synthetic_name(d, "once")]
    assert counter.read_text() == "ran\n"


def test_failure_cleared_once_module_imports(tmp_path: Path, isolated: list[str]) -> None:
    isolated.append("tdisc_fixed")
    d = tmp_path / "tools"
    d.mkdir()
    mod = d / "flaky.py"
    mod.write_text(HEADER + "raise ImportError('not yet')\nregistry.register('x')\n")
    name = synthetic_name(d, "flaky")

    assert discover_builtin_tools(d) == []
    assert get_discovery_failures()[name] == "ImportError: not yet"

    mod.write_text(register_src("tdisc_fixed"))
    assert discover_builtin_tools(d) == [name]
    assert name not in get_discovery_failures()
    assert registry.get_entry("tdisc_fixed") is not None


def test_a_module_calling_sys_exit_is_a_failure_not_the_end(
    tmp_path: Path, isolated: list[str]
) -> None:
    isolated.append("tdisc_after_exit")
    d = tmp_path / "tools"
    d.mkdir()
    (d / "a_exits.py").write_text(HEADER + "import sys\nsys.exit(2)\nregistry.register('x')\n")
    (d / "b_fine.py").write_text(register_src("tdisc_after_exit"))

    assert discover_builtin_tools(d) == [synthetic_name(d, "b_fine")]
    assert get_discovery_failures()[synthetic_name(d, "a_exits")] == "SystemExit: 2"
    assert registry.get_entry("tdisc_after_exit") is not None


def test_a_module_that_fails_halfway_leaves_no_tools_and_the_rest_load(
    tmp_path: Path, isolated: list[str]
) -> None:
    """Each module's tools appear together: a module that raises after registering keeps none."""
    isolated.extend(["tdisc_half", "tdisc_whole"])
    d = tmp_path / "tools"
    d.mkdir()
    (d / "a_half.py").write_text(register_src("tdisc_half") + "raise RuntimeError('halfway')\n")
    (d / "b_whole.py").write_text(register_src("tdisc_whole"))

    assert discover_builtin_tools(d) == [synthetic_name(d, "b_whole")]
    assert get_discovery_failures()[synthetic_name(d, "a_half")] == "RuntimeError: halfway"
    assert registry.get_entry("tdisc_half") is None
    assert registry.get_entry("tdisc_whole") is not None


def test_syntax_error_reported_when_it_mentions_registry(tmp_path: Path) -> None:
    d = tmp_path / "tools"
    d.mkdir()
    (d / "bad.py").write_text("from toolreg import registry\nregistry.register(\n")
    (d / "bad_unrelated.py").write_text("def broken(:\n")

    assert discover_builtin_tools(d) == []

    failures = get_discovery_failures()
    assert failures[synthetic_name(d, "bad")].startswith("SyntaxError: ")
    assert synthetic_name(d, "bad_unrelated") not in failures


def test_relative_imports_work_in_synthetic_package(tmp_path: Path, isolated: list[str]):
    isolated.append("tdisc_rel")
    d = tmp_path / "tools"
    d.mkdir()
    (d / "_helper.py").write_text("TOOL = 'tdisc_rel'\n")
    (d / "uses_helper.py").write_text(
        HEADER
        + "from ._helper import TOOL\n"
        + "registry.register(TOOL, 'tdisc', _schema(TOOL), _handler)\n"
    )

    assert discover_builtin_tools(d) == [synthetic_name(d, "uses_helper")]
    assert registry.get_entry("tdisc_rel") is not None


def test_package_on_sys_path_uses_dotted_name(
    tmp_path: Path, isolated: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    isolated.append("tdisc_dotted")
    d = tmp_path / "tdisc_pkg_dotted"
    d.mkdir()
    (d / "__init__.py").write_text("")
    (d / "tool_mod.py").write_text(register_src("tdisc_dotted"))
    monkeypatch.syspath_prepend(str(tmp_path))

    assert discover_builtin_tools(d) == ["tdisc_pkg_dotted.tool_mod"]
    assert registry.get_entry("tdisc_dotted") is not None


def test_missing_dir_returns_empty(tmp_path: Path) -> None:
    assert discover_builtin_tools(tmp_path / "nope") == []


def test_default_dir_imports_builtin_tools() -> None:
    spec = importlib.util.find_spec("toolreg.builtin_tools")
    assert spec is not None and spec.submodule_search_locations
    default_dir = Path(list(spec.submodule_search_locations)[0])
    # In a checkout the package is the repository's builtin_tools/ folder.
    assert default_dir.resolve() == REPO_ROOT / "builtin_tools"
    tool_files = [
        p
        for p in sorted(default_dir.glob("*.py"))
        if p.name not in _discovery._SKIP and _discovery._file_registers_tools(str(p))
    ]
    assert tool_files

    tools_before = set(registry.get_all_tool_names())
    modules_before = set(sys.modules)
    try:
        names = discover_builtin_tools()
    finally:
        # Leave the singleton and sys.modules as other tests expect to find them.
        for tool in set(registry.get_all_tool_names()) - tools_before:
            registry.deregister(tool)
        for module in set(sys.modules) - modules_before:
            if module.startswith("toolreg.builtin_tools."):
                del sys.modules[module]

    assert names == [f"toolreg.builtin_tools.{p.stem}" for p in tool_files]


def test_the_builtins_folder_named_explicitly_keeps_their_one_module_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLREG_CACHE_DIR", str(tmp_path / "cache"))
    tools_before = set(registry.get_all_tool_names())
    modules_before = set(sys.modules)
    try:
        names = discover_builtin_tools(REPO_ROOT / "builtin_tools")
        new_modules = set(sys.modules) - modules_before
    finally:
        for tool in set(registry.get_all_tool_names()) - tools_before:
            registry.deregister(tool)
        for module in set(sys.modules) - modules_before:
            del sys.modules[module]
    assert names and all(n.startswith("toolreg.builtin_tools.") for n in names)
    # Not a second copy under a synthetic package, which would register them twice.
    assert not [m for m in new_modules if m.startswith("toolreg_ext_")]


DETECTED = {
    "top-level call": "registry.register('x', 't', {}, h)",
    "qualified call": "import toolreg\ntoolreg.registry.register('x', 't', {}, h)",
    "for loop": "for n in names:\n    registry.register(n, 't', {}, h)",
    "if block": "if X:\n    pass\nelse:\n    registry.register('x')",
    "try block": "try:\n    import y\nexcept ImportError:\n    registry.register('x')",
    "with block": "with ctx:\n    registry.register('x')",
    "comprehension": "[registry.register(n) for n in names]",
    "bare decorator": "@registry.tool\ndef f(args):\n    return ''",
    "called decorator": "@registry.tool(name='x', toolset='t')\ndef f(args):\n    return ''",
    "tool decorator": "@tool\ndef f(args):\n    return ''",
    "tool() decorator": "@tool(name='x')\nasync def f(args):\n    return ''",
    "toolreg.tool decorator": "@toolreg.tool(name='x')\ndef f(args):\n    return ''",
    "decorator in if": "if X:\n    @registry.tool\n    def f(args):\n        return ''",
}

NOT_DETECTED = {
    "no registry": "x = 1",
    "inside function": "def setup():\n    registry.register('x')",
    "inside class": "class C:\n    registry.register('x')",
    "method decorator": "class C:\n    @registry.tool\n    def f(self):\n        pass",
    "inside lambda": "f = lambda: registry.register('x')",
    "other register": "import atexit\natexit.register(print)",
    "other registry method": "registry.get_entry('x')",
    "other tool decorator": "@other.tool\ndef f():\n    pass",
    "nested def": "def outer():\n    @registry.tool\n    def f():\n        pass",
}


@pytest.mark.parametrize("source", DETECTED.values(), ids=DETECTED.keys())
def test_scan_detects(source: str) -> None:
    assert _discovery._tree_registers_tools(ast.parse(source))


@pytest.mark.parametrize("source", NOT_DETECTED.values(), ids=NOT_DETECTED.keys())
def test_scan_ignores(source: str) -> None:
    assert not _discovery._tree_registers_tools(ast.parse(source))


def test_scan_of_decorated_file(tmp_path: Path) -> None:
    f = tmp_path / "decorated.py"
    f.write_text(
        "from toolreg import registry\n\n@registry.tool(name='x')\ndef x(args):\n    pass\n"
    )
    assert _discovery._file_registers_tools(str(f))
