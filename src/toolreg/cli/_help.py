"""Where ``--help`` sends a reader for more: only places a pip install really has.

That is the ``Documentation`` Project-URL of the installed distribution when
its publisher set one, else the pages shipped inside it (``toolreg docs``).
The metadata is read only when help is printed: no other command pays for it.
"""

from __future__ import annotations

import argparse
import functools

#: The distribution whose metadata names the documentation.
DISTRIBUTION = "toolreg-core"
#: Project-URL labels that mean the documentation (PEP 753's normalised forms).
_DOCUMENTATION_LABELS = frozenset({"documentation", "docs"})


@functools.cache
def documentation_url() -> str | None:
    """The installed distribution's ``Documentation`` Project-URL, or None."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        entries = metadata(DISTRIBUTION).get_all("Project-URL") or []
    except PackageNotFoundError:  # running from a source tree that is not installed
        return None
    for entry in entries:
        label, _, url = entry.partition(",")
        normalised = "".join(c for c in label.lower() if c.isalnum())
        if normalised in _DOCUMENTATION_LABELS and url.strip():
            return url.strip()
    return None


def more_help(page: str) -> str:
    """The epilog's last line: the published page if there is one, else the shipped page.

    ``page`` is the documentation page's name without ``.md`` (``cli``, ``mcp``).
    """
    url = documentation_url()
    if url:
        return f"Documentation: {url.rstrip('/')}/{page}"
    return (
        f"More: toolreg docs {page} (toolreg docs lists every page);\n"
        "the library's reference: python -m pydoc toolreg"
    )


class Epilog(str):
    """An epilog's text, and the documentation page its last line points to when printed."""

    page: str

    def __new__(cls, text: str, page: str) -> Epilog:
        epilog = super().__new__(cls, text)
        epilog.page = page
        return epilog


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the text's own line breaks, and ends an :class:`Epilog` with :func:`more_help`."""

    def add_text(self, text: str | None) -> None:
        if isinstance(text, Epilog):
            text = f"{text}{more_help(text.page)}\n"
        super().add_text(text)
