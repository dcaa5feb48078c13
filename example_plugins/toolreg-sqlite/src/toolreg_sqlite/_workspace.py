"""Find a database file inside the workspace root with toolreg's workspace jail.

SQLite opens a file by name, so the jail's descriptor is only used to find the
file: the walk refuses ``..``, absolute paths and symlinks that leave the root,
and anything but a regular file, and the name handed to SQLite is the one it
walked, with every symlink already followed. A directory on that path swapped
for a link between the walk and SQLite's own open is not caught; the file is
opened read-only (see ``_db``), so the most that can leak is a read.
"""

from __future__ import annotations

import os
from pathlib import Path

from toolreg.workspace import WorkspaceError, open_regular_file, workspace_root

__all__ = ["WorkspaceError", "resolve_database"]


def resolve_database(path: str) -> Path:
    """The absolute path of ``path``, an existing regular file inside the workspace."""
    opened = open_regular_file(path)
    os.close(opened.fd)
    return workspace_root() / opened.rel
