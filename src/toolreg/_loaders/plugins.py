"""Loading tool packs: metadata → policy gate → import → pluggy.

Each pack, in a fixed order, is checked from metadata before it is imported;
a pack that fails has its partial registrations rolled back, and the next loads.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import threading
import weakref
from collections.abc import Callable, Collection, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from .._core.callers import run_made_by
from .._discovery.entrypoints import find_packs
from .._policy.config import Config
from .._policy.unknown_names import (
    plugin_ids_written,
    unknown_hooks,
    unknown_names,
    warn,
)
from .._registry.host_only import listen_for_refusals, require_host
from .._registry.registry import ToolRegistry
from .report import PluginOutcome, PluginReport, failed, summarise, warned

if TYPE_CHECKING:
    from .._core.decisions import Decision
    from .._core.plugin_policy import PluginPolicy
    from .._discovery.dist_info import InstalledSources
    from .._discovery.entrypoints import PackRecord
    from .._discovery.local_plugins import LocalPlugin
    from .._policy.config import PluginsConfig
    from .hook_runner import HookFailure, HookRunner
    from .isolated_supervisor import IsolatedPacks
    from .pack_hooks import PackPluginManager
    from .pack_lock import Hold, LockCheck
    from .pack_modules import ImportLoop

logger = logging.getLogger("toolreg.plugins")


class _Active:
    """A loaded plugin and what must be undone to unload it."""

    __slots__ = ("namespaces", "objects", "outcome")

    def __init__(
        self, outcome: PluginOutcome, namespaces: tuple[str, ...], objects: list[Any]
    ) -> None:
        self.outcome = outcome
        self.namespaces = namespaces
        self.objects = objects


def _squatting(
    record: PackRecord, sources: InstalledSources, realpath: Callable[[str], str]
) -> PermissionError | None:
    """Why the pack's entry points name code its distribution did not install; None if not.

    Asked before anything of the pack is imported, isolated packs too. A record
    the host made itself (no metadata folder: ``load_all(packs=...)``,
    ``load_pack``) names what the host chose, and is not asked.
    """
    if not record.path:
        return None
    from .._discovery.dist_info import is_editable
    from .._policy.admission import check_entry_modules
    from .pack_modules import entry_module, locate_module

    editable = is_editable(record.path)
    files = None  # the RECORD cannot say: an editable install, or none written
    if sources.recorded and not editable:
        files = sources.files | sources.extensions
    located = []
    for name, value in record.entry_points:
        module = entry_module(value)
        located.append((name, module, locate_module(module)))
    return check_entry_modules(
        record.plugin_id, record.distribution, located, files, editable, realpath
    )


class PluginHost:
    """Loads, unloads and reloads plugins into one registry, under one config."""

    def __init__(self, registry: ToolRegistry, config: Config) -> None:
        self.registry = registry
        self.config = config
        self.active: dict[str, _Active] = {}
        self.report = PluginReport()
        self.hooks: HookRunner | None = None
        #: The processes of packs with isolation = "process"; made on first use.
        self.isolated: IsolatedPacks | None = None
        self._lock = threading.RLock()
        self._imports: ImportLoop | None = None  # while installed packs load
        self._lock_check: LockCheck | None = None  # while installed packs load
        #: Dispatch hooks ``toolreg.lock`` withholds, by plugin id (not in its ``hooks``).
        self._lock_withheld: dict[str, frozenset[str]] = {}
        listen_for_refusals(registry, weakref.WeakMethod(self._note_refusal))

    @functools.cached_property
    def pm(self) -> PackPluginManager:
        """The pluggy manager, made when the first plugin is registered: no packs, no pluggy."""
        from .pack_hooks import new_manager

        return new_manager()

    # -- public operations --------------------------------------------------

    def load_all(self, packs: Sequence[PackRecord] | None = None) -> PluginReport:
        require_host(self.registry, "load plugins")
        with self._lock:
            report = PluginReport()
            claimed = {ns: pid for pid, a in self.active.items() for ns in a.namespaces}
            # Packs share a few site-packages folders: each is resolved once per load.
            realpath = functools.lru_cache(maxsize=None)(os.path.realpath)
            records = sorted(
                packs if packs is not None else find_packs(), key=attrgetter("plugin_id")
            )
            if records:  # the lock is read, and its check imported, for installed packs alone
                from .pack_lock import LockCheck

                self._lock_check = LockCheck(self.config.lock.path)
            try:
                report.plugins.extend(self._load_packs(records, claimed, realpath))
            finally:
                if self._lock_check is not None:
                    self._lock_check.save()
                    self._lock_check = None
            if self.config.plugins.paths:  # the folder scan is imported only for folders
                from .._discovery.local_plugins import find_local_plugins

                for plugin in find_local_plugins(self.config.plugins.paths):
                    report.plugins.append(self._load_local(plugin))
            known = {outcome.id for outcome in report} | set(self.active)
            warn(unknown_names(plugin_ids_written(self.config), known))
            warn(unknown_hooks(self.config))
            self._install_hooks()
            self.report = report
            return report

    def unload(self, plugin_id: str) -> bool:
        """Remove a plugin's tools (restoring what it overrode) and hooks. Host only."""
        require_host(self.registry, f"unload plugin {plugin_id!r}")
        with self._lock:
            active = self.active.pop(plugin_id, None)
            if active is None:
                return False
            self._lock_withheld.pop(plugin_id, None)
            self._deactivate(plugin_id, active.namespaces, active.objects)
            self._install_hooks()
            logger.info("Unloaded plugin %s", plugin_id)
            return True

    def unload_all(self) -> None:
        require_host(self.registry, "unload plugins")
        with self._lock:
            for plugin_id in list(self.active):
                self.unload(plugin_id)

    def hook_failures(self) -> list[HookFailure]:
        return list(self.hooks.failures) if self.hooks is not None else []

    # -- loading ------------------------------------------------------------------

    def _load_packs(
        self, records: list[PackRecord], claimed: dict[str, str], realpath: Callable[[str], str]
    ) -> list[PluginOutcome]:
        """Installed packs in id order, the loop on one import worker (see ImportLoop)."""
        if not records:
            return []  # nor the admission rules: listing with no pack installed needs none
        from .._policy.admission import check_enabled, environ

        if all(check_enabled(r.plugin_id, self.config, environ()) for r in records):
            return [self._load_pack(r, claimed, realpath) for r in records]  # none to import
        from .pack_modules import ImportLoop, registry_as_singleton

        outcomes: list[PluginOutcome] = []
        imports = self._imports = ImportLoop(self.config.plugins.import_timeout)

        def rest() -> None:  # from the first pack without an outcome: a new worker resumes
            for record in records[len(outcomes) :]:
                if self.config.plugins.isolation_of(record.plugin_id) == "process":
                    outcomes.append(imports.on_caller(self._load_pack, record, claimed, realpath))
                else:
                    outcomes.append(self._load_pack(record, claimed, realpath))

        try:
            with registry_as_singleton(self.registry):
                imports.run(rest, outcomes.append)
        finally:
            self._imports = None
        return outcomes

    def _load_pack(
        self, record: PackRecord, claimed: dict[str, str], realpath: Callable[[str], str]
    ) -> PluginOutcome:
        outcome = PluginOutcome(
            id=record.plugin_id,
            distribution=record.distribution,
            version=record.version,
            entry_point=", ".join(f"{name} = {value}" for name, value in record.entry_points),
        )
        if record.plugin_id in self.active:
            return self.active[record.plugin_id].outcome
        # Imported with the first pack: with none installed, listing never needs them.
        from .._contract.version import __version__
        from .._discovery.dist_info import installed_sources
        from .._policy.admission import (
            check_compatible,
            check_enabled,
            check_identity,
            check_namespaces,
            environ,
        )

        verdict = check_enabled(record.plugin_id, self.config, environ()) or check_compatible(
            record.plugin_id, record.version, record.requires_toolreg, __version__, self.config
        )
        if verdict is not None:
            outcome.status, outcome.reason = verdict.status, verdict.reason  # type: ignore[assignment]
            return outcome
        if record.requires_toolreg is None:  # requiring toolreg-core, it names no other
            from .._discovery.dist_info import misnamed_toolreg, misnamed_toolreg_warning

            misnamed = misnamed_toolreg(record.path)
            if misnamed is not None:
                warned(outcome, misnamed_toolreg_warning(misnamed))
        namespaces = record.namespaces  # worked out from the entry points: once
        refusal = check_identity(record.plugin_id) or check_namespaces(
            record.plugin_id, namespaces, claimed
        )
        if refusal is not None:
            return failed(outcome, refusal)
        # Before anything of the pack runs (an isolated pack's process too).
        from .pack_lock import check_pack

        try:
            hold = check_pack(self._lock_check, self.config, outcome, record)
        except Exception as exc:  # a check that cannot finish lets nothing through
            return failed(outcome, exc)
        if hold is None:
            return outcome
        sources = installed_sources(record.path, realpath)
        try:
            refusal = _squatting(record, sources, realpath)
        except Exception as exc:  # a finder that raises: this pack fails, not the load
            return failed(outcome, exc)
        if refusal is not None:
            return failed(outcome, refusal)
        if self.config.plugins.isolation_of(record.plugin_id) == "process":
            return self._load_isolated(outcome, record, hold)
        from .pack_modules import import_target

        targets = [value for _, value in record.entry_points]
        if self._activate(outcome, namespaces, import_target, targets, sources=sources, hold=hold):
            for namespace in namespaces:
                claimed[namespace] = record.plugin_id
        return outcome

    def _load_local(self, plugin: LocalPlugin) -> PluginOutcome:
        outcome = PluginOutcome(
            id=plugin.plugin_id,
            distribution="",
            version="",
            entry_point=str(plugin.path),
        )
        if plugin.plugin_id in self.active:
            return self.active[plugin.plugin_id].outcome
        # Not held to toolreg.lock: a folder the operator's own config names, with no
        # RECORD to check it against (docs/lock.md says so).
        from .._discovery.local_plugins import import_local
        from .._policy.admission import check_enabled, environ

        verdict = check_enabled(plugin.plugin_id, self.config, environ())
        if verdict is not None:
            outcome.status, outcome.reason = verdict.status, verdict.reason  # type: ignore[assignment]
            return outcome
        if self.config.plugins.isolation_of(plugin.plugin_id) == "process":
            return self._load_isolated(outcome, plugin)
        namespaces = (plugin.namespace,)
        self._activate(outcome, namespaces, import_local, [plugin], local_file=str(plugin.path))
        return outcome

    def _activate(
        self,
        outcome: PluginOutcome,
        namespaces: tuple[str, ...],
        load: Callable[[Any], Any],
        targets: Sequence[Any],
        sources: InstalledSources | None = None,
        local_file: str | None = None,
        hold: Hold | None = None,
    ) -> bool:
        """Bind the namespaces, then ``load`` each target under the import deadline, into pluggy.

        ``hold`` is what the lock lets an installed pack load with; None: not held
        (a local plugin, which has no RECORD to lock).
        """
        from .pack_hooks import check_hook_names, has_setup_hooks, run_setup_hooks
        from .pack_modules import ImportLoop, purge_modules

        plugin_id = outcome.id
        settings = self.config.plugins.entry(plugin_id)
        if hold is None:
            from .pack_lock import Hold

            hold = Hold(settings.allow_tool_override)
        since = self.registry.last_decision_seq
        objects: list[Any] = []
        bindings: list[tuple[str, Any, Any]] = []
        # The pack's import and setup hooks run as its code, whatever files it
        # runs them from: tasks and callbacks they schedule inherit that.
        maker: PluginPolicy | None = None
        try:
            for namespace in namespaces:
                # The pack is the files its RECORD lists; an editable install's
                # RECORD has none of them, so its namespace's directories stand in.
                if local_file is not None:
                    files, paths = (), [local_file]
                elif sources is not None and sources.covers(namespace):
                    files, paths = sources.files, []
                else:
                    files, paths = (sources.files if sources else ()), None
                bindings.append((namespace, files, paths))
                policy = self.registry.register_plugin_override_policy(
                    namespace,
                    hold.allowed,
                    plugin_id=plugin_id,
                    paths=paths,
                    tool_patterns=settings.tools,
                    files=files,
                    locked_tools=hold.tools,
                )
                maker = maker or policy
            # A module already imported (by the host, or into another registry)
            # would not run its registrations again: always import it afresh.
            purge_modules(namespaces)
            imports = self._imports or ImportLoop(self.config.plugins.import_timeout)
            # Past its deadline, the caller fails the pack: this thread is stuck in it.
            recover = functools.partial(self._failed, outcome, namespaces, objects, bindings)
            with imports.registry_swapped(self.registry):
                for index, target in enumerate(targets):
                    obj = imports.load(functools.partial(run_made_by, maker, load), target, recover)
                    if self.pm.is_registered(obj):
                        continue  # two entry points naming one module
                    self.pm.register(obj, name=f"{plugin_id}#{index}")
                    objects.append(obj)
                check_hook_names(self.pm, objects)
                if has_setup_hooks(self.pm, objects):  # on the caller's thread, as documented
                    imports.on_caller(
                        run_made_by,
                        maker,
                        run_setup_hooks,
                        self.pm,
                        objects,
                        self.registry,
                        settings.settings,
                    )
        except (Exception, SystemExit) as exc:  # a pack calling exit() must not end the host
            self._failed(outcome, namespaces, objects, bindings, exc)
            return False
        summarise(outcome, self.registry.decisions(since))
        implemented = {c.name for obj in objects for c in self.pm.get_hookcallers(obj) or ()}
        self._note_hooks(outcome, implemented, hold.hooks)
        self.active[plugin_id] = _Active(outcome, namespaces, objects)
        logger.info("Loaded plugin %s (%d tools)", plugin_id, len(outcome.tools_added))
        return True

    def _failed(
        self,
        outcome: PluginOutcome,
        namespaces: tuple[str, ...],
        objects: list[Any],
        bindings: list[tuple[str, Any, Any]],
        exc: BaseException,
    ) -> PluginOutcome:
        """Undo a pack's partial load and report why it failed."""
        from .pack_modules import ImportTimeout, refuse_late_registrations

        timed_out = isinstance(exc, ImportTimeout)
        if timed_out:  # its import runs on: refused before its tools go, so none lands between
            refuse_late_registrations(self.registry, outcome.id, bindings)
        self._deactivate(outcome.id, namespaces, objects, unbind=not timed_out)
        return failed(outcome, exc)

    def _load_isolated(
        self, outcome: PluginOutcome, source: PackRecord | LocalPlugin, hold: Hold | None = None
    ) -> PluginOutcome:
        """Run the pack in a process of its own; its tools and hooks come through the gate.

        ``hold``: what the lock lets it load with, checked before its process starts.
        """
        if hold is None:
            from .pack_lock import Hold

            hold = Hold(self.config.plugins.entry(outcome.id).allow_tool_override)
        outcome.isolation = "process"
        since = self.registry.last_decision_seq
        try:
            from .isolated_supervisor import IsolatedPacks  # the MCP SDK: on first use
        except ImportError as exc:
            needs = "isolation = \"process\" needs the MCP SDK: pip install 'toolreg-core[mcp]'"
            return failed(outcome, ImportError(f"{needs} ({exc})"))
        try:
            if self.isolated is None:
                self.isolated = IsolatedPacks(self.registry)
            started = self.isolated.start(
                outcome.id, source, self.config, allowed=hold.allowed, locked_tools=hold.tools
            )
        except (Exception, SystemExit) as exc:
            self._deactivate(outcome.id, (), [])
            return failed(outcome, exc)
        self._note_hooks(outcome, started.hooks, hold.hooks)
        if started.status != "loaded":
            self._deactivate(outcome.id, (), [])
            outcome.status, outcome.reason = started.status, started.reason  # type: ignore[assignment]
            outcome.traceback = started.traceback
            logger.warning("Plugin %s %s: %s", outcome.id, outcome.status, outcome.reason)
            return outcome
        self.pm.register(started.hook_plugin, name=f"{outcome.id}#0")
        summarise(outcome, self.registry.decisions(since))
        self.active[outcome.id] = _Active(outcome, (), [started.hook_plugin])
        logger.info("Loaded isolated plugin %s (%d tools)", outcome.id, len(outcome.tools_added))
        return outcome

    def _note_hooks(
        self,
        outcome: PluginOutcome,
        implemented: Collection[str],
        locked: tuple[str, ...] | None = None,
    ) -> None:
        """Report the hooks that run and the dispatch hooks withheld: by the operator's
        ``hooks``, or (``locked``, the hooks ``toolreg.lock`` names) by the lock."""
        from ..hookspecs import DISPATCH_HOOKS

        entry = self.config.plugins.entry(outcome.id)
        withheld = {h for h in implemented if h in DISPATCH_HOOKS and not entry.allows_hook(h)}
        unlocked = sorted(set(implemented) - set(locked)) if locked is not None else []
        by_lock = frozenset(h for h in unlocked if h in DISPATCH_HOOKS)
        if by_lock:
            self._lock_withheld[outcome.id] = by_lock
            withheld |= by_lock
            warned(
                outcome,
                f"hooks not in the lock withheld: {', '.join(sorted(by_lock))}; review "
                f"them, then run `toolreg lock --update {outcome.id}`",
            )
        else:
            self._lock_withheld.pop(outcome.id, None)
        ran = [h for h in unlocked if h not in DISPATCH_HOOKS]
        if ran:  # a setup hook has run by the time its pack's hooks are known
            warned(outcome, f"setup hooks not in the lock ran: {', '.join(ran)}")
        outcome.hooks = sorted(set(implemented) - withheld)
        outcome.hooks_withheld = sorted(withheld)
        if outcome.hooks_withheld:
            logger.info("Plugin %s: hooks withheld: %s", outcome.id, outcome.hooks_withheld)

    def _deactivate(
        self, plugin_id: str, namespaces: Sequence[str], objects: list[Any], unbind: bool = True
    ) -> None:
        if self.isolated is not None:
            self.isolated.stop(plugin_id)  # first: a live process would publish again
        self.registry.remove_owner(plugin_id)
        for obj in objects:  # there are objects only once pm exists
            with contextlib.suppress(ValueError):
                self.pm.unregister(obj)
        for namespace in namespaces if unbind else ():
            self.registry.remove_plugin_override_policy(namespace)
        if namespaces:
            from .pack_modules import purge_modules

            purge_modules(namespaces)

    def _note_refusal(self, decision: Decision) -> None:
        """A loaded plugin was refused something after loading: add it to its report line."""
        active = self.active.get(decision.owner)
        if active is not None:  # while loading, summarise reads the log instead
            active.outcome.refused.append({"tool": decision.tool, "reason": decision.reason})

    def _install_hooks(self) -> None:
        """Put the dispatch hooks in place, or take the layer away when none exist."""
        if not self._dispatch_hooked():
            self.hooks = None
            self.registry.set_dispatch_hooks(None)
            return
        from .hook_runner import runner_from

        makers = {
            plugin_id: policy
            for plugin_id, active in self.active.items()
            for policy in [self._maker(active)]
            if policy is not None
        }
        self.hooks = runner_from(self.pm, self._hooks_config(), makers)
        self.registry.set_dispatch_hooks(self.hooks)

    def _hooks_config(self) -> PluginsConfig:
        """The operator's ``[plugins]``, each pack's ``hooks`` less those the lock withholds."""
        plugins = self.config.plugins
        withheld = {pid: h for pid, h in self._lock_withheld.items() if pid in self.active}
        if not withheld:
            return plugins
        from ..hookspecs import DISPATCH_HOOKS

        entries = dict(plugins.entries)
        for pid, hooks in withheld.items():
            entry = plugins.entry(pid)
            allowed = DISPATCH_HOOKS if entry.hooks is None else entry.hooks
            entries[pid] = entry._replace(hooks=tuple(h for h in allowed if h not in hooks))
        return plugins._replace(entries=entries)

    def _maker(self, active: _Active) -> PluginPolicy | None:
        """The policy a loaded pack's code runs under; None for an isolated pack (its
        hooks here are toolreg's, forwarding to its process)."""
        for namespace in active.namespaces:
            policy = self.registry.get_plugin_policy(namespace)
            if policy is not None:
                return policy
        return None

    def _dispatch_hooked(self) -> bool:
        """Whether a plugin implements a dispatch hook; if not, the runner is not imported."""
        if "pm" not in self.__dict__:  # no plugin was ever registered: no pluggy either
            return False
        from .pack_hooks import implements_dispatch_hook

        return implements_dispatch_hook(self.pm)
