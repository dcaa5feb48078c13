"""``os.path.realpath`` for many files in few directories: each directory is resolved once.

Ownership resolves hundreds of paths (a pack's RECORD, the files on the stack)
under a few site-packages folders; a file then costs one ``lstat``.
"""

from __future__ import annotations

import os

# Directories remembered; a process has far fewer.
_LIMIT = 8192


class RealPaths:
    """A callable like ``os.path.realpath`` that remembers the directories it resolved."""

    def __init__(self) -> None:
        # Never looked at again: a directory that becomes a symlink after it was
        # resolved keeps its old answer. Replacing installed folders under a running
        # host is outside what the policy gate defends against (docs/security.md).
        self._directories: dict[str, str] = {}

    def __call__(self, path: str) -> str:
        # Only absolute POSIX paths in normal form (no ".", "..", "//"): a
        # relative one depends on the working directory, "x/.." means the parent
        # of what x resolves to, realpath has quirks of its own for the others,
        # and on other systems it also normalises case and drives.
        if (
            os.name != "posix"
            or not path.startswith("/")
            or path.startswith("//")
            or os.path.normpath(path) != path
        ):
            return os.path.realpath(path)
        return self._resolve(path)

    def _resolve(self, path: str) -> str:
        head, tail = os.path.split(path)
        if not tail:  # the root
            return os.path.realpath(path)
        directory = self._directories.get(head)
        if directory is None:
            directory = self._resolve(head)
            if len(self._directories) < _LIMIT:
                self._directories[head] = directory
        joined = os.path.join(directory, tail)
        return os.path.realpath(joined) if os.path.islink(joined) else joined
