"""``--help`` points only at what an installed toolreg has."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from pack_cli import run
from toolreg.cli import _help


@pytest.mark.parametrize(
    "argv", [["--help"], ["serve", "--help"], ["completion", "--help"], ["install", "--help"]]
)
def test_help_names_no_repository_file(capsys, argv):
    code, out, _ = run(capsys, *argv)
    assert code == 0
    assert not re.search(r"\b[\w./-]+\.md\b", out), out
    if argv[0] in ("--help", "serve"):  # the epilogs
        assert out.rstrip().endswith("the library's reference: python -m pydoc toolreg")


def test_the_pydoc_it_names_works():
    done = subprocess.run(
        [sys.executable, "-m", "pydoc", "toolreg"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "tool registry" in done.stdout.lower()


def test_once_a_docs_url_is_set_each_epilog_names_its_page(monkeypatch):
    monkeypatch.setattr(_help, "DOCS_URL", "https://docs.example/toolreg/")
    assert _help.more_help("mcp") == "Documentation: https://docs.example/toolreg/mcp"
