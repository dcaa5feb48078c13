"""Which files a distribution installed: its ``RECORD``, as real paths.

A pack's identity is the code its distribution put on disk, so the policy gate
needs the exact file list. Editable installs record a ``.pth`` or a finder
instead of the sources; for those the caller falls back to the directories of
the pack's module namespace.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

logger = logging.getLogger("toolreg.plugins")

#: Suffixes whose code objects carry the file as ``co_filename``.
_CODE_SUFFIXES = (".py", ".pyw")


@dataclass(frozen=True)
class InstalledSources:
    #: Real paths of the Python sources the RECORD lists.
    files: frozenset[str] = frozenset()
    #: Top-level modules those sources make up (``pkg`` for ``pkg/x.py``).
    top_level: frozenset[str] = frozenset()

    def covers(self, namespace: str) -> bool:
        """Whether the RECORD holds the namespace's code (not an editable install)."""
        return namespace in self.top_level


def installed_sources(dist_info: str) -> InstalledSources:
    """The Python sources a distribution's RECORD lists; empty when it has none."""
    try:
        import importlib_metadata as metadata
    except ImportError:  # pragma: no cover - a dependency, but stay usable without it
        import importlib.metadata as metadata  # type: ignore[no-redef]
    from pathlib import Path

    try:
        listed = metadata.PathDistribution(Path(dist_info)).files or []
    except Exception as exc:  # an unreadable RECORD: treated as "no file list"
        logger.debug("Cannot read RECORD of %s: %s", dist_info, exc)
        return InstalledSources()
    files, tops = set(), set()
    for file in listed:
        if not file.name.endswith(_CODE_SUFFIXES):
            continue
        # Files outside site-packages (``../``, data and scripts) are the pack's too.
        files.add(os.path.realpath(file.locate()))
        if ".." not in file.parts:
            tops.add(file.parts[0] if len(file.parts) > 1 else file.stem)
    return InstalledSources(frozenset(files), frozenset(tops))
