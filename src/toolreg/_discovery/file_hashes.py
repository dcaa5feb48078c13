"""Installed files' hashes, each computed once and reused while the file is unchanged.

A lock makes every load check each locked pack's files against its RECORD.
Hashing them all on each start would cost more than loading the packs, so a
file's hash is kept with its (size, mtime_ns, ctime_ns, inode, device), and
computed again when any of them changes. ``ctime`` is in the key because a
process can set a file's mtime back after editing it (``os.utime``), but not
its ctime, which the kernel sets on every change. The cache is distrusted as
the other caches are (``cache_files.py``): one another user could have written
is not read, and a lost cache only means hashing again.
"""

from __future__ import annotations

import base64
import hashlib
import os
import stat
from typing import Any

from .cache_files import cache_file, read_json, write_json_atomic

CACHE_FILE_NAME = "file-hashes-v1.json"
_WHAT = "file hash cache"
#: RECORD's hash names toolreg checks; pip refuses md5 and sha1 too.
ALGORITHMS = frozenset({"sha256", "sha384", "sha512", "sha3_256", "sha3_512", "blake2b"})
_CHUNK = 1 << 20


def _key(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


class FileHashes:
    """Hashes by real path; ``save`` writes the cache back when something was hashed."""

    def __init__(self, cache_path: str | None = None, *, use_cache: bool = True) -> None:
        self.path = (cache_path or cache_file(CACHE_FILE_NAME, _WHAT)) if use_cache else None
        loaded = read_json(self.path, _WHAT) if self.path else None
        self._known: dict[str, list[Any]] = loaded if isinstance(loaded, dict) else {}
        self._changed = False
        self._used: set[str] = set()
        #: Files hashed (not taken from the cache) by this object: for tests and doctor.
        self.hashed = 0

    def hash(self, path: str, algorithm: str) -> str | None:
        """The file's ``algorithm`` digest, urlsafe base64 without padding as RECORD
        writes it; None when there is no regular file to read."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        key = _key(st)
        self._used.add(path)
        known = self._known.get(path)
        if (
            isinstance(known, list)
            and len(known) == 7
            and known[:5] == key
            and known[5] == algorithm
            and isinstance(known[6], str)
        ):
            return known[6]
        digest = self._read(path, algorithm)
        if digest is not None:
            self._known[path] = [*key, algorithm, digest]
            self._changed = True
            self.hashed += 1
        return digest

    def _read(self, path: str, algorithm: str) -> str | None:
        try:
            h = hashlib.new(algorithm)
            with open(path, "rb") as f:
                while chunk := f.read(_CHUNK):
                    h.update(chunk)
        except (OSError, ValueError):
            return None
        return base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode("ascii")

    def save(self) -> None:
        """Write the hashes this object used (a file no longer checked drops out)."""
        if self._changed and self.path:
            used = {p: v for p, v in self._known.items() if p in self._used}
            write_json_atomic(self.path, used, what=_WHAT)
            self._changed = False
