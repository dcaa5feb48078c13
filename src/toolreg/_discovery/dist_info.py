"""Reading a dist-info's files as :mod:`importlib.metadata` does, without its import cost.

``RECORD`` gives a pack's files (its identity for the policy gate); ``entry_points.txt``
and ``METADATA`` check a pack cache hit. Where these readers do not mirror a file's
layout exactly they report a difference: that can cost a scan, never change an answer.
"""

from __future__ import annotations

import io
import logging
import os
import re
from collections.abc import Callable, Sequence
from typing import NamedTuple

from .metadata_listing import canonical

logger = logging.getLogger("toolreg.plugins")

_REQUIREMENT_NAME = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")
# email's line ends, not str.splitlines' (which also splits on \f, \x1c, ...).
_EMAIL_LINES = re.compile(r"\r\n|\r(?!\n)|\n")
_BLANK_LINE = re.compile(r"(?:\r\n|\r(?!\n)|\n){2}")
_HEADER = re.compile(r"([\x21-\x39\x3b-\x7e]+):[ \t]*(.*)")
_WANTED_HEADERS = ("name", "version", "requires-dist")


# NamedTuples, not frozen dataclasses: pack discovery runs on every start-up.
class DistInfo(NamedTuple):
    """What a metadata folder's own files say about a pack."""

    distribution: str
    version: str
    entry_points: tuple[tuple[str, str], ...]  # (name, value) in the group, sorted
    requires_toolreg: str | None


def read_file(path: str, *, until: bytes | None = None) -> bytes | None:
    """The file's bytes (up to the first ``until`` if given); None where importlib finds none.

    Raw ``os.read``, not ``open()``: a cache hit reads one small file per
    installed distribution, and the file object costs more than the reading.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return None
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
            if until is not None and until in chunk:
                break  # METADATA: the headers are read, the description is not needed
        return b"".join(chunks)
    except IsADirectoryError:
        return None
    finally:
        os.close(fd)


def read_dist_info(path: str, group: str) -> DistInfo | str:
    """Read ``entry_points.txt`` and ``METADATA`` of ``path``; a string says what is unusual."""
    try:
        entry_points = (read_file(path + os.sep + "entry_points.txt") or b"").decode()
        metadata = (
            read_file(path + os.sep + "METADATA", until=b"\n\n")
            or read_file(path + os.sep + "PKG-INFO", until=b"\n\n")
            or b""
        )
        # Only the headers are needed; a chunk may end inside a character further on.
        metadata_text = metadata.partition(b"\n\n")[0].decode()
    except UnicodeDecodeError as exc:
        return f"a metadata file is not UTF-8 ({exc.reason})"
    eps = group_entry_points(entry_points, group)
    if eps is None:
        return "entry_points.txt has a line that is not 'name = value'"
    headers = metadata_headers(metadata_text)
    if headers is None:
        return "METADATA headers are folded or malformed"
    if not headers["name"] or not headers["version"]:
        return "METADATA has no Name or Version"
    return DistInfo(
        distribution=headers["name"][0],
        version=headers["version"][0],
        entry_points=eps,
        requires_toolreg=requires_toolreg(headers["requires-dist"]),
    )


def group_entry_points(text: str, group: str) -> tuple[tuple[str, str], ...] | None:
    """The sorted ``(name, value)`` pairs of ``group``; None if any section line has no ``=``.

    Mirrors ``importlib.metadata.Sectioned``: lines stripped, blank lines and
    ``#`` comments skipped, ``[...]`` opens a section named by stripping brackets.
    """
    section = None
    pairs = []
    for line in map(str.strip, text.splitlines()):
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
            continue
        if section is None:
            continue
        name, sep, value = line.partition("=")
        if not sep:
            return None  # importlib.metadata raises: the cold path reports it as broken
        if section == group:
            pairs.append((name.strip(), value.strip()))
    return tuple(sorted(pairs))


def metadata_headers(text: str) -> dict[str, list[str]] | None:
    """Name, Version and Requires-Dist values (first first); None for anything unusual."""
    found: dict[str, list[str]] = {key: [] for key in _WANTED_HEADERS}
    head = _BLANK_LINE.split(text, maxsplit=1)[0]  # the description follows a blank line
    for line in _EMAIL_LINES.split(head):
        if not line:
            break  # the line end of the last header
        if line[0] in " \t":
            return None  # a folded header: email joins it, these readers do not
        match = _HEADER.fullmatch(line)
        if match is None:
            return None
        key = match.group(1).lower()
        if key in found:
            found[key].append(match.group(2))
    return found


#: toolreg's distribution name. ``toolreg`` on PyPI is another project.
DISTRIBUTION = "toolreg-core"


def requirement_name(requirement: str) -> str | None:
    """The distribution name a ``Requires-Dist`` value starts with, as written; None if none."""
    match = _REQUIREMENT_NAME.match(requirement)
    return match.group(1) if match else None


def requires_toolreg(requirements: Sequence[str]) -> str | None:
    """Return the first requirement naming toolreg's distribution, ``toolreg-core``."""
    for requirement in requirements:
        match = _REQUIREMENT_NAME.match(requirement)
        if match and canonical(match.group(1)) == DISTRIBUTION:
            return requirement.strip()
    return None


#: The name ``toolreg`` holds on PyPI: an unrelated project, not this one.
UNRELATED_DISTRIBUTION = "toolreg"


def misnamed_toolreg(dist_info: str) -> str | None:
    """The ``Requires-Dist`` of ``dist_info`` that names ``toolreg``, not ``toolreg-core``.

    Such a pack depends on the unrelated project that holds ``toolreg`` on PyPI
    (``pip install`` of the pack installs that), and on no version of this
    toolreg. None when there is no such requirement or the METADATA cannot be read.
    """
    if not dist_info:
        return None
    metadata = read_file(os.path.join(dist_info, "METADATA"), until=b"\n\n") or read_file(
        os.path.join(dist_info, "PKG-INFO"), until=b"\n\n"
    )
    try:
        headers = metadata_headers((metadata or b"").partition(b"\n\n")[0].decode())
    except UnicodeDecodeError:
        return None
    for requirement in headers["requires-dist"] if headers is not None else ():
        match = _REQUIREMENT_NAME.match(requirement)
        if match and canonical(match.group(1)) == UNRELATED_DISTRIBUTION:
            return requirement.strip()
    return None


def misnamed_toolreg_warning(requirement: str) -> str:
    """What to tell the author of a pack whose requirement on toolreg names ``toolreg``."""
    name = _REQUIREMENT_NAME.match(requirement)
    fixed = DISTRIBUTION + requirement[name.end() :] if name else DISTRIBUTION
    return (
        f"requires {requirement!r}, but 'toolreg' on PyPI is an unrelated project; "
        f"toolreg's distribution is {DISTRIBUTION!r}. Fix the pack's dependency: {fixed!r}"
    )


# -- RECORD: the files a distribution installed ----------------------------------------

#: Suffixes whose code objects carry the file as ``co_filename``.
_CODE_SUFFIXES = (".py", ".pyw")


class InstalledSources(NamedTuple):
    #: Real paths of the Python sources the RECORD lists.
    files: frozenset[str] = frozenset()
    #: Top-level modules those sources make up (``pkg`` for ``pkg/x.py``).
    top_level: frozenset[str] = frozenset()
    #: Real paths of the extension modules (``.so``, ``.pyd``) the RECORD lists.
    extensions: frozenset[str] = frozenset()
    #: Whether there was a RECORD to read (the lists above are then all it installed).
    recorded: bool = False

    def covers(self, namespace: str) -> bool:
        """Whether the RECORD holds the namespace's code (not an editable install)."""
        return namespace in self.top_level


def is_editable(dist_info: str) -> bool:
    """Whether pip installed the distribution editable (``direct_url.json``, PEP 610)."""
    data = read_file(os.path.join(dist_info, "direct_url.json")) if dist_info else None
    if data is None:
        return False
    import json  # only an editable-looking pack gets here

    try:
        info = json.loads(data)
    except ValueError:
        return False
    dir_info = info.get("dir_info") if isinstance(info, dict) else None
    return isinstance(dir_info, dict) and dir_info.get("editable") is True


def installed_sources(
    dist_info: str, realpath: Callable[[str], str] = os.path.realpath
) -> InstalledSources:
    """The Python sources a distribution's RECORD lists; empty when it has none.

    ``realpath`` resolves the folder holding the dist-info; a loader reading
    many packs of one site-packages passes one that remembers its answers.
    """
    if not dist_info:
        return InstalledSources()
    # One realpath for the directory: pip installs regular files (wheels hold
    # no symlinks), so each file's own path only needs normalising.
    import csv  # only a pack that loads has its RECORD read

    base = realpath(os.path.dirname(dist_info))
    try:
        data = read_file(os.path.join(dist_info, "RECORD"))
        if data is None:
            raise FileNotFoundError("no RECORD")
        # As open(newline="") hands csv the text: line ends left to csv.
        rows = csv.reader(io.StringIO(data.decode("utf-8"), newline=""))
        paths = [row[0] for row in rows if row]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        logger.debug("Cannot read RECORD of %s: %s", dist_info, exc)
        return InstalledSources()
    from importlib.machinery import EXTENSION_SUFFIXES

    files, tops, extensions = set(), set(), set()
    for path in paths:
        if path.endswith(tuple(EXTENSION_SUFFIXES)):
            extensions.add(os.path.normpath(os.path.join(base, path)))
        if not path.endswith(_CODE_SUFFIXES):
            continue
        # Files outside site-packages (``../``, data and scripts) are the pack's too.
        files.add(os.path.normpath(os.path.join(base, path)))
        parts = path.replace("\\", "/").split("/")
        if ".." not in parts:
            tops.add(parts[0] if len(parts) > 1 else parts[0].rsplit(".", 1)[0])
    return InstalledSources(frozenset(files), frozenset(tops), frozenset(extensions), True)


# -- toolreg-core's own RECORD: which built-in files are toolreg's -------------------

#: How a wheel installer spells toolreg-core's metadata folder (``-`` made ``_``).
_CORE_DIST_INFO = "toolreg_core-"
_CORE_INIT = b"toolreg/__init__.py"


def core_record_files(package_dir: str, under: str, version: str = "") -> frozenset[str] | None:
    """Real paths of the files under ``under`` (``"toolreg/builtin_tools/"``) that
    toolreg-core's own RECORD lists, where toolreg (``package_dir``, its real
    folder) was installed from a wheel; None where no RECORD next to it lists
    toolreg's ``__init__.py``: a checkout on ``sys.path`` or an editable install,
    whose folder is the checkout's own.

    Only toolreg-core's installer writes that RECORD (pip rewrites every RECORD it
    installs, and refuses a wheel with a second ``.dist-info``), so a file another
    distribution put under ``under`` is never in it.
    """
    site = os.path.dirname(package_dir)
    guess = f"{_CORE_DIST_INFO}{version}.dist-info"
    names = [guess] if version and os.path.isdir(os.path.join(site, guess)) else []
    if not names:
        try:
            names = [
                n
                for n in os.listdir(site)
                if n.lower().startswith(_CORE_DIST_INFO) and n.endswith(".dist-info")
            ]
        except OSError:
            return None
    found: set[str] | None = None
    prefix = under.encode()
    for name in names:
        data = read_file(os.path.join(site, name, "RECORD"))
        if data is None:
            continue
        # A path with a comma or quote is quoted; no such path names a module.
        paths = [line.split(b",", 1)[0] for line in data.splitlines()]
        if _CORE_INIT not in paths:
            continue  # not the RECORD of the toolreg imported here
        found = found if found is not None else set()
        for path in paths:
            if path.startswith(prefix) and path.endswith(b".py") and b"/../" not in path:
                found.add(os.path.normpath(os.path.join(site, os.fsdecode(path))))
    return None if found is None else frozenset(found)
