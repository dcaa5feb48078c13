"""Finding installed tool packs: distributions with entry points in ``toolreg.tools``.

Asking :mod:`importlib.metadata` means importing it and reading an
``entry_points.txt`` per installed distribution on every start-up, so the answer
is remembered in one JSON file next to the scan cache (``packs-v1.json``). Like
stevedore's cache, an entry is keyed by a hash of the search path: every path
entry in order and, for each directory, its own ``st_mtime_ns`` plus the name and
``st_mtime_ns`` of each ``*.dist-info``, ``*.egg-info`` and ``*.pth`` in it, the
group and the Python version. Installing, removing or upgrading a distribution
renames or creates such an entry (or touches the directory), which changes the
key. Up to :data:`_MAX_KEYS` keys are kept, most recent first, so switching
between virtualenvs does not thrash::

    {"keys": [[key, [[plugin_id, distribution, version, [[ep_name, ep_value], ...],
                      requires_toolreg, dist_info_path], ...],
               [[dist_info_path, problem], ...]], ...]}

A hit costs a directory listing and a ``stat`` per metadata entry: it imports
neither ``importlib.metadata`` nor ``packaging`` and opens only the cache file.
A missing, corrupt, unreadable or unwritable cache means "scan again", is logged
at DEBUG, and never raises.
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._scan_cache import cache_dir, write_json_atomic

try:  # hashlib would load OpenSSL (a few ms at start-up) for one small digest.
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - CPython always has it
    from hashlib import blake2b

_log = logging.getLogger("toolreg.discovery")

GROUP = "toolreg.tools"

#: Bump the version in the name if the record or key rules change, so an old cache
#: is simply ignored instead of being trusted.
CACHE_FILE_NAME = "packs-v1.json"
_MAX_KEYS = 8
_METADATA_SUFFIXES = (".dist-info", ".egg-info", ".pth")
_REQUIREMENT_NAME = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")


@dataclass(frozen=True)
class PackRecord:
    """One installed tool pack, as far as its metadata tells (nothing is imported)."""

    plugin_id: str  # packaging.utils.canonicalize_name(distribution)
    distribution: str  # Name: from METADATA, as written
    version: str
    entry_points: tuple[tuple[str, str], ...]  # (name, value) in the group, sorted
    requires_toolreg: str | None  # the Requires-Dist string naming toolreg, if any
    path: str  # the dist-info directory

    @property
    def namespaces(self) -> tuple[str, ...]:
        """Sorted unique top-level packages of the entry-point values (``"a.b:c"`` -> ``"a"``)."""
        tops = {
            re.split(r"[.:\[\s]", value.strip(), maxsplit=1)[0] for _, value in self.entry_points
        }
        tops.discard("")
        return tuple(sorted(tops))


def find_packs(
    group: str = GROUP, *, path: Sequence[str] | None = None, use_cache: bool = True
) -> list[PackRecord]:
    """Installed distributions with entry points in ``group``, sorted by plugin_id.

    ``path`` defaults to ``sys.path``. Where a distribution is installed twice, the
    first one on the path wins. A broken distribution is skipped with a WARNING.
    """
    entries = [os.fsdecode(entry) for entry in (sys.path if path is None else path)]
    if not use_cache:
        return _scan(group, entries)[0]

    cache_file = _safe_cache_file()
    # The key is taken before scanning: an install racing the scan can only make
    # the stored key stale (one extra rescan later), never hide the new pack.
    key = _safe_fingerprint(group, entries) if cache_file else None
    stored: list[Any] = []
    if cache_file and key:
        stored = _load(cache_file)
        for index, item in enumerate(stored):
            if type(item) is list and len(item) == 3 and item[0] == key:
                hit = _decode(item[1], item[2])
                if hit is None:
                    _log.debug("Ignoring malformed toolreg pack cache entry in %s", cache_file)
                    break
                packs, problems = hit
                _warn(problems)
                if index:  # keep the most recent first, so eviction drops the oldest
                    _save(cache_file, [item, *stored[:index], *stored[index + 1 :]])
                return packs

    packs, problems = _scan(group, entries)
    if cache_file and key:
        records = [
            [p.plugin_id, p.distribution, p.version, p.entry_points, p.requires_toolreg, p.path]
            for p in packs
        ]
        rest = [i for i in stored if type(i) is list and len(i) == 3 and i[0] != key]
        _save(cache_file, [[key, records, problems], *rest][:_MAX_KEYS])
    return packs


def _fingerprint(group: str, entries: Sequence[str]) -> str:
    """Hash what an install, removal or upgrade on ``entries`` would change."""
    parts = ["packs-v1", group, sys.version, sys.implementation.cache_tag or ""]
    for entry in entries:
        directory = entry or "."  # importlib.metadata reads "" as the current directory
        parts.append("\0" + (entry or os.getcwd()))
        try:
            st = os.stat(directory)
        except OSError:
            parts.append("missing")
            continue
        parts.append(str(st.st_mtime_ns))
        if not stat.S_ISDIR(st.st_mode):
            continue  # a zip on the path: its own mtime covers its contents
        found = []
        try:
            with os.scandir(directory) as it:
                for child in it:
                    if child.name.lower().endswith(_METADATA_SUFFIXES):
                        try:
                            found.append(f"{child.name}\0{child.stat().st_mtime_ns}")
                        except OSError:  # a dangling symlink, or removed meanwhile
                            found.append(f"{child.name}\0?")
        except OSError:
            parts.append("unlistable")
        found.sort()  # listing order is not guaranteed stable
        parts.extend(found)
    data = "\n".join(parts).encode("utf-8", "surrogateescape")
    return blake2b(data, digest_size=16).hexdigest()


def _safe_fingerprint(group: str, entries: Sequence[str]) -> str | None:
    try:
        return _fingerprint(group, entries)
    except Exception as exc:  # a strange path entry must not break discovery
        _log.debug("toolreg pack cache disabled: %s", exc)
        return None


def _scan(group: str, entries: list[str]) -> tuple[list[PackRecord], list[list[str]]]:
    """Read the packs from distribution metadata (the slow path); return packs and problems."""
    # Imported here so the warm path never pays for them.
    try:
        import importlib_metadata as metadata
    except ImportError:  # pragma: no cover - a dependency, but stay usable without it
        import importlib.metadata as metadata  # type: ignore[no-redef]
    from packaging.utils import canonicalize_name

    claimed: set[str] = set()
    packs: dict[str, PackRecord] = {}
    problems: list[list[str]] = []
    for dist in metadata.distributions(path=entries):
        location = str(getattr(dist, "_path", "") or dist)
        try:
            # The first distribution of a name wins, as in distribution(name); the
            # dist-info directory name tells the name without reading METADATA.
            claim = canonicalize_name(getattr(dist, "_normalized_name", None) or dist.name)
            if claim in claimed:
                continue
            claimed.add(claim)
            eps = tuple(
                sorted((ep.name, ep.value) for ep in dist.entry_points if ep.group == group)
            )
            if not eps:
                continue
            meta = dist.metadata
            name, version = meta.get("Name"), meta.get("Version")
            if not name or not version:
                raise ValueError("METADATA has no Name or Version (missing or unreadable?)")
            record = PackRecord(
                plugin_id=canonicalize_name(name),
                distribution=name,
                version=version,
                entry_points=eps,
                requires_toolreg=_requires_toolreg(meta.get_all("Requires-Dist") or []),
                path=location,
            )
        except Exception as exc:
            problems.append([location, f"{type(exc).__name__}: {exc}"])
            continue
        packs.setdefault(record.plugin_id, record)
    _warn(problems)
    return [packs[pid] for pid in sorted(packs)], problems


def _requires_toolreg(requirements: Sequence[str]) -> str | None:
    """Return the first requirement naming ``toolreg`` itself (not ``toolregistry``)."""
    from packaging.utils import canonicalize_name

    for requirement in requirements:
        match = _REQUIREMENT_NAME.match(requirement)
        if match and canonicalize_name(match.group(1)) == "toolreg":
            return requirement.strip()
    return None


def _warn(problems: Sequence[Sequence[str]]) -> None:
    # Replayed on cache hits too, so a broken pack keeps being reported until fixed.
    for location, problem in problems:
        _log.warning("Skipping broken distribution %s: %s", location, problem)


def _decode(records: Any, problems: Any) -> tuple[list[PackRecord], list[list[str]]] | None:
    """Rebuild cached records; ``None`` if anything has the wrong shape."""
    if type(records) is not list or type(problems) is not list:
        return None
    packs = []
    for r in records:
        if not (
            type(r) is list
            and len(r) == 6
            and all(type(v) is str for v in (r[0], r[1], r[2], r[5]))
            and (r[4] is None or type(r[4]) is str)
            and type(r[3]) is list
        ):
            return None
        eps = tuple(tuple(ep) for ep in r[3])
        if not all(len(ep) == 2 and type(ep[0]) is str and type(ep[1]) is str for ep in eps):
            return None
        packs.append(PackRecord(r[0], r[1], r[2], eps, r[4], r[5]))
    if not all(type(p) is list and len(p) == 2 for p in problems):
        return None
    return packs, problems


def _safe_cache_file() -> str | None:
    # expanduser or a strange environment could fail; that must not break discovery.
    try:
        return os.path.join(cache_dir(), CACHE_FILE_NAME)
    except Exception as exc:
        _log.debug("toolreg pack cache disabled: %s", exc)
        return None


def _load(path: str) -> list[Any]:
    """Read the cached keys; anything unusable yields none."""
    try:
        with open(path, "rb") as f:
            data = json.load(f)
    except FileNotFoundError:
        return []
    except Exception as exc:  # bad JSON, bad encoding, permissions, a directory, ...
        _log.debug("Ignoring unreadable toolreg pack cache %s: %s", path, exc)
        return []
    keys = data.get("keys") if isinstance(data, dict) else None
    if type(keys) is not list:
        _log.debug("Ignoring toolreg pack cache %s: unexpected layout", path)
        return []
    return keys


def _save(path: str, keys: list[Any]) -> None:
    write_json_atomic(path, {"keys": keys}, what="pack cache")
