"""What a user gets from the wheels alone: a fresh venv, a local wheelhouse, no network.

toolreg-core and the example packs are installed with ``pip install --no-index
--find-links WHEELHOUSE``, the tools are listed, and a pack made by ``toolreg
new`` is built the way its README says (``python -m build``), passes ``twine
check``, installs and passes its own tests. Filling the wheelhouse with the
dependencies is the one step that reads the package index; everything after it
runs with the proxies pointed at a closed loopback port, so a download fails.

About a minute; deselect with ``-m "not install"`` (``make test-install`` runs
only this).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from dists import EXAMPLE_PACKS, PackVenv

pytestmark = pytest.mark.install

EXAMPLE_NAMES = [pack.name for pack in EXAMPLE_PACKS]
#: Besides toolreg and the packs: what the pack's tests and its build need.
TOOLING = ["pytest", "build", "hatchling>=1.21"]
NO_NETWORK = {"http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9"}


@dataclass(frozen=True)
class FreshVenv(PackVenv):
    """A venv that has only ever installed from ``wheelhouse``."""

    wheelhouse: Path

    def offline(self, **extra: str) -> dict[str, str]:
        # PIP_* reach the pip that `python -m build` runs for its isolated build env.
        return self.env(
            PIP_NO_INDEX="1",
            PIP_FIND_LINKS=str(self.wheelhouse),
            PIP_DISABLE_PIP_VERSION_CHECK="1",
            **NO_NETWORK,
            **extra,
        )

    def pip_install(self, *args: str) -> None:
        subprocess.run(
            [str(self.python), "-m", "pip", "install", "--quiet", *args],
            check=True,
            env=self.offline(),
            timeout=300,
        )

    def tools(self, cwd: Path) -> dict[str, str]:
        """``toolreg list --json`` as {tool: owner}."""
        done = self.run("list", "--json", cwd=cwd, **NO_NETWORK)
        assert done.returncode == 0, done.stderr
        return {tool["name"]: tool["owner"] for tool in json.loads(done.stdout)}


@pytest.fixture(scope="module")
def wheelhouse(pack_venv_built: PackVenv, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """toolreg-core and the example packs as built for the session, with their dependencies."""
    house = tmp_path_factory.mktemp("wheelhouse")
    built = pack_venv_built.root / "wheels"
    ours = [
        next(built.glob(f"{name.replace('-', '_')}-*.whl"))
        for name in ["toolreg-core", *EXAMPLE_NAMES]
    ]
    for wheel in ours:
        shutil.copy(wheel, house)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check",
         "--wheel-dir", str(house), *(str(house / w.name) for w in ours), *TOOLING],
        check=True,
        timeout=600,
    )  # fmt: skip
    return house


@pytest.fixture(scope="module")
def fresh(wheelhouse: Path, tmp_path_factory: pytest.TempPathFactory) -> FreshVenv:
    root = tmp_path_factory.mktemp("fresh")
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True)
    bindir = root / "venv" / ("Scripts" if os.name == "nt" else "bin")
    cache = root / "cache"
    cache.mkdir(mode=0o700)
    venv = FreshVenv(root, bindir / "python", bindir / "toolreg", cache, wheelhouse)
    venv.pip_install("toolreg-core", *EXAMPLE_NAMES, "pytest", "build")
    return venv


def test_core_and_the_example_packs_install_offline_and_list_their_tools(
    fresh: FreshVenv, tmp_path: Path
) -> None:
    owners = fresh.tools(cwd=tmp_path)
    for builtin in ("read_file", "write_file", "terminal", "http_request", "current_time"):
        assert owners.get(builtin) == "builtin", builtin
    assert owners["sqlite_query"] == "toolreg-sqlite"
    # The built-ins come from inside toolreg; nothing else was put at the top level.
    found = subprocess.run(
        [str(fresh.python), "-c", "import builtin_tools"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=fresh.offline(),
    )
    assert "No module named 'builtin_tools'" in found.stderr


def test_a_new_pack_builds_passes_twine_check_installs_and_passes_its_tests(
    fresh: FreshVenv, tmp_path: Path
) -> None:
    project = tmp_path / "toolreg-greeter"
    made = fresh.run("new", "toolreg-greeter", cwd=tmp_path)
    assert made.returncode == 0, made.stderr

    built = subprocess.run(
        [str(fresh.python), "-m", "build", "--outdir", str(project / "dist"), str(project)],
        capture_output=True,
        text=True,
        env=fresh.offline(),
        timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (sdist,) = (project / "dist").glob("*.tar.gz")
    (wheel,) = (project / "dist").glob("*.whl")
    dists = [sdist, wheel]
    checked = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, dists)],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr

    fresh.pip_install(str(wheel))
    assert fresh.tools(cwd=tmp_path)["greeter_hello"] == "toolreg-greeter"
    tested = subprocess.run(
        [str(fresh.python), "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        capture_output=True,
        text=True,
        cwd=project,
        env=fresh.offline(),
        timeout=300,
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert " passed" in tested.stdout and "failed" not in tested.stdout
