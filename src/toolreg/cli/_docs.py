"""``toolreg docs [PAGE]``: the documentation pages shipped in the wheel, as markdown.

The wheel carries ``docs/*.md`` and ``docs/guides/*.md`` as ``toolreg/_docs``,
so a pip user has the reference ``--help`` points to without a network or a
checkout. In a checkout the pages are read from ``docs/`` itself.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ._errors import EXIT_USAGE, CliError
from ._help import did_you_mean

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

#: Where the wheel puts the pages, inside the toolreg package.
SHIPPED = "_docs"
#: Subfolders whose pages are listed as ``folder/page``.
_FOLDERS = ("guides",)
#: The site's API page is generated from the docstrings: ``python -m pydoc toolreg`` here.
_SITE_ONLY = frozenset({"api.md"})


def add_docs_parser(sub: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    """The ``docs`` subcommand's arguments."""
    p = sub.add_parser(
        "docs",
        parents=[parent],
        help="print a documentation page (without PAGE: list them)",
        description="Print a page of toolreg's documentation as markdown, or list the pages.",
    )
    p.add_argument("page", metavar="PAGE", nargs="?", help="a page's name, e.g. cli or formats")


def cmd_docs(args: argparse.Namespace) -> int:
    folder = docs_folder()
    if folder is None:
        raise CliError("the documentation pages are not installed with this toolreg")
    pages = list_pages(folder)
    if args.page is None:
        width = max(map(len, pages), default=0)
        for name, page in pages.items():
            print(f"{name:<{width}}  {_title(page)}")
        print("\ntoolreg docs PAGE prints one.")
        return 0
    page = pages.get(args.page.removesuffix(".md"))
    if page is None:
        raise CliError(
            f"no documentation page {args.page!r}"
            f"{did_you_mean(args.page.removesuffix('.md'), list(pages)) or ';'}"
            f" the pages: {', '.join(pages)}",
            EXIT_USAGE,
        )
    sys.stdout.write(page.read_text(encoding="utf-8"))
    return 0


def docs_folder() -> Traversable | None:
    """The installed pages, or a checkout's ``docs/``; None when there are neither."""
    from importlib.resources import files  # only this command reads files by path
    from pathlib import Path

    shipped = files("toolreg").joinpath(SHIPPED)
    if shipped.is_dir():
        return shipped
    # src/toolreg/cli/_docs.py -> the checkout's docs/, next to src/
    checkout = Path(__file__).resolve().parents[3] / "docs"
    if (checkout / "cli.md").is_file() and (checkout.parent / "src" / "toolreg").is_dir():
        return checkout
    return None


def list_pages(folder: Traversable) -> dict[str, Traversable]:
    """``{name: page}``, top-level pages first, each group by name."""
    pages = {p.name.removesuffix(".md"): p for p in _markdown(folder)}
    for sub in _FOLDERS:
        if folder.joinpath(sub).is_dir():
            for p in _markdown(folder.joinpath(sub)):
                pages[f"{sub}/{p.name.removesuffix('.md')}"] = p
    return pages


def _markdown(folder: Traversable) -> list[Traversable]:
    pages = [p for p in folder.iterdir() if p.name.endswith(".md") and p.name not in _SITE_ONLY]
    return sorted(pages, key=lambda p: p.name)


def _title(page: Traversable) -> str:
    """The page's first heading."""
    with page.open(encoding="utf-8") as text:
        for line in text:
            if line.startswith("# "):
                return line[2:].strip()
    return ""
