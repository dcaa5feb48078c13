"""``--help`` points only at what an install has: the published docs, or ``toolreg docs``."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dists import REPO
from pack_cli import run
from toolreg.cli import _help
from toolreg.cli._app import build_parser


@pytest.mark.parametrize(
    "argv", [["--help"], ["serve", "--help"], ["completion", "--help"], ["install", "--help"]]
)
def test_help_names_no_repository_file(capsys, argv):
    code, out, _ = run(capsys, *argv)
    assert code == 0
    assert not re.search(r"\b[\w./-]+\.md\b", out), out
    if argv[0] in ("--help", "serve"):  # the epilogs, each naming its page
        page = "cli" if argv[0] == "--help" else "mcp"
        assert f"More: toolreg docs {page} (toolreg docs lists every page);" in out
        assert out.rstrip().endswith("the library's reference: python -m pydoc toolreg")


@pytest.mark.parametrize("columns", ["100", "37", "0", "wide", None])
def test_help_is_as_wide_as_argparse_makes_it(monkeypatch, columns):
    # The width is asked without shutil; it must be the width shutil gives.
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert _help.terminal_columns() == shutil.get_terminal_size().columns
    subcommands = build_parser("list")._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    listing = subcommands["list"]
    ours = listing.format_help()
    listing.formatter_class = argparse.HelpFormatter
    assert ours == listing.format_help()


def test_the_pydoc_it_names_works():
    done = subprocess.run(
        [sys.executable, "-m", "pydoc", "toolreg"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "tool registry" in done.stdout.lower()


@pytest.mark.parametrize("page", ["cli", "mcp"])
def test_the_page_it_names_is_printed_by_toolreg_docs(capsys, page):
    code, out, _ = run(capsys, "docs", page)
    assert code == 0
    assert out == (REPO / "docs" / f"{page}.md").read_text(encoding="utf-8")


def test_toolreg_docs_lists_each_page_with_its_title(capsys):
    code, out, _ = run(capsys, "docs")
    assert code == 0
    assert re.search(r"^formats +Definition formats$", out, re.M)
    assert re.search(r"^guides/operators +Guide: operators$", out, re.M)
    assert not re.search(r"^api ", out, re.M), "the site's API page is pydoc's here"


def test_an_unknown_page_is_a_usage_error_listing_the_pages(capsys):
    code, _, err = run(capsys, "docs", "nowhere")
    assert code == 2
    assert "no documentation page 'nowhere'" in err and "formats" in err


def fake_distribution(root: Path, *project_urls: str) -> Path:
    """A toolreg-core dist-info with these Project-URLs, on a path that goes first."""
    info = root / "toolreg_core-0.0.0.dist-info"
    info.mkdir(parents=True)
    urls = "".join(f"Project-URL: {url}\n" for url in project_urls)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.4\nName: toolreg-core\nVersion: 0.0.0\n{urls}"
    )
    return root


def help_with(path: Path, *argv: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(path)}
    done = subprocess.run(
        [sys.executable, "-m", "toolreg", *argv, "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_documentation_url_in_the_metadata_is_linked_per_page(tmp_path):
    path = fake_distribution(
        tmp_path, "Source, https://src.example/toolreg", "Documentation, https://docs.example/t/"
    )
    assert help_with(path).rstrip().endswith("Documentation: https://docs.example/t/cli")
    assert help_with(path, "serve").rstrip().endswith("Documentation: https://docs.example/t/mcp")


def test_without_one_help_points_to_the_shipped_pages(tmp_path):
    path = fake_distribution(tmp_path, "Homepage, https://home.example/")
    assert "More: toolreg docs cli" in help_with(path)


@pytest.mark.parametrize("label", ["Documentation", "docs", "DOCUMENTATION", "Docs."])
def test_the_label_is_read_as_pep_753_normalises_it(monkeypatch, tmp_path, label):
    monkeypatch.syspath_prepend(str(fake_distribution(tmp_path, f"{label}, https://docs.example")))
    _help.documentation_url.cache_clear()
    try:
        assert _help.more_help("cli") == "Documentation: https://docs.example/cli"
    finally:
        _help.documentation_url.cache_clear()


def test_a_mistyped_page_gets_the_closest(capsys):
    code, _, err = run(capsys, "docs", "clii")
    assert code == 2
    assert "no documentation page 'clii'; did you mean 'cli'? the pages:" in err


@pytest.mark.parametrize(
    ("argv", "closest"),
    [
        (["lsit"], "list"),
        (["config", "chek"], "check"),
        (["list", "--format", "anthropc"], "anthropic"),
    ],
)
def test_a_mistyped_command_or_choice_gets_the_closest(capsys, argv, closest):
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert f"did you mean {closest!r}?" in err
