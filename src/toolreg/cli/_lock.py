"""``toolreg lock``: write what is installed and served now as the lock; check it, update it.

The current state is gathered with the lock's enforcement off (a lock path of
None), so that what changed can be seen and shown instead of held back: packs
load as ``toolreg list`` loads them, and the MCP servers are connected and each
one's own listing is taken. The comparison is ``_policy/lock_diff.compare``;
the workflow is docs/lock.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Any, NamedTuple

from toolreg import ConfigError, load_config

from .._contract.escaping import escape
from .._policy.config_reader import did_you_mean
from .._policy.lock_diff import LockChanges, changes_text, compare
from .._policy.lock_file import Lock, LockedPack, LockedServer, LockedTool, shown
from ._errors import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, CliError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from toolreg import Config, ToolRegistry

    from .._discovery.entrypoints import PackRecord
    from .._loaders.report import PluginOutcome
    from .._mcp.link import ServerLink

#: The prefix that names an MCP server among ``--update``'s targets.
MCP_PREFIX = "mcp:"


def add_lock_parser(sub: argparse._SubParsersAction, verbose: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "lock",
        parents=[verbose],
        help="record the packs and MCP tools you reviewed in toolreg.lock, or check against it",
        description="Write toolreg.lock (beside the config, or [lock] path): each loaded "
        "pack's version, RECORD and tool definitions, and each MCP server's tool definitions. "
        "While it exists, loading holds packs and tools to it (docs/lock.md).",
    )
    how = p.add_mutually_exclusive_group()
    how.add_argument(
        "--check",
        action="store_true",
        help="print every difference from the lock and write nothing; exit 1 if there is any",
    )
    how.add_argument(
        "--update",
        nargs="*",
        metavar="TARGET",
        help="print what changed for each TARGET (a pack id or mcp:SERVER; none: all), "
        "then accept it into the lock, keeping the rest as locked",
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")


class Current(NamedTuple):
    """The state a lock would hold now, and what could not be locked."""

    lock: Lock
    #: Pack id -> why it is not locked (it did not load).
    skipped_packs: dict[str, str]
    #: Server name -> why its tools were not listed (its locked entry, if any, stays).
    unlisted_servers: dict[str, str]
    #: Pack id -> each installed file that no longer matches its RECORD (not loaded, not
    #: locked: its locked entry, if any, stays).
    tampered: dict[str, list[str]]
    #: Every installed pack's id, for did-you-mean.
    installed: set[str]


def cmd_lock(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    path = config.lock.path
    if path is None:  # pragma: no cover - load_config always sets it
        raise CliError("no lock path: set [lock] path in the config", EXIT_USAGE)
    if args.check:
        return _check(args, config, path)
    if args.update is not None:
        return _update(args, config, path)
    return _write_all(args, config, path)


# -- reading the lock there is ---------------------------------------------------------------


def _locked(path: str, *, required: bool) -> Lock | None:
    """The lock at ``path``; a missing or distrusted one stops ``--check``/``--update``."""
    from .._policy.lock_file import lock_problems, read_lock

    try:
        lock = read_lock(path)
    except ConfigError as exc:
        if required:
            raise CliError(str(exc), EXIT_USAGE) from None
        _warn(f"{exc}; writing it again")
        return None
    if lock is not None or not required:
        return lock
    problem = next((p for p in lock_problems() if p["file"] == path), None)
    if problem is not None:
        raise CliError(
            f"the lock at {path} is ignored: {problem['reason']}; "
            "fix that, or run toolreg lock to review everything and write it again"
        )
    raise CliError(f"no lock at {path}; run toolreg lock")


def _check_folder(path: str) -> None:
    """Refuse to write a lock that loading would ignore for its folder's sake."""
    from .._contract.file_trust import untrusted

    folder = os.path.dirname(os.path.abspath(path))
    try:
        problem = untrusted(os.stat(folder))
    except FileNotFoundError:
        return  # write_lock makes it, the user's own
    if problem is not None:
        raise CliError(f"the lock's folder {folder} is {problem[1]}; a lock there would be ignored")


# -- the three actions -----------------------------------------------------------------------


def _write_all(args: argparse.Namespace, config: Config, path: str) -> int:
    from .._policy.lock_file import write_lock

    _check_folder(path)
    previous = _locked(path, required=False)
    current = gather(config, args, previous)
    write_lock(current.lock)
    lock = current.lock
    tools = sum(len(p.tools) for p in lock.packs.values())
    server_tools = sum(len(s.tools) for s in lock.servers.values())
    if args.json:
        _print_json(
            {
                "lock": path,
                "packs": sorted(lock.packs),
                "servers": sorted(lock.servers),
                "not_locked": current.skipped_packs,
                "servers_kept": current.unlisted_servers,
            }
        )
    else:
        print(
            f"locked {_count(len(lock.packs), 'pack')} ({_count(tools, 'tool')}) and "
            f"{_count(len(lock.servers), 'MCP server')} ({_count(server_tools, 'tool')}) "
            f"in {path}"
        )
    _note_skipped(current)
    _note_unlisted(current, previous)
    _warn_tampered(current)
    return EXIT_OK


def _check(args: argparse.Namespace, config: Config, path: str) -> int:
    lock = _locked(path, required=True)
    assert lock is not None
    current = gather(config, args, lock)
    changes = compare(lock, current.lock)
    # A server that could not be listed cannot be said to match: CI must not pass on it.
    unchecked = {
        name: why for name, why in current.unlisted_servers.items() if name in lock.servers
    }
    tampered = current.tampered
    if args.json:
        _print_json(
            {
                "lock": path,
                "changes": changes.to_dict(),
                "tampered": tampered,
                "unchecked_servers": unchecked,
            }
        )
    else:
        if tampered:
            print(_tampered_text(tampered))
        if changes:
            print(changes_text(changes))
        if not (changes or unchecked or tampered):
            print(f"no differences from the lock at {path}")
    for name, why in sorted(unchecked.items()):
        _warn(f"MCP server {_safe(name)} was not checked: {_safe(why)}")
    _note_skipped(current)
    return EXIT_FAILURE if changes or unchecked or tampered else EXIT_OK


def _update(args: argparse.Namespace, config: Config, path: str) -> int:
    from .._policy.lock_file import write_lock

    _check_folder(path)
    lock = _locked(path, required=True)
    assert lock is not None
    current = gather(config, args, lock)
    packs, servers = _targets(args.update, lock, current, config)
    changes = compare(lock, current.lock, packs=packs, servers=servers)
    kept_packs = {k: v for k, v in lock.packs.items() if k not in packs}
    kept_servers = {k: v for k, v in lock.servers.items() if k not in servers}
    new_packs = {k: v for k, v in current.lock.packs.items() if k in packs}
    new_servers = {k: v for k, v in current.lock.servers.items() if k in servers}
    updated = Lock(path, {**kept_packs, **new_packs}, {**kept_servers, **new_servers})
    if changes:
        write_lock(updated)
    if args.json:
        _print_json({"lock": path, "changes": changes.to_dict(), "written": bool(changes)})
    elif changes:
        print(changes_text(changes))
        print(f"updated {path}: {_what(changes)}")
    else:
        print(f"nothing changed since the lock at {path}; it is left as it was")
    for name in sorted(servers & current.unlisted_servers.keys()):
        _warn(
            f"MCP server {_safe(name)} was not listed "
            f"({_safe(current.unlisted_servers[name])}); its locked tools are kept"
        )
    _note_skipped(current, only=packs)
    _warn_tampered(current, only=packs)
    return EXIT_OK


def _targets(
    targets: list[str], lock: Lock, current: Current, config: Config
) -> tuple[set[str], set[str]]:
    """``--update``'s TARGETs as pack ids and server names; every one when none is given."""
    known_packs = set(lock.packs) | set(current.lock.packs) | current.installed
    known_servers = set(lock.servers) | set(current.lock.servers) | set(config.mcp.servers)
    if not targets:
        return known_packs, known_servers
    packs, servers = set(), set()
    for target in targets:
        if target.startswith(MCP_PREFIX):
            name = target[len(MCP_PREFIX) :]
            if name not in known_servers:
                hint = did_you_mean(target, [MCP_PREFIX + s for s in known_servers])
                raise CliError(
                    f"no MCP server {target!r} in the config or the lock{hint}",
                    EXIT_USAGE,
                )
            servers.add(name)
            continue
        from .._policy.config import plugin_id

        pack = plugin_id(target)
        if pack not in known_packs:
            known = sorted(known_packs) + [MCP_PREFIX + s for s in known_servers]
            raise CliError(
                f"no pack {target!r} installed or in the lock{did_you_mean(target, known)}",
                EXIT_USAGE,
            )
        packs.add(pack)
    return packs, servers


# -- the state now ---------------------------------------------------------------------------


def gather(config: Config, args: argparse.Namespace, previous: Lock | None) -> Current:
    """Load packs and connect MCP servers with the lock off; what a lock of them holds.

    A server that does not list its tools keeps its entry of ``previous``.
    """
    from toolreg import discover_builtin_tools, load_plugins, registry

    from .._discovery.entrypoints import find_packs
    from .._loaders.stdout_guard import stdout_to_stderr
    from ._logs import quiet_loading

    installed = {pack.plugin_id: pack for pack in find_packs()}
    # Checked before anything loads: code that is not what its RECORD says is neither run
    # nor locked, here as on every load under a lock.
    from .._policy.admission import check_enabled

    enabled = [
        p for p in installed.values() if check_enabled(p.plugin_id, config, os.environ) is None
    ]
    tampered = _tampered(enabled)
    plugins = config.plugins._replace(disabled=(*config.plugins.disabled, *tampered))
    unlocked = config._replace(lock=config.lock._replace(path=None), plugins=plugins)
    with stdout_to_stderr(), quiet_loading(getattr(args, "verbose", False)):
        discover_builtin_tools()
        report = load_plugins(unlocked)
    packs, skipped = {}, {}
    for outcome in report:
        record = installed.get(outcome.id)
        if record is None:
            continue  # a local folder plugin: there is no RECORD to hold it to
        if outcome.id in tampered:
            if previous is not None and outcome.id in previous.packs:
                packs[outcome.id] = previous.packs[outcome.id]
            continue
        if outcome.status != "loaded":
            skipped[outcome.id] = outcome.status + (f": {outcome.reason}" if outcome.reason else "")
            continue
        pack = _locked_pack(config, outcome, record, registry)
        if pack is None:
            skipped[outcome.id] = "its RECORD could not be read (an editable install?)"
            continue
        packs[outcome.id] = pack
    servers, unlisted = _servers(config, unlocked, args, previous)
    return Current(
        Lock(config.lock.path or "", packs, servers),
        skipped,
        unlisted,
        tampered,
        set(installed),
    )


def _tampered(packs: Iterable[PackRecord]) -> dict[str, list[str]]:
    """Each of these packs whose installed files differ from its RECORD, with what differs."""
    from .._discovery.file_hashes import FileHashes
    from .._discovery.record_check import read_record, tampered_with_requirements
    from .._discovery.requirements import installed_requirements

    hashes = FileHashes()
    found = {}
    for pack in packs:
        required = installed_requirements(pack.path)
        problems = tampered_with_requirements(read_record(pack.path), required, hashes)
        if problems:
            found[pack.plugin_id] = problems
    hashes.save()
    return found


def _locked_pack(
    config: Config, outcome: PluginOutcome, record: PackRecord, registry: ToolRegistry
) -> LockedPack | None:
    from .._contract.definition_digest import digest, entry_definition
    from .._discovery.record_check import read_record
    from .._discovery.requirements import installed_requirements
    from .._loaders.pack_lock import locked_requirements

    installed = read_record(record.path)
    if installed is None:
        return None
    tools = {}
    for name in registry.get_all_tool_names():
        if registry.get_owner(name) != outcome.id:
            continue
        entry = registry.get_entry(name)
        if entry is None:  # pragma: no cover - listed a moment ago
            continue
        definition = entry_definition(entry)
        tools[name] = LockedTool(digest(definition), shown(definition))
    return LockedPack(
        distribution=record.distribution,
        version=record.version,
        record=installed.digest,
        files=installed.files,
        tools=tools,
        hooks=tuple(sorted({*outcome.hooks, *outcome.hooks_withheld})),
        override=config.plugins.entry(outcome.id).allow_tool_override,
        requires=locked_requirements(installed_requirements(record.path)),
    )


def _servers(
    config: Config, unlocked: Config, args: argparse.Namespace, previous: Lock | None
) -> tuple[dict[str, LockedServer], dict[str, str]]:
    """Each configured server's listing as a lock holds it, and why any was not listed."""
    from .._contract.definition_digest import digest, mcp_definition

    configured = config.mcp.servers
    if not configured:
        return {}, {}
    links: dict[str, ServerLink] = {}
    if any(server.enabled for server in configured.values()):
        links = _connect(unlocked)
    servers, unlisted = {}, {}
    for name, server in sorted(configured.items()):
        link = links.get(name)
        listing = link.listing if link is not None else None
        if listing is None:
            if not server.enabled:
                why = "disabled in the config"
            elif link is None:
                why = "not started (its toolset is off, or the MCP extra is missing)"
            else:
                why = f"unreachable ({link.state}: {link.last_error or 'no listing'})"
            unlisted[name] = why
            if previous is not None and name in previous.servers:
                servers[name] = previous.servers[name]
            continue
        tools = {}
        for tool in listing:
            definition = mcp_definition(tool)
            tools[str(tool.get("name"))] = LockedTool(digest(definition), shown(definition))
        servers[name] = LockedServer(tools)
    return servers, unlisted


def _connect(config: Config) -> dict[str, ServerLink]:
    from toolreg import registry, start_mcp

    from . import _progress

    names = [name for name, server in sorted(config.mcp.servers.items()) if server.enabled]

    def statuses() -> list[dict[str, Any]]:
        from toolreg import get_mcp_manager

        manager = get_mcp_manager(registry)
        return manager.status() if manager is not None else []

    try:
        with _progress.connecting(names, statuses):
            manager = start_mcp(config, registry)
    except ImportError as exc:
        _warn(f"{exc}; the MCP servers are not listed")
        return {}
    return manager.links


# -- output ----------------------------------------------------------------------------------


def _note_skipped(current: Current, only: set[str] | None = None) -> None:
    skipped = {k: v for k, v in current.skipped_packs.items() if only is None or k in only}
    if skipped:
        listed = "; ".join(f"{_safe(k)} ({_safe(v)})" for k, v in sorted(skipped.items()))
        _note(f"not locked, as they did not load: {listed}")


def _note_unlisted(current: Current, previous: Lock | None) -> None:
    for name, why in sorted(current.unlisted_servers.items()):
        kept = previous is not None and name in previous.servers
        then = "its locked tools are kept as they were" if kept else "it is not locked"
        (_warn if kept else _note)(f"MCP server {_safe(name)} not listed: {_safe(why)}; {then}")


def _tampered_text(tampered: dict[str, list[str]]) -> str:
    lines = []
    for pack_id, problems in sorted(tampered.items()):
        lines.append(f"pack {_safe(pack_id)}: tampered")
        lines.extend(f"  {_safe(problem)}" for problem in problems)
    return "\n".join(lines)


def _warn_tampered(current: Current, only: set[str] | None = None) -> None:
    for pack_id, problems in sorted(current.tampered.items()):
        if only is not None and pack_id not in only:
            continue
        kept = pack_id in current.lock.packs
        _warn(
            f"pack {_safe(pack_id)} was not loaded: its installed files do not match its "
            f"RECORD ({_safe('; '.join(problems[:3]))}{'; ...' if len(problems) > 3 else ''}); "
            + ("its locked entry is kept" if kept else "it is not locked")
            + "; reinstall it"
        )


def _what(changes: LockChanges) -> str:
    parts = [f"pack {p.plugin_id} ({p.status})" for p in changes.packs]
    parts += [f"mcp:{s.name} ({s.status})" for s in changes.servers]
    return _safe(", ".join(parts))


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _safe(text: str) -> str:
    return escape(text, keep_newlines=False)


def _note(message: str) -> None:
    print(f"toolreg: note: {message}", file=sys.stderr)


def _warn(message: str) -> None:
    print(f"toolreg: warning: {message}", file=sys.stderr)


def _print_json(data: Any) -> None:
    # ASCII only: a control character or a bidirectional override a pack or server put
    # in a name or description reaches the terminal as an escape, never as itself.
    print(json.dumps(data, indent=2, ensure_ascii=True, sort_keys=False))
