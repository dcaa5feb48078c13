"""The distributions a pack requires, as installed: code it imports that is not its own.

A pack's RECORD holds its own files only; ``pip install -U`` of the pack can as
well bring a new release of a library it requires, whose code then runs when the
pack imports it. The lock holds each of those too, by version and RECORD, found
from the pack's ``Requires-Dist`` and theirs, transitively. toolreg-core and what
it requires are toolreg's, not the pack's, and are not followed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

from .dist_info import DISTRIBUTION, metadata_headers, read_file, requirement_name
from .metadata_listing import canonical

if TYPE_CHECKING:
    from .record_check import InstalledRecord

#: Requirements not followed: toolreg's own distribution (its requirements are toolreg's).
NOT_FOLLOWED = frozenset({DISTRIBUTION})
#: A pack's requirements are followed this many distributions deep, and no more.
MAX_REQUIREMENTS = 500


class InstalledRequirement(NamedTuple):
    #: The installed version; "" when it is not installed.
    version: str
    #: Its RECORD; None when it is not installed or has none.
    record: InstalledRecord | None


def installed_requirements(dist_info: str) -> dict[str, InstalledRequirement]:
    """Each distribution the pack at ``dist_info`` requires, directly or through
    another, by canonical name; extras' requirements and ones whose environment
    marker is false here are left out."""
    metadata = read_file(os.path.join(dist_info, "METADATA"), until=b"\n\n") if dist_info else None
    try:
        headers = metadata_headers((metadata or b"").partition(b"\n\n")[0].decode())
    except UnicodeDecodeError:
        headers = None
    own = canonical(headers["name"][0]) if headers and headers["name"] else ""
    pending = list(_names(headers["requires-dist"] if headers else ()))
    found: dict[str, InstalledRequirement] = {}
    while pending and len(found) < MAX_REQUIREMENTS:
        name = pending.pop(0)
        if name in found or name in NOT_FOLLOWED or name == own:
            continue
        requirement, requires = _installed(name)
        found[name] = requirement
        pending.extend(_names(requires))
    return dict(sorted(found.items()))


def _names(requirements: Iterable[str]) -> Iterable[str]:
    """The canonical names of the requirements that apply here, without extras'."""
    for text in requirements:
        name = requirement_name(text)
        if name is None:
            continue
        if ";" in text and not _applies(text):
            continue
        yield canonical(name)


def _applies(text: str) -> bool:
    """Whether a requirement's environment marker holds here (an extra's never does)."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        marker = Requirement(text).marker
    except InvalidRequirement:
        return True  # followed: a requirement read wrongly must not hide a library
    return marker is None or marker.evaluate({"extra": ""})


def _installed(name: str) -> tuple[InstalledRequirement, list[str]]:
    """The installed distribution ``name`` (its version and RECORD) and what it requires."""
    import importlib.metadata

    from .record_check import parse_record

    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return InstalledRequirement("", None), []
    data = dist.read_text("RECORD")
    site = os.fspath(dist.locate_file(""))
    record = parse_record(data.encode("utf-8"), site) if data is not None else None
    return InstalledRequirement(dist.version or "", record), list(dist.requires or ())
