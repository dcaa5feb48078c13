"""One pass over the search path: the pack cache's key and the first dist-info of each name.

Where a hit cannot be checked from listings alone (a zip or ``.egg`` on the path, a
foreign finder), :attr:`Listing.unverifiable` says why, and the pack cache is not used.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Sequence

try:  # hashlib would load OpenSSL (a few ms at start-up) for one small digest.
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - CPython always has it
    from hashlib import blake2b

_FINGERPRINT_SUFFIXES = (".dist-info", ".egg-info", ".pth")
_DIST_SUFFIXES = (".dist-info", ".egg-info")
_SEPARATORS = re.compile(r"[-_.]+")
# Finders on sys.meta_path whose distributions are the ones found in path folders.
_PATH_FINDER_MODULES = frozenset(
    {"importlib_metadata", "importlib.metadata", "_frozen_importlib_external"}
)


class Listing:
    """One walk of the path: the pack cache's key and where each distribution is."""

    # A plain class, not a dataclass: this module is imported on every start-up.
    __slots__ = ("firsts", "key", "unverifiable")

    def __init__(self, key: str, unverifiable: str | None = None) -> None:
        self.key = key
        #: canonical distribution name -> its first metadata directory on the path, the
        #: one importlib.metadata takes: a cache hit is checked against each of them
        self.firsts: dict[str, str] = {}
        #: why a cache hit cannot be checked here (then the cache is not used), or None
        self.unverifiable = unverifiable


def canonical(name: str) -> str:
    """A distribution name as ``packaging.utils.canonicalize_name`` spells it."""
    return _SEPARATORS.sub("-", name).lower()


def list_path(group: str, entries: Sequence[str]) -> Listing:
    """List every path entry once: the cache key, and the first metadata dir of each name."""
    # The key hashes what an install, removal or upgrade would change: each path entry
    # in order, each folder's mtime and the name and mtime of each dist-info, egg-info
    # and .pth in it, the group and the Python version.
    parts = ["packs-v2", group, sys.version, sys.implementation.cache_tag or ""]
    listing = Listing(key="", unverifiable=_foreign_finder())
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
            # A zip on the path: its own mtime covers its contents, but what it
            # holds cannot be checked without opening it.
            listing.unverifiable = listing.unverifiable or f"{entry} is not a folder"
            continue
        if os.path.basename(directory).lower().endswith(".egg"):
            listing.unverifiable = listing.unverifiable or f"{entry} is an egg"
        found = []
        here: set[str] = set()
        try:
            with os.scandir(directory) as it:
                for child in it:
                    name = child.name
                    if not name.lower().endswith(_FINGERPRINT_SUFFIXES):
                        continue
                    try:
                        found.append(f"{name}\0{child.stat().st_mtime_ns}")
                    except OSError:  # a dangling symlink, or removed meanwhile
                        found.append(f"{name}\0?")
                    if name.lower().endswith(_DIST_SUFFIXES):
                        _claim(listing, os.path.join(entry, name), name, here)
        except OSError:
            parts.append("unlistable")
        found.sort()  # listing order is not guaranteed stable
        parts.extend(found)
    data = "\n".join(parts).encode("utf-8", "surrogateescape")
    listing.key = blake2b(data, digest_size=16).hexdigest()
    return listing


def _claim(listing: Listing, path: str, name: str, here: set[str]) -> None:
    """Record ``path`` as its name's first metadata dir unless an earlier one had the name.

    ``here`` holds the names first claimed in the folder being listed.
    """
    stem, _, suffix = name.rpartition(".")
    if "." + suffix not in _DIST_SUFFIXES:  # importlib reads the name from METADATA then
        listing.unverifiable = listing.unverifiable or f"{path}: suffix not in lower case"
        return
    dist = canonical(stem.partition("-")[0])
    if dist in listing.firsts:
        if dist in here:  # which of the two importlib takes depends on the listing order
            listing.unverifiable = listing.unverifiable or f"two metadata folders for {dist}"
        return
    here.add(dist)
    listing.firsts[dist] = os.path.normpath(path)


def _foreign_finder() -> str | None:
    for finder in sys.meta_path:
        if getattr(finder, "find_distributions", None) is None:
            continue
        module = getattr(finder, "__module__", None) or type(finder).__module__
        if module not in _PATH_FINDER_MODULES:
            return f"sys.meta_path finder {finder!r} provides distributions"
    return None
