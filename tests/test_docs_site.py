"""The documentation site: it builds with --strict, documents every public name,
and the host guide's code runs as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import toolreg
from dists import REPO


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    # --strict turns every warning into a failure: a broken link or anchor, a
    # page left out of the nav, a name mkdocstrings cannot resolve.
    assert built.returncode == 0, built.stderr
    return out


def test_the_api_page_documents_every_public_name(site: Path) -> None:
    page = (site / "api" / "index.html").read_text(encoding="utf-8")
    # An undocumented name is left off the page (show_if_no_docstring is off).
    # The names that need the mcp extra are outside __all__ but public all the same.
    names = [*toolreg.__all__, "McpManager", "ReconnectPolicy"]
    missing = [name for name in names if f'id="toolreg.{name}"' not in page]
    assert not missing
    assert ":class:" not in page and ":func:" not in page  # roles shown as code


def test_every_guide_is_reachable_from_the_home_page(site: Path) -> None:
    home = (site / "index.html").read_text(encoding="utf-8")
    guides = sorted(p.stem for p in (REPO / "docs" / "guides").glob("*.md"))
    assert guides and all(f'href="guides/{guide}/"' in home for guide in guides)


def test_the_host_guide_runs_as_written(tmp_path: Path) -> None:
    text = (REPO / "docs" / "guides" / "hosts.md").read_text(encoding="utf-8")
    (code,) = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    check = textwrap.dedent(
        """
        assert definitions and all(d["type"] == "function" for d in definitions)
        assert '"timezone": "UTC"' in result and not toolreg.is_tool_error(result)
        print("ran")
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLREG_")}
    env["TOOLREG_CACHE_DIR"] = str(tmp_path / "cache")
    ran = subprocess.run(
        [sys.executable, "-c", f"import toolreg\n{code}{check}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines()[-1] == "ran"


#: An import of toolreg code in Python: ``import toolreg.x`` or ``from toolreg.x import y``.
IMPORT = re.compile(r"^\s*(?:from|import)\s+(toolreg(?:\.\w+)*)", flags=re.MULTILINE)


def code_shown() -> dict[str, str]:
    """Every code block of the docs and the README, and every example script, by where it is."""
    shown: dict[str, str] = {}
    for page in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for n, block in enumerate(re.findall(r"^ *```[^\n]*\n(.*?)^ *```", text, re.M | re.S)):
            shown[f"{page.relative_to(REPO)} block {n + 1}"] = block
    for script in sorted((REPO / "docs" / "examples").glob("*.py")):
        shown[str(script.relative_to(REPO))] = script.read_text(encoding="utf-8")
    return shown


def test_the_code_the_docs_show_imports_no_private_module() -> None:
    shown = code_shown()
    imports = {(where, name) for where, code in shown.items() for name in IMPORT.findall(code)}
    private = sorted(
        (where, name)
        for where, name in imports
        if any(part.startswith("_") for part in name.split("."))
    )
    assert not private, private
    assert "toolreg.serve" in {name for _, name in imports}  # the embedding example was read
