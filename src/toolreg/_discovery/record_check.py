"""A pack's RECORD, read whole, and its installed files checked against it.

The lock holds a pack to the RECORD the operator reviewed (its digest, and each
file's hash there); this module says what is installed now. Nothing here imports
the pack.
"""

from __future__ import annotations

import hashlib
import io
import os
from typing import TYPE_CHECKING, NamedTuple

from .dist_info import read_file

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .file_hashes import FileHashes
    from .requirements import InstalledRequirement

#: Files an installer writes after it checked the wheel: they have no hash in RECORD.
_INSTALLER_FILES = frozenset({"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"})


class InstalledRecord(NamedTuple):
    #: ``sha256:<hex>`` of ``files``: the wheel's files and their hashes, sorted.
    digest: str
    #: Each file of the wheel the RECORD lists (relative to ``site``) with its hash.
    #: Rows without a hash (bytecode pip compiled, RECORD itself) and the files the
    #: installer writes (``INSTALLER``, ``direct_url.json``, which holds the path the
    #: wheel was installed from) are left out: installing the same wheel again from
    #: elsewhere is no change.
    files: dict[str, str]
    #: The folder the RECORD's paths are relative to: the dist-info's parent.
    site: str
    #: Every path the RECORD lists, as written.
    rows: frozenset[str] = frozenset()


def read_record(dist_info: str) -> InstalledRecord | None:
    """The distribution's RECORD; None when it has none or it cannot be read as CSV."""
    data = read_file(os.path.join(dist_info, "RECORD")) if dist_info else None
    if data is None:
        return None
    return parse_record(data, os.path.dirname(dist_info))


def parse_record(data: bytes, site: str) -> InstalledRecord | None:
    """A RECORD's bytes, its paths relative to ``site``; None when it is not CSV."""
    import csv

    try:
        rows = [row for row in csv.reader(io.StringIO(data.decode("utf-8"), newline="")) if row]
    except (UnicodeDecodeError, csv.Error):
        return None
    files = {
        row[0]: row[1] for row in rows if len(row) > 1 and row[1] and not installer_file(row[0])
    }
    return InstalledRecord(
        record_digest(files),
        files,
        site,
        frozenset(row[0].replace("\\", "/") for row in rows),
    )


def record_digest(files: dict[str, str]) -> str:
    """``sha256:<hex>`` of the files and their hashes, one ``path,hash`` line each, sorted."""
    text = "".join(f"{path},{files[path]}\n" for path in sorted(files))
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def tampered(record: InstalledRecord, hashes: FileHashes) -> list[str]:
    """What no longer matches the RECORD, one line a file; empty when all of it does.

    Each file with a hash is hashed (through ``hashes``, which reuses a hash while
    the file is unchanged); a file missing, or whose content differs, is named.
    So is a file in one of the pack's own folders that the RECORD does not list
    (``__pycache__`` aside: bytecode has no hash in a RECORD).
    """
    from .file_hashes import ALGORITHMS

    problems = []
    folders: set[str] = set()
    for path in record.rows:
        parts = path.split("/")
        if len(parts) > 1 and ".." not in parts and not parts[0].endswith(".dist-info"):
            folders.add("/".join(parts[:-1]))
    for path, recorded in record.files.items():
        algorithm, sep, expected = recorded.partition("=")
        full = os.path.normpath(os.path.join(record.site, path))
        if not sep or algorithm not in ALGORITHMS:
            problems.append(f"{path}: its RECORD hash {recorded!r} is not one toolreg checks")
            continue
        found = hashes.hash(full, algorithm)
        if found is None:
            problems.append(f"{path}: removed (the RECORD lists it)")
        elif found != expected:
            problems.append(f"{path}: modified (its content no longer matches its RECORD hash)")
    listed = record.rows
    for folder in sorted(folders):
        if folder.rsplit("/", 1)[-1] == "__pycache__":
            continue
        try:
            entries = list(os.scandir(os.path.join(record.site, folder)))
        except OSError:
            continue
        for entry in entries:
            name = f"{folder}/{entry.name}"
            if name not in listed and entry.is_file(follow_symlinks=False):
                problems.append(f"{name}: added (the RECORD does not list it)")
    return sorted(problems)


def tampered_with_requirements(
    record: InstalledRecord | None,
    required: Mapping[str, InstalledRequirement],
    hashes: FileHashes,
) -> list[str]:
    """``tampered`` for a pack and each distribution it requires (their code runs when
    it is imported): the pack's own lines, then each requirement's, prefixed by its name."""
    problems = tampered(record, hashes) if record is not None else []
    for name, requirement in required.items():
        if requirement.record is not None:
            problems += (f"{name}: {p}" for p in tampered(requirement.record, hashes))
    return problems


def installer_file(path: str) -> bool:
    """Whether ``path`` (a RECORD row) is one the installer writes, not the wheel."""
    parts = path.replace("\\", "/").split("/")
    return len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] in _INSTALLER_FILES
