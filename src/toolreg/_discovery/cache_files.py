"""Where toolreg's discovery caches live, and when their files may be believed at all.

A cache is only an optimisation: one that cannot be used means "scan again", and one
someone else could have written is neither read nor written into, recorded for
``toolreg doctor``. The rules: docs/security.md, "Caches".
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import threading
from typing import Any

from .._contract.file_trust import untrusted

_log = logging.getLogger("toolreg.discovery")

# (file, rule) -> the problem, as doctor shows it; one entry and one warning each.
_problems: dict[tuple[str, str], dict[str, str]] = {}
_problems_lock = threading.Lock()


def cache_dir() -> str:
    """Return the cache directory: ``$TOOLREG_CACHE_DIR`` or the platform's user cache dir."""
    override = os.environ.get("TOOLREG_CACHE_DIR")
    if override:
        return override
    home = os.path.expanduser("~")
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
        return os.path.join(base, "toolreg", "Cache")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Caches", "toolreg")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")
    return os.path.join(base, "toolreg")


def cache_file(name: str, what: str) -> str | None:
    """The path of cache file ``name``, or None when the environment has no usable cache dir."""
    # expanduser or a strange environment could fail; that must not break discovery.
    try:
        return os.path.join(cache_dir(), name)
    except Exception as exc:
        _log.debug("toolreg %s disabled: %s", what, exc)
        return None


def get_cache_problems() -> list[dict[str, str]]:
    """Each cache file this process distrusted: ``{"cache", "file", "rule", "reason"}``."""
    with _problems_lock:
        return [dict(p) for p in _problems.values()]


def distrust(what: str, path: str, rule: str, reason: str) -> None:
    """Record that cache ``what`` at ``path`` broke ``rule``; warn once per file and rule."""
    with _problems_lock:
        if (path, rule) in _problems:
            return
        _problems[(path, rule)] = {"cache": what, "file": path, "rule": rule, "reason": reason}
    _log.warning("Ignoring toolreg %s %s: %s", what, path, reason)


def _trusted_path(what: str, path: str) -> bool:
    """False when ``path`` exists and is not safe to read from or write into."""
    try:
        st = os.stat(path)
    except OSError:
        return True  # missing: reading finds nothing, writing creates it privately
    problem = untrusted(st)
    if problem is not None:
        distrust(what, path, *problem)
        return False
    return True


def read_json(path: str, what: str) -> Any:
    """The JSON in cache file ``path``, or None when it is missing, unusable or distrusted."""
    if not _trusted_path(what, os.path.dirname(path)):
        return None
    try:
        with open(path, "rb") as f:
            # fstat of the open file: the one that was checked is the one read.
            problem = untrusted(os.fstat(f.fileno()))
            if problem is not None:
                distrust(what, path, *problem)
                return None
            return json.load(f)
    except FileNotFoundError:
        return None
    except Exception as exc:  # bad JSON, bad encoding, permissions, a directory, ...
        _log.debug("Ignoring unreadable toolreg %s %s: %s", what, path, exc)
        return None


def write_json_atomic(path: str, data: object, *, what: str) -> None:
    """Write JSON via a private temp file and ``os.replace``, so readers never see half a file.

    Nothing is written into a distrusted folder or over a distrusted file. Failure
    only costs the cache: it is logged at DEBUG and never raised.
    """
    # tempfile pulls in random/shutil; only the cold path (something changed) pays for it.
    import tempfile

    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        if not (_trusted_path(what, directory) and _trusted_path(what, path)):
            return
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".toolreg-", suffix=".tmp")  # 0600
    except Exception as exc:
        _log.debug("Cannot write toolreg %s in %s: %s", what, directory, exc)
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, separators=(",", ":"))
        os.replace(tmp, path)
    except Exception as exc:
        _log.debug("Cannot write toolreg %s %s: %s", what, path, exc)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
