"""``toolreg -V``: this toolreg's version and every installed tool pack's, from metadata.

The packs are read the way the loader finds them (their ``toolreg.tools``
entry points), and none is imported: asking for versions must not run a pack's
code, and works when a pack is broken.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, NoReturn


def version_text() -> str:
    """``toolreg X.Y.Z (...)`` and one line per installed tool pack."""
    # Only -V pays for these: the parser is built on every command.
    import platform

    from toolreg import __version__

    from .._discovery.dist_info import DISTRIBUTION
    from .._discovery.entrypoints import find_packs

    python = f"{platform.python_implementation()} {platform.python_version()}"
    lines = [f"toolreg {__version__} ({DISTRIBUTION}, {python}, {sys.executable})"]
    packs = find_packs()
    if not packs:
        lines.append("no tool packs installed (entry-point group toolreg.tools)")
        return "\n".join(lines)
    lines.append(f"tool packs ({len(packs)}):")
    width = max(len(pack.plugin_id) for pack in packs)
    lines += [f"  {pack.plugin_id.ljust(width)}  {pack.version or '?'}" for pack in packs]
    return "\n".join(lines)


class VersionAction(argparse.Action):
    """Like argparse's ``version`` action, but the text is read only when asked for."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        kwargs.setdefault(
            "help", "print toolreg's and the installed tool packs' versions, then exit"
        )
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> NoReturn:
        print(version_text())
        parser.exit()
