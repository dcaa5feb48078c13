"""The environment and working directory an isolated pack's process starts with.

Minimal on purpose: the parent's secrets stay in the parent unless the operator
names them in ``[plugins.entries.<id>] env``. And the parent hides itself from
its children (:func:`hide_host_from_children`), who would otherwise read its
environment where Linux shows it to every process of the same user.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path

logger = logging.getLogger("toolreg.plugins")

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


#: ``prctl(2)`` options, from ``<linux/prctl.h>``.
PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4

_hide_lock = threading.Lock()
_hide_tried = False


def hide_host_from_children() -> None:
    """Make this process non-dumpable, once, before its first isolated pack starts.

    An isolated pack's process runs as the host's user, and Linux lets any
    process of a user read ``/proc/<pid>/environ`` and ``/proc/<pid>/mem`` of
    that user's dumpable processes: the host's whole environment (an API key,
    ``$TOOLREG_SERVE_TOKEN``) and memory. A non-dumpable process's ``/proc``
    files belong to root and it cannot be traced without ``CAP_SYS_PTRACE``.
    The flag is not inherited across ``exec``, so the packs' processes stay
    dumpable. It also ends the host's core dumps and a debugger's (py-spy's)
    attaching without root, so a host that isolates nothing keeps both.
    """
    global _hide_tried
    with _hide_lock:
        if _hide_tried:
            return
        _hide_tried = True
    failure = _make_non_dumpable()
    if failure is None:
        logger.debug(
            "This process is now non-dumpable: isolated packs cannot read its environment "
            "or memory through /proc; no core dumps, and attaching a debugger needs root"
        )
    else:
        logger.warning(
            "Could not make this process non-dumpable (%s): the processes of isolated packs "
            "run as the same user and can read its environment (secrets included) and memory",
            failure,
        )


def _make_non_dumpable() -> str | None:
    """Why ``prctl(PR_SET_DUMPABLE, 0)`` did not happen, or None when it did."""
    if not sys.platform.startswith("linux"):
        return f"prctl is Linux's, this is {sys.platform}"
    import ctypes  # only a host that starts an isolated pack pays for it

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
            return f"prctl: {os.strerror(ctypes.get_errno())}"
    except (OSError, AttributeError) as exc:  # no libc, or one without prctl
        return f"prctl: {exc}"
    return None
