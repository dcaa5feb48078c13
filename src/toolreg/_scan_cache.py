"""On-disk cache of "does this file register tools?" verdicts for built-in discovery.

Parsing every tool module with :mod:`ast` on each start-up would cost more than
importing them, so verdicts are remembered in one small JSON file, keyed by the
resolved file path and checked against the file's ``(st_mtime_ns, st_size)``::

    {"/abs/dir/web.py": [1717000000123456789, 2048, true], ...}

The cache is an optimisation only: a missing, corrupt, unreadable or unwritable
cache means "scan again", is logged at DEBUG, and never raises.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence

_log = logging.getLogger("toolreg.discovery")

#: Bump the version in the name if the verdict rules or the format change, so an
#: old cache is simply ignored instead of being trusted.
CACHE_FILE_NAME = "scan-v1.json"


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


def cache_path() -> str:
    """Return the full path of the verdict cache file."""
    return os.path.join(cache_dir(), CACHE_FILE_NAME)


def verdicts(
    directory: str,
    files: Sequence[tuple[str, os.stat_result]],
    scan: Callable[[str], bool],
) -> list[bool]:
    """Return ``scan(path)`` for each ``(name, stat)`` in ``directory``, reusing cached verdicts.

    ``directory`` must already be resolved. Only files whose ``(mtime_ns, size)``
    differ from the cache are scanned; entries for files of ``directory`` that are
    no longer listed are pruned, entries of other directories are kept. The cache
    file is rewritten only when something changed.
    """
    path = _safe_cache_path()
    entries = _load(path) if path else {}
    changed = False
    result: list[bool] = []
    listed: set[str] = set()
    for name, st in files:
        file_path = os.path.join(directory, name)
        listed.add(file_path)
        hit = entries.get(file_path)
        # Validate per entry rather than up front: a bad entry costs one rescan,
        # not the whole cache.
        if (
            type(hit) is list
            and len(hit) == 3
            and hit[0] == st.st_mtime_ns
            and hit[1] == st.st_size
            and type(hit[2]) is bool
        ):
            result.append(hit[2])
            continue
        verdict = scan(file_path)
        entries[file_path] = [st.st_mtime_ns, st.st_size, verdict]
        changed = True
        result.append(verdict)

    prefix = os.path.join(directory, "")
    stale = [
        key
        for key in entries
        if key.startswith(prefix) and key not in listed and os.sep not in key[len(prefix) :]
    ]
    for key in stale:
        del entries[key]
    if path and (changed or stale):
        _save(path, entries)
    return result


def _safe_cache_path() -> str | None:
    # expanduser or a strange environment could fail; that must not break discovery.
    try:
        return cache_path()
    except Exception as exc:
        _log.debug("toolreg scan cache disabled: %s", exc)
        return None


def _load(path: str) -> dict[str, object]:
    """Read the cache file; anything unusable yields an empty cache."""
    try:
        with open(path, "rb") as f:
            data = json.load(f)
    except FileNotFoundError:
        return {}
    except Exception as exc:  # bad JSON, bad encoding, permissions, a directory, ...
        _log.debug("Ignoring unreadable toolreg scan cache %s: %s", path, exc)
        return {}
    if not isinstance(data, dict):
        _log.debug("Ignoring toolreg scan cache %s: not a JSON object", path)
        return {}
    return data


def _save(path: str, entries: dict[str, object]) -> None:
    write_json_atomic(path, entries, what="scan cache")


def write_json_atomic(path: str, data: object, *, what: str) -> None:
    """Write JSON via a temp file and ``os.replace``, so readers never see half a file.

    Failure only costs the cache: it is logged at DEBUG and never raised.
    """
    # tempfile pulls in random/shutil; only the cold path (something changed) pays for it.
    import tempfile

    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".toolreg-", suffix=".tmp")
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
