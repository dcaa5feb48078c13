"""A pack held to ``toolreg.lock`` before any of its code runs (docs/lock.md).

Per load, the lock is read once and files are hashed through one cache
(:class:`LockCheck`); each installed pack is then checked from its metadata and
files alone: new, changed, tampered, or let through with what it may load with
(:class:`Hold`: override consent capped by the lock, the tool digests the write
gate holds it to, the hooks the lock names).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

from .report import PluginOutcome, warned

if TYPE_CHECKING:
    from .._discovery.entrypoints import PackRecord
    from .._discovery.file_hashes import FileHashes
    from .._discovery.requirements import InstalledRequirement
    from .._policy.config import Config
    from .._policy.lock_file import Lock, LockedRequirement

logger = logging.getLogger("toolreg.plugins")


class Hold(NamedTuple):
    """What ``toolreg.lock`` lets a pack that passed it load with."""

    #: The operator's override consent as it stands: the config's, capped by the lock's.
    allowed: bool
    #: Tool name -> definition digest the gate holds its writes to; None: not held.
    tools: Mapping[str, str] | None = None
    #: The hooks the lock names for it; None: the lock does not limit them.
    hooks: tuple[str, ...] | None = None


class LockCheck:
    """One load's view of ``toolreg.lock``: read at most once, files hashed through one cache.

    Made per ``load_all``: a lock written between loads applies to the next one.
    """

    def __init__(self, path: str | None) -> None:
        self.path = path
        self._read = False
        self.lock: Lock | None = None
        #: Why the lock could not be read; every checked pack is held back for it.
        self.error: Exception | None = None
        self._hashes: FileHashes | None = None

    def read(self) -> Lock | None:
        if not self._read and self.path is not None:
            self._read = True
            from .._policy.config_reader import ConfigError
            from .._policy.lock_file import read_lock

            try:
                self.lock = read_lock(self.path)  # distrusted: None, warned once
            except ConfigError as exc:
                self.error = exc
        return self.lock

    @property
    def hashes(self) -> FileHashes:
        if self._hashes is None:
            from .._discovery.file_hashes import FileHashes

            self._hashes = FileHashes()
        return self._hashes

    def save(self) -> None:
        if self._hashes is not None:
            try:
                self._hashes.save()
            except OSError as exc:  # a lost cache only means hashing again next time
                logger.debug("Could not save the file hash cache: %s", exc)


def check_pack(
    check: LockCheck | None, config: Config, outcome: PluginOutcome, record: PackRecord
) -> Hold | None:
    """Hold an installed pack to ``toolreg.lock``: None when it is held back (``outcome``
    says why), else what it loads with. Reads metadata and hashes files; imports nothing.
    """
    settings = config.plugins.entry(record.plugin_id)
    # A record without a metadata folder is one the host made and handed to
    # ``load_all(packs=...)`` (as the ``load_pack`` fixture does for a module name):
    # what it names is the host's choice, and there is no RECORD to hold it to. A
    # record found on disk is checked however it reached ``load_all``.
    if check is None or check.path is None or not record.path:
        return Hold(settings.allow_tool_override)
    lock = check.read()
    if check.error is not None:  # fail closed: an unreadable lock is no consent
        return _held(
            outcome,
            "refused",
            f"the lock cannot be read ({check.error}); no pack loads until it is "
            "fixed, or written again with `toolreg lock`",
        )
    if lock is None:  # none, or distrusted (warned once, listed by doctor)
        return Hold(settings.allow_tool_override)
    pid = record.plugin_id
    update = f"`toolreg lock --update {pid}`"
    locked = lock.packs.get(pid)
    if locked is None:
        if config.lock.new_packs == "allow":
            return Hold(settings.allow_tool_override)
        return _held(
            outcome,
            "new",
            f'not in the lock {lock.path} ([lock] new_packs = "refuse"); review it, '
            f"then run {update} to accept it",
        )
    from .._discovery.record_check import read_record, tampered_with_requirements

    now = read_record(record.path)
    if now is None:
        return _held(
            outcome,
            "tampered",
            f"its RECORD is missing or unreadable ({record.path}), so its files cannot "
            "be checked against the lock; reinstall it",
        )
    change = ""
    # What it requires runs when it is imported: held by version and RECORD too.
    from .._discovery.requirements import installed_requirements

    required = installed_requirements(record.path)
    now_requires = locked_requirements(required)
    # The files too: a lock whose digest was kept while its files were edited is no
    # record of what was reviewed either.
    if (
        locked.version != record.version
        or locked.record != now.digest
        or dict(locked.files) != now.files
        or now_requires != dict(locked.requires)
    ):
        from .._policy.lock_diff import file_changes, pack_change, requirement_changes

        change = pack_change(
            locked.version,
            record.version,
            file_changes(locked.files, now.files),
            requires=requirement_changes(locked.requires, now_requires),
        )
        if config.lock.on_change != "warn":
            return _held(
                outcome,
                "changed",
                f"changed since the lock: {change}; review the change, then run {update} "
                "to accept it",
            )
    # Whatever on_change says: files that are not what their RECORD says are no
    # release anyone reviewed, the one installed now included.
    problems = tampered_with_requirements(now, required, check.hashes)
    if problems:
        shown = "; ".join(problems[:5])
        more = f"; and {len(problems) - 5} more" if len(problems) > 5 else ""
        return _held(
            outcome,
            "tampered",
            f"installed files no longer match its RECORD: {shown}{more}; reinstall "
            f"{record.distribution} (pip install --force-reinstall --no-deps "
            f"{record.distribution}=={record.version})",
        )
    from .._discovery.dist_info import is_editable

    if is_editable(record.path):
        warned(
            outcome,
            "is an editable install: the lock holds its RECORD, not the source folder it points to",
        )
    if change:  # on_change = "warn": offered, with no consent the operator gave before
        warned(
            outcome,
            f"changed since the lock: {change}; loaded without override consent and "
            f'with its tools unlocked ([lock] on_change = "warn"); review it, then run '
            f"{update}",
        )
        return Hold(False, None, locked.hooks)
    if settings.allow_tool_override and not locked.override:
        warned(
            outcome,
            f"plugins.entries.{pid}.allow_tool_override grants overrides the lock "
            f"does not record; they stay off until {update}",
        )
    tools = {name: tool.digest for name, tool in locked.tools.items()}
    return Hold(settings.allow_tool_override and locked.override, tools, locked.hooks)


def _held(outcome: PluginOutcome, status: str, reason: str) -> Hold | None:
    """Hold a pack back for the lock (nothing of it ran): None, as ``check_pack`` says it."""
    outcome.status, outcome.reason = status, reason  # type: ignore[assignment]
    logger.warning("Plugin %s %s: %s", outcome.id, status, reason)
    return None


def locked_requirements(
    required: Mapping[str, InstalledRequirement],
) -> dict[str, LockedRequirement]:
    """What the lock holds of each required distribution: its version and RECORD digest."""
    from .._policy.lock_file import LockedRequirement

    return {
        name: LockedRequirement(r.version, r.record.digest if r.record is not None else "")
        for name, r in required.items()
    }
