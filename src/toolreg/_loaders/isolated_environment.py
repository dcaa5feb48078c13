"""The environment and working directory an isolated pack's process starts with.

Minimal on purpose: the parent's secrets stay in the parent unless the operator
names them in ``[plugins.entries.<id>] env``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

WORKSPACE_ENV = "TOOLREG_WORKSPACE"
MINIMAL = ("PATH", "HOME", "LANG")
#: What the child's Python and toolreg need, passed when the parent has them.
PYTHON_NEEDS = ("PYTHONPATH", "PYTHONHOME", "TOOLREG_CACHE_DIR") + (
    ("SYSTEMROOT",) if sys.platform == "win32" else ()
)


def workspace(environ: Mapping[str, str] | None = None) -> Path:
    """``$TOOLREG_WORKSPACE``, else the current directory, resolved."""
    environ = os.environ if environ is None else environ
    return Path(environ.get(WORKSPACE_ENV) or os.getcwd()).expanduser().resolve()


def child_environment(
    listed: Iterable[str], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The variables an isolated pack's process starts with (the spec is added by the caller)."""
    environ = os.environ if environ is None else environ
    names = (*MINIMAL, *PYTHON_NEEDS, *listed)
    env = {name: environ[name] for name in names if name in environ}
    env[WORKSPACE_ENV] = str(workspace(environ))
    return env


def keep_only(names: Iterable[str], environ: os._Environ[str] | None = None) -> None:
    """Remove every variable not in ``names`` from this process's environment."""
    environ = os.environ if environ is None else environ
    keep = set(names)
    for name in list(environ):
        if name not in keep:
            del environ[name]
