"""On-disk cache of "does this file register tools?" verdicts for built-in discovery.

A cached "registers nothing" is not believed (:func:`verdicts` returns it as ``None``),
so no cache content can hide a module that registers (docs/security.md, "Caches").
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence

from .cache_files import cache_file, distrust, read_json, write_json_atomic

#: Bump the version in the name if the verdict rules or the format change, so an
#: old cache is simply ignored instead of being trusted. Keyed by the resolved path,
#: checked against the file's ``(st_mtime_ns, st_size)``::
#:
#:     {"/abs/dir/web.py": [1717000000123456789, 2048, true], ...}
CACHE_FILE_NAME = "scan-v1.json"
_WHAT = "scan cache"
_log = logging.getLogger("toolreg.discovery")


def cache_path() -> str | None:
    """Return the full path of the verdict cache file (None if there is no cache dir)."""
    return cache_file(CACHE_FILE_NAME, _WHAT)


def verdicts(
    directory: str,
    files: Sequence[tuple[str, os.stat_result]],
    scan: Callable[[str], bool],
) -> list[bool | None]:
    """Return ``scan(path)`` for each ``(name, stat)`` in ``directory``, reusing cached verdicts.

    ``directory`` must already be resolved. Only files whose ``(mtime_ns, size)``
    differ from the cache are scanned. A cached "registers nothing" comes back as
    ``None``: settle it with :func:`recheck` unless the module has run anyway.
    Entries for files of ``directory`` that are no longer listed are pruned,
    entries of other directories are kept. The cache file is rewritten only when
    something changed.
    """
    path = cache_path()
    entries = _load(path) if path else {}
    changed = False
    result: list[bool | None] = []
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
            result.append(True if hit[2] else None)
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


def recheck(
    directory: str,
    files: Sequence[tuple[str, os.stat_result]],
    scan: Callable[[str], bool],
) -> list[bool]:
    """Scan files whose cached verdict was "registers nothing"; return the real verdicts.

    A file that does register after all means the cache lied (or a file changed
    without its mtime and size changing): that is recorded for ``toolreg doctor``
    and the entry is corrected.
    """
    result = [scan(os.path.join(directory, name)) for name, _ in files]
    wrong = [(name, st) for (name, st), verdict in zip(files, result, strict=True) if verdict]
    path = cache_path()
    if wrong and path:
        names = ", ".join(name for name, _ in wrong)
        reason = f"its 'registers nothing' for {names} in {directory} was wrong; rescanned"
        distrust(_WHAT, path, "verdict", reason)
        entries = _load(path)
        for name, st in wrong:
            entries[os.path.join(directory, name)] = [st.st_mtime_ns, st.st_size, True]
        _save(path, entries)
    return result


def _load(path: str) -> dict[str, object]:
    """Read the cache file; anything unusable yields an empty cache."""
    data = read_json(path, _WHAT)
    if data is not None and not isinstance(data, dict):
        _log.debug("Ignoring toolreg scan cache %s: not a JSON object", path)
    return data if isinstance(data, dict) else {}


def _save(path: str, entries: dict[str, object]) -> None:
    write_json_atomic(path, entries, what=_WHAT)
