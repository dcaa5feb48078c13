"""Where ``--help`` sends a reader for more: only places a pip install really has."""

from __future__ import annotations

#: The public documentation's base URL; None until it is published. Set it here
#: and every epilog points at the page for its command.
DOCS_URL: str | None = None


def more_help(page: str) -> str:
    """The epilog's last line: the published page if there is one, else what ships.

    ``page`` is the documentation page's name without ``.md`` (``cli``, ``mcp``).
    """
    if DOCS_URL:
        return f"Documentation: {DOCS_URL.rstrip('/')}/{page}"
    return "More: toolreg COMMAND --help; the library's reference: python -m pydoc toolreg"
