"""Finding installed tool packs: distributions with entry points in ``toolreg.tools``.

The answer is cached, but every hit is checked against the metadata on disk, so no
cache content can hide a pack or change its identity (docs/security.md, "Caches").
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Sequence
from typing import Any, NamedTuple

from .cache_files import cache_file, distrust, read_json, write_json_atomic
from .dist_info import DistInfo, read_dist_info, read_file, requires_toolreg
from .metadata_listing import Listing, canonical, list_path

_log = logging.getLogger("toolreg.discovery")

GROUP = "toolreg.tools"

#: Bump the version in the name if the record or key rules change, so an old cache
#: is simply ignored instead of being trusted. Its layout, most recent key first::
#:
#:     {"keys": [[key, [[plugin_id, distribution, version, [[ep_name, ep_value], ...],
#:                       requires_toolreg, dist_info_path], ...]], ...]}
CACHE_FILE_NAME = "packs-v2.json"
#: Keys kept (one per search path), so switching between virtualenvs does not thrash.
_MAX_KEYS = 8
_WHAT = "pack cache"


# A NamedTuple, not a frozen dataclass: this module is imported on every start-up.
class PackRecord(NamedTuple):
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
    cache_path = cache_file(CACHE_FILE_NAME, _WHAT) if use_cache else None
    # The listing is taken before scanning: an install racing the scan can only
    # make the stored key stale (one extra rescan later), never hide the new pack.
    listing = _safe_listing(group, entries) if cache_path else None
    if listing is not None and listing.unverifiable:
        _log.debug("toolreg pack cache not used: %s", listing.unverifiable)
        listing = None
    stored: list[Any] = []
    if cache_path and listing:
        stored = _load(cache_path)
        for index, item in enumerate(stored):
            if type(item) is list and len(item) == 2 and item[0] == listing.key:
                packs = _decode(item[1])
                if packs is None:
                    _log.debug("Ignoring malformed toolreg pack cache entry in %s", cache_path)
                elif _served(cache_path, packs, listing, group):
                    if index:  # keep the most recent first, so eviction drops the oldest
                        _save(cache_path, [item, *stored[:index], *stored[index + 1 :]])
                    return sorted(packs, key=lambda p: p.plugin_id)
                break

    packs, problems = _scan(group, entries)
    # A scan that met a broken distribution is not cached: it warns on every start.
    if cache_path and listing and not problems:
        records = [
            [p.plugin_id, p.distribution, p.version, p.entry_points, p.requires_toolreg, p.path]
            for p in packs
        ]
        rest = [i for i in stored if type(i) is list and len(i) == 2 and i[0] != listing.key]
        _save(cache_path, [[listing.key, records], *rest][:_MAX_KEYS])
    return packs


def _safe_listing(group: str, entries: Sequence[str]) -> Listing | None:
    try:
        return list_path(group, entries)
    except Exception as exc:  # a strange path entry must not break discovery
        _log.debug("toolreg pack cache disabled: %s", exc)
        return None


def _served(cache_path: str, packs: list[PackRecord], listing: Listing, group: str) -> bool:
    """Whether a cache hit agrees with the metadata on disk; a disagreement is recorded."""
    try:
        problem = _disagreement(packs, listing, group)
    except Exception as exc:  # e.g. an unreadable metadata file: the scan will say what
        _log.debug("Cannot check the toolreg pack cache against the metadata: %s", exc)
        return False
    if problem is not None:
        distrust(_WHAT, cache_path, *problem)
        return False
    return True


def _disagreement(packs: list[PackRecord], listing: Listing, group: str) -> tuple[str, str] | None:
    """``(rule, reason)`` why cached ``packs`` differ from the disk, or None when they agree."""
    cached = {os.path.normpath(pack.path): pack for pack in packs}
    if len(cached) != len(packs) or len({pack.plugin_id for pack in packs}) != len(packs):
        return "pack-entry", "it lists one dist-info or plugin id twice"
    header = f"[{group}]".encode()
    for path in listing.firsts.values():
        pack = cached.pop(path, None)
        if pack is None:
            entry_points = read_file(path + os.sep + "entry_points.txt")
            if entry_points is not None and header in entry_points:
                return "pack-unlisted", f"it leaves out {path}, which declares [{group}]"
            continue
        found = read_dist_info(path, group)
        differs = found if isinstance(found, str) else _differs(pack, found)
        if differs:
            return "pack-entry", f"its entry for {path} disagrees with the metadata: {differs}"
    if cached:
        return "pack-entry", f"it names {next(iter(cached))}, not an installed distribution"
    return None


def _differs(pack: PackRecord, found: DistInfo) -> str:
    """The fields of ``pack`` that its dist-info's own files contradict ("" if none)."""
    fields = [
        ("entry points", pack.entry_points, found.entry_points or None),
        ("Name", pack.distribution, found.distribution),
        ("plugin id", pack.plugin_id, canonical(found.distribution)),
        ("Version", pack.version, found.version),
        ("toolreg requirement", pack.requires_toolreg, found.requires_toolreg),
    ]
    return ", ".join(name for name, cached, real in fields if cached != real)


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
                requires_toolreg=requires_toolreg(meta.get_all("Requires-Dist") or []),
                path=location,
            )
        except Exception as exc:
            problems.append([location, f"{type(exc).__name__}: {exc}"])
            continue
        packs.setdefault(record.plugin_id, record)
    for location, problem in problems:
        _log.warning("Skipping broken distribution %s: %s", location, problem)
    return [packs[pid] for pid in sorted(packs)], problems


def _decode(records: Any) -> list[PackRecord] | None:
    """Rebuild cached records; ``None`` if anything has the wrong shape."""
    if type(records) is not list:
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
    return packs


def _load(path: str) -> list[Any]:
    """Read the cached keys; anything unusable yields none."""
    data = read_json(path, _WHAT)
    keys = data.get("keys") if isinstance(data, dict) else None
    if data is not None and type(keys) is not list:
        _log.debug("Ignoring toolreg pack cache %s: unexpected layout", path)
    return keys if type(keys) is list else []


def _save(path: str, keys: list[Any]) -> None:
    write_json_atomic(path, {"keys": keys}, what=_WHAT)
