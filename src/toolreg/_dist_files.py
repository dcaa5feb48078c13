"""Which files a distribution installed: its ``RECORD``, as real paths.

A pack's identity is the code its distribution put on disk, so the policy gate
needs the exact file list. Editable installs record a ``.pth`` or a finder
instead of the sources; for those the caller falls back to the directories of
the pack's module namespace.

``RECORD`` is read with :mod:`csv`, as :mod:`importlib.metadata` reads it:
importing that (or the ``importlib_metadata`` backport) costs 30-50 ms of
start-up that the warm path otherwise never pays.
"""

from __future__ import annotations

import csv
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
    if not dist_info:
        return InstalledSources()
    # One realpath for the directory: pip installs regular files (wheels hold
    # no symlinks), so each file's own path only needs normalising.
    base = os.path.realpath(os.path.dirname(dist_info))
    try:
        with open(os.path.join(dist_info, "RECORD"), encoding="utf-8", newline="") as f:
            paths = [row[0] for row in csv.reader(f) if row]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        logger.debug("Cannot read RECORD of %s: %s", dist_info, exc)
        return InstalledSources()
    files, tops = set(), set()
    for path in paths:
        if not path.endswith(_CODE_SUFFIXES):
            continue
        # Files outside site-packages (``../``, data and scripts) are the pack's too.
        files.add(os.path.normpath(os.path.join(base, path)))
        parts = path.replace("\\", "/").split("/")
        if ".." not in parts:
            tops.add(parts[0] if len(parts) > 1 else parts[0].rsplit(".", 1)[0])
    return InstalledSources(frozenset(files), frozenset(tops))
