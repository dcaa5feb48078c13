"""Find database files inside the workspace root, and refuse paths that leave it.

The root is ``$TOOLREG_WORKSPACE`` when set, else the current directory, read
on every call so a host (or a test) can move it without re-importing the pack.
This mirrors the built-in file tools' rule but is self-contained: a tool pack
should depend only on toolreg's public API.
"""

from __future__ import annotations

import os
from pathlib import Path

WORKSPACE_ENV = "TOOLREG_WORKSPACE"


class WorkspaceError(ValueError):
    """A database path the tools must not open: outside the root, missing, or malformed."""


def workspace_root() -> Path:
    """The workspace root with symlinks resolved."""
    raw = os.environ.get(WORKSPACE_ENV) or os.getcwd()
    root = Path(raw).expanduser().resolve()
    if not root.is_dir():
        raise WorkspaceError(f"workspace root {raw!r} (from ${WORKSPACE_ENV}) is not a directory")
    return root


def resolve_database(path: str) -> Path:
    """Resolve ``path`` against the workspace root; it must be an existing file inside it.

    Resolving every symlink first means ``..``, absolute paths and links that
    point outside are all caught by one containment check.
    """
    if not isinstance(path, str) or not path.strip():
        raise WorkspaceError("database must be a non-empty path")
    if "\x00" in path:
        raise WorkspaceError(f"database path {path!r} contains a NUL byte")
    root = workspace_root()
    candidate = Path(path).expanduser()
    if not candidate.is_absolute():
        candidate = root / candidate
    resolved = candidate.resolve()
    if root not in resolved.parents:
        raise WorkspaceError(f"database {path!r} is outside the workspace root {str(root)!r}")
    if not resolved.exists():
        # Said here, not left to SQLite: mode=ro never creates a file, and its own
        # message ("unable to open database file") does not say which file.
        raise WorkspaceError(f"database file {path!r} does not exist in the workspace")
    if not resolved.is_file():
        raise WorkspaceError(f"database {path!r} is not a file")
    return resolved
