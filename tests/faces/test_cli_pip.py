"""``toolreg install`` / ``uninstall``: pip of toolreg's own interpreter, on real local wheels."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pack_cli import assert_one_line_error, run, tools
from toolreg.cli import main
from toolreg.cli._app import build_parser
from toolreg.cli._errors import CliError
from toolreg.cli._pip_commands import pip_install_argv, pip_uninstall_argv


def versions(venv) -> dict[str, str]:
    done = venv.run("-V")
    assert done.returncode == 0, done.stderr
    return dict(line.split() for line in done.stdout.splitlines()[2:])


@pytest.fixture
def pack_wheel(tmp_path: Path) -> Path:
    """A wheel of a fresh ``toolreg new`` pack, built here without network."""
    assert main(["new", "toolreg-installme", "--dir", str(tmp_path / "src")]) == 0
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--wheel-dir", str(wheels), str(tmp_path / "src" / "toolreg-installme")],
        check=True,
    )  # fmt: skip
    return next(wheels.glob("*.whl"))


def test_install_then_uninstall_a_pack_in_toolregs_own_environment(pack_venv_to_change, pack_wheel):
    pack_venv = pack_venv_to_change
    try:
        done = pack_venv.run("install", "--no-index", str(pack_wheel))
        assert done.returncode == 0, done.stderr
        assert "toolreg: tool pack toolreg-installme 0.1.0 installed" in done.stdout
        assert versions(pack_venv)["toolreg-installme"] == "0.1.0"
        listed = tools(pack_venv, "toolreg-installme")
        assert listed["installme_hello"]["owner"] == "toolreg-installme"

        # No question asked: pip would otherwise wait for an answer on stdin.
        done = pack_venv.run("uninstall", "toolreg-installme")
        assert done.returncode == 0, done.stderr
        assert "toolreg-installme" not in versions(pack_venv)
    finally:
        pip = [str(pack_venv.python), "-m", "pip", "--disable-pip-version-check", "--quiet"]
        subprocess.run([*pip, "uninstall", "--yes", "toolreg-installme"], check=False)


def test_install_of_something_that_is_no_pack_says_so(pack_venv):
    # Already installed, so pip changes nothing: no pack appeared or changed.
    done = pack_venv.run("install", "--no-index", "pytest")
    assert done.returncode == 0, done.stderr
    assert "no tool pack was added or changed" in done.stdout


def test_a_failing_pip_is_exit_1_naming_the_command(pack_venv, tmp_path):
    done = pack_venv.run("install", "--no-index", str(tmp_path / "nothing-here.whl"))
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith("toolreg: error: pip failed (exit ")


@pytest.mark.parametrize("name", ["toolreg-core", "Toolreg_Core", "toolreg.core"])
def test_uninstalling_toolreg_itself_is_refused_and_nothing_runs(pack_venv, name):
    done = pack_venv.run("uninstall", "toolreg-sqlite", name)
    assert done.returncode == 2
    assert_one_line_error(done.stderr, f"refusing to uninstall {name!r}: it is toolreg itself")
    assert "pip uninstall toolreg-core" in done.stderr
    assert "toolreg-sqlite" in versions(pack_venv)  # not even the other name was removed


def uninstall_argv(*names: str) -> list[str]:
    return pip_uninstall_argv(build_parser().parse_args(["uninstall", *names]))


@pytest.mark.parametrize(
    "name",
    ["toolreg-core>=0", "toolreg-core[mcp]", "Toolreg_Core [mcp] >= 0", "toolreg.core==1.*",
     "toolreg-core ; python_version > '3'", " toolreg-core"],
)  # fmt: skip
def test_uninstall_refuses_every_requirement_that_names_toolreg(name):
    with pytest.raises(CliError, match="it is toolreg itself") as refused:
        uninstall_argv("toolreg-sqlite", name)
    assert refused.value.code == 2


@pytest.mark.parametrize(
    "names",
    [("--", "--index-url", "http://evil.example/simple", "toolreg-sqlite"),
     ("--", "-r", "requirements.txt"), ("--", "-y"), ("--", "./some.whl"),
     ("--", "toolreg-x @ https://evil.example/x.whl")],
)  # fmt: skip
def test_uninstall_passes_no_option_to_pip(names):
    with pytest.raises(CliError, match="is not a distribution name") as refused:
        uninstall_argv(*names)
    assert refused.value.code == 2


def test_uninstall_gives_pip_names_only_after_a_double_dash():
    argv = uninstall_argv("toolreg-sqlite>=1", "toolreg_x[extra]", "Toolreg.Y")
    assert argv == [
        sys.executable, "-m", "pip", "uninstall", "--yes", "--",
        "toolreg-sqlite", "toolreg_x", "Toolreg.Y",
    ]  # fmt: skip


def test_uninstall_refusing_an_option_runs_nothing(capsys):
    code, _, err = run(capsys, "uninstall", "--", "--index-url", "http://evil.example/simple")
    assert code == 2
    assert_one_line_error(err, "'--index-url' is not a distribution name")


def test_install_passes_its_switches_to_pip():
    args = build_parser().parse_args(
        ["install", "-U", "--no-deps", "--pre", "-e", "./a", "-e", "./b", "-f", "wheels", "x"]
    )
    argv = pip_install_argv(args)
    assert argv[:4] == [sys.executable, "-m", "pip", "install"]
    assert argv[4:] == [
        "--upgrade", "--no-deps", "--pre", "--find-links", "wheels",
        "--editable", "./a", "--editable", "./b", "x",
    ]  # fmt: skip


def test_install_with_nothing_to_install_is_a_usage_error(capsys):
    code, _, err = run(capsys, "install")
    assert code == 2
    assert_one_line_error(err, "install needs at least one NAME or -e PATH")
