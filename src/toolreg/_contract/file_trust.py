"""When a file toolreg reads for the operator may have been written by someone else.

Caches and the lock file follow one rule, as pip and ssh do: another user's file,
or one that group or others may write, is not believed.
"""

from __future__ import annotations

import os
import stat


def untrusted(st: os.stat_result) -> tuple[str, str] | None:
    """``(rule, reason)`` when a file with this stat may have been written by someone else."""
    if os.name == "nt" or not hasattr(os, "geteuid"):
        return None  # Windows: ACLs, not mode bits; not checked
    me = os.geteuid()
    if st.st_uid != me:
        return "owner", f"owned by uid {st.st_uid}, not by this user (uid {me}); remove it"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        mode = stat.S_IMODE(st.st_mode)
        return "mode", f"writable by group or others (mode {mode:#o}); run chmod go-w on it"
    return None
