"""Confine the file and terminal tools to one workspace directory.

The root is ``$TOOLREG_WORKSPACE`` when set, else the current directory. It is
read on every call rather than at import, so a host (or a test) can point the
tools somewhere else without re-importing them.
"""

from __future__ import annotations

import os
from pathlib import Path

WORKSPACE_ENV = "TOOLREG_WORKSPACE"


class WorkspaceError(ValueError):
    """A path the tools must not touch: outside the root, missing, or malformed."""


def workspace_root() -> Path:
    """The resolved workspace root (symlinks such as macOS's /tmp followed)."""
    raw = os.environ.get(WORKSPACE_ENV) or os.getcwd()
    root = Path(raw).expanduser().resolve()
    if not root.is_dir():
        raise WorkspaceError(f"workspace root {raw!r} (from ${WORKSPACE_ENV}) is not a directory")
    return root


def is_inside(resolved: Path, root: Path) -> bool:
    """Whether a fully resolved path is ``root`` itself or somewhere below it."""
    return resolved == root or root in resolved.parents


def resolve_in_workspace(path: str, *, must_exist: bool) -> Path:
    """Resolve ``path`` against the workspace root and refuse anything that escapes it.

    Relative paths are taken from the root. The result has every symlink resolved,
    so ``..``, absolute paths and links pointing outside are all caught by the
    same containment check. (A link swapped between this check and the use of the
    path is not guarded against; the workspace is a convenience fence, not a
    sandbox.)
    """
    if not isinstance(path, str) or not path.strip():
        raise WorkspaceError("path must be a non-empty string")
    if "\x00" in path:
        raise WorkspaceError(f"path {path!r} contains a NUL byte")
    root = workspace_root()
    # Expanding "~" means "~/x" is refused as outside the workspace instead of
    # silently creating a directory literally named "~".
    candidate = Path(path).expanduser()
    if not candidate.is_absolute():
        candidate = root / candidate
    # Non-strict resolve still follows links (even dangling ones), which is what
    # stops a write through a link to a not-yet-existing file outside the root.
    resolved = candidate.resolve()
    if not is_inside(resolved, root):
        raise WorkspaceError(f"path {path!r} is outside the workspace root {str(root)!r}")
    if must_exist and not resolved.exists():
        raise WorkspaceError(f"path {path!r} does not exist")
    return resolved


def display_path(resolved: Path, root: Path | None = None) -> str:
    """How a resolved path is shown to the model: relative to the root, with '/'.

    Pass ``root`` when it is already at hand: finding it again resolves the whole
    root path, which costs more than the rest of this function.
    """
    if root is None:
        root = workspace_root()
    try:
        rel = resolved.relative_to(root)
    except ValueError:
        return str(resolved)
    return rel.as_posix() or "."
