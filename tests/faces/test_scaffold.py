"""``toolreg new``: a pack project that builds, installs, passes its own tests and loads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolreg.cli import main
from toolreg.cli._scaffold import toolreg_requirement

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

FILES = [
    ".gitignore",
    "LICENSE",
    "README.md",
    "pyproject.toml",
    "src/toolreg_weather/__init__.py",
    "tests/test_toolreg_weather.py",
]


def files_under(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_new_writes_the_project(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new", "toolreg-weather", "--dir", str(tmp_path)]) == 0
    project = tmp_path / "toolreg-weather"
    assert files_under(project) == FILES
    out = capsys.readouterr().out
    assert out.startswith(f"Created tool pack toolreg-weather in {project}:\n")
    assert all(f"  {name}\n" in out for name in FILES)
    assert 'python -m pip install -e ".[test]"' in out and "python -m pytest" in out

    meta = tomllib.loads((project / "pyproject.toml").read_text())
    assert meta["build-system"]["build-backend"] == "hatchling.build"
    assert meta["project"]["requires-python"] == ">=3.10"
    assert meta["project"]["dependencies"] == ["toolreg-core>=0.1,<0.2"]
    assert meta["project"]["license"] == "MIT" and meta["project"]["license-files"] == ["LICENSE"]
    assert meta["project"]["urls"]["Homepage"] == "https://pypi.org/project/toolreg-weather/"
    assert meta["project"]["entry-points"]["toolreg.tools"] == {"weather": "toolreg_weather"}
    init = (project / "src/toolreg_weather/__init__.py").read_text()
    assert "@tool(toolset=TOOLSET)\ndef weather_hello(name: str) -> str:" in init
    assert 'TOOLSET = "weather"' in init
    readme = (project / "README.md").read_text()
    assert "python -m build" in readme and "twine upload dist/*" in readme
    # toolreg-core is not on PyPI yet: the README says how to get it from a checkout.
    assert "pip install path/to/checkout" in readme


def test_new_into_an_existing_empty_dir(tmp_path: Path) -> None:
    (tmp_path / "acme-tools").mkdir()
    assert main(["new", "acme-tools", "--dir", str(tmp_path)]) == 0
    init = (tmp_path / "acme-tools/src/acme_tools/__init__.py").read_text()
    assert 'TOOLSET = "acme-tools"' in init and "def acme_tools_hello(" in init


def test_new_defaults_to_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["new", "toolreg-weather"]) == 0
    assert files_under(tmp_path / "toolreg-weather") == FILES


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("bad name", "'bad name' is not a valid distribution name"),
        ("pack-", "'pack-' is not a valid distribution name"),
        ("my.pack", "its module name 'my.pack' is not a Python identifier"),
        ("1pack", "its module name '1pack' is not a Python identifier"),
        ("toolreg", "its module 'toolreg' is a namespace reserved by toolreg"),
        ("builtin-tools", "its module 'builtin_tools' is a namespace reserved by toolreg"),
        ("toolreg_local", "its module 'toolreg_local' is a namespace reserved by toolreg"),
        ("json", "its module 'json' would shadow the standard library's"),
        (
            "setuptools",
            "its module 'setuptools' would shadow the one the installed distribution "
            "setuptools provides; choose another name (e.g. 'toolreg-setuptools')",
        ),
        ("pytest", "would shadow the one the installed distribution pytest provides"),
        ("builtin", "'builtin' is an owner label toolreg reserves for its own tools"),
        ("toolreg-core", "it is toolreg's own distribution name"),
        ("Toolreg_Core", "it is toolreg's own distribution name"),
        ("Host", "'host' is an owner label toolreg reserves for its own tools"),
        ("p" * 60, "would exceed the 64 characters providers allow in a tool name"),
    ],
)
def test_unusable_names_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, message: str
) -> None:
    assert main(["new", name, "--dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("toolreg: error: ") and message in err
    assert err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_a_name_already_importable_is_refused_and_an_empty_folder_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # An editable install lists no files: the module is found on sys.path instead.
    found = tmp_path / "on_path"
    (found / "acme_widgets").mkdir(parents=True)
    (found / "acme_widgets" / "__init__.py").write_text("")
    (found / "acme_gadgets").mkdir()  # no __init__.py: a namespace folder, not a module
    monkeypatch.syspath_prepend(str(found))
    out = tmp_path / "out"
    out.mkdir()
    assert main(["new", "acme-widgets", "--dir", str(out)]) == 2
    err = capsys.readouterr().err
    assert "its module 'acme_widgets' would shadow a module of that name that is already" in err
    assert list(out.iterdir()) == []
    assert main(["new", "acme-gadgets", "--dir", str(out)]) == 0


def test_non_empty_target_exits_2_and_keeps_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "toolreg-weather"
    target.mkdir()
    (target / "notes.txt").write_text("mine")
    assert main(["new", "toolreg-weather", "--dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert (
        err == f"toolreg: error: {target} exists and is not empty; choose another name or --dir\n"
    )
    assert files_under(target) == ["notes.txt"]


def test_requirement_is_the_current_minor_series() -> None:
    assert toolreg_requirement("0.1.0") == "toolreg-core>=0.1,<0.2"
    assert toolreg_requirement("1.4.2") == "toolreg-core>=1.4,<1.5"
    assert toolreg_requirement("2") == "toolreg-core>=2.0,<2.1"


# What an author writes first: a second tool, and nothing changed in the tests.
SECOND_TOOL = '''

@tool(toolset=TOOLSET)
def weather_forecast(city: str, days: int = 3) -> str:
    """Forecast the weather.

    Args:
        city: Where.
        days: How many days ahead.
    """
    return f"{city}: sunny for {days} days"
'''


def test_scaffold_with_a_tool_added_installs_passes_its_tests_and_loads(
    pack_venv_to_change, tmp_path: Path
) -> None:
    pack_venv = pack_venv_to_change
    assert main(["new", "toolreg-weather", "--dir", str(tmp_path / "src")]) == 0
    project = tmp_path / "src" / "toolreg-weather"
    with (project / "src/toolreg_weather/__init__.py").open("a") as init:
        init.write(SECOND_TOOL)
    wheels = tmp_path / "wheels"
    # Built with this venv's hatchling (the session venv has none), installed like
    # a pack from PyPI; its one dependency, toolreg, is already there.
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--wheel-dir", str(wheels), str(project)],
        check=True,
    )  # fmt: skip
    pip = [str(pack_venv.python), "-m", "pip", "--disable-pip-version-check", "--quiet"]
    subprocess.run([*pip, "install", "--no-deps", *map(str, wheels.glob("*.whl"))], check=True)
    try:
        done = subprocess.run(
            [str(pack_venv.python), "-m", "pytest", "-q", "-p", "no:cacheprovider"],
            capture_output=True, text=True, env=pack_venv.env(), cwd=project, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
        assert "5 passed" in done.stdout

        listed = pack_venv.run("list", "--json", TOOLREG_PLUGINS="toolreg-weather")
        assert listed.returncode == 0, listed.stderr
        tools = {item["name"]: item for item in json.loads(listed.stdout)}
        assert tools["weather_hello"]["owner"] == "toolreg-weather"
        assert tools["weather_hello"]["toolset"] == "weather"
        assert tools["weather_forecast"]["owner"] == "toolreg-weather"
        called = pack_venv.run(
            "call", "weather_hello", '{"name": "Ada"}', TOOLREG_PLUGINS="toolreg-weather"
        )
        assert (called.returncode, called.stdout.strip()) == (0, "Hello, Ada!")
    finally:
        # The session venv is shared: leave it as the other pack tests expect it.
        subprocess.run([*pip, "uninstall", "--yes", "toolreg-weather"], check=True)


def test_new_refuses_a_name_in_the_mcp_toolset_space(tmp_path, capsys):
    from toolreg.cli import main

    assert main(["new", "toolreg-mcp-foo", "--dir", str(tmp_path)]) == 2
    assert "belong to MCP servers" in capsys.readouterr().err
    assert not (tmp_path / "toolreg-mcp-foo").exists()
