"""The write gate: every rule that decides whether a change to the registry is allowed.

Pure functions of what is asked, who asks (plugins innermost first; none: host code) and
what stands there; nothing else decides consent. The rules in prose: docs/registry.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from .._contract.entry import ToolEntry
from .._contract.names import MCP_PREFIX, is_mcp
from .decisions import Action
from .ownership import Owner

if TYPE_CHECKING:
    from .plugin_policy import PluginPolicy


# A NamedTuple, not a frozen dataclass: a fraction of the class-creation cost
# every process pays when it imports the registry.
class Ruling(NamedTuple):
    """``action`` None means rejected; ``refuse`` means raise PermissionError."""

    action: Action | None
    reason: str = ""
    refuse: bool = False


# The verdicts most writes get, made once: register runs for every tool.
_REGISTERED = Ruling("registered")
_REPLACED = Ruling("replaced")
_OVERRIDDEN = Ruling("overridden")

#: Tool names MCP servers' tools get (``mcp__<server>__<tool>``, see
#: ``_contract.names.registry_name``); like ``mcp-`` toolsets, no pack's.
MCP_TOOL_PREFIX = "mcp__"


def judge(
    entry: ToolEntry,
    owner: Owner,
    plugins: Sequence[PluginPolicy],
    override: bool,
    existing: ToolEntry | None,
    previous: Owner | None,
    alias_of: str | None = None,
    refresh: bool = False,
) -> Ruling:
    """May ``owner`` register ``entry``? ``alias_of`` is set when its toolset is an alias;
    ``refresh`` when ``replace_toolset`` writes a name its toolset already holds."""
    name, toolset = entry.name, entry.toolset
    if refresh and not plugins:
        return _REPLACED  # no plugin involved: the toolset's own tool, refreshed
    # Host or built-in code reloading its own tool, the commonest write: the
    # rules below come to this too (no plugin to name, one party, one toolset).
    if (
        previous is owner
        and not plugins
        and alias_of is None
        and existing is not None
        and existing.toolset == toolset
    ):
        return _REPLACED
    for policy in plugins:
        if not policy.may_name(name):
            return Ruling(
                None,
                f"plugin {policy.plugin_id!r} may register only tools matching "
                f"{list(policy.tool_patterns or ())} "
                f"(plugins.entries.{policy.plugin_id}.tools); {name!r} is outside them",
                refuse=True,
            )
    if plugins:
        refusal = judge_mcp_claim(name, toolset, alias_of, plugins[0])
        if refusal is not None:
            return refusal
        drift = judge_locked(entry, plugins)
        if drift is not None:
            return drift
    if alias_of is not None:
        return Ruling(
            None,
            f"tool {name!r} ({owner.label}): toolset {toolset!r} is an alias of "
            f"{alias_of!r}; register into a toolset of its own",
        )
    if existing is None or previous is None:
        return _REGISTERED
    if is_mcp(existing.toolset) and is_mcp(toolset) and not plugins:
        return _REPLACED  # an MCP server refresh repaves its own tools
    # Same toolset is a reload only for the same party: a pack naming the
    # built-ins' toolset does not get to replace them quietly.
    if existing.toolset == toolset and same_party(previous, owner):
        return _REPLACED
    if not override:
        return Ruling(
            None,
            f"tool {name!r} of toolset {toolset!r} ({owner.label}) conflicts with the "
            f"existing tool of toolset {existing.toolset!r} ({previous.label}); "
            "pass override=True to replace it",
        )
    refused = [p for p in plugins if not p.allowed]
    if refused:
        policy = refused[0]
        return Ruling(
            None,
            f"plugin {policy.plugin_id!r} may not override tool {name!r} "
            f"(toolset {existing.toolset!r}, owner {previous.label}) without operator "
            f"consent; set {policy.config_key} = true to allow it",
            refuse=True,
        )
    return _OVERRIDDEN


#: In the reason of every pack tool the lock withholds (a report files those as drifted).
DRIFTED = "drifted from the lock"


def judge_locked(entry: ToolEntry, plugins: Sequence[PluginPolicy]) -> Ruling | None:
    """A pack held to ``toolreg.lock`` may write only the tool definitions it locked.

    Every locked pack whose code is involved holds the write, so a locked pack's
    code cannot put an unreviewed definition in through another's. Rejected, not
    refused: the tool is withheld and the pack keeps loading (docs/lock.md).
    """
    for policy in plugins:
        locked = policy.locked_tools
        if locked is None:
            continue
        from .._contract.definition_digest import digest, entry_definition

        pid, name = policy.plugin_id, entry.name
        expected = locked.get(name)
        if expected is None:
            why = "the lock has no such tool for it"
        elif digest(entry_definition(entry)) != expected:
            why = "its definition (description, schemas or annotations) differs from the locked one"
        else:
            continue
        return Ruling(
            None,
            f"tool {name!r} of plugin {pid!r} {DRIFTED}: {why}; withheld until the "
            f"operator reviews it and runs `toolreg lock --update {pid}`",
        )
    return None


def judge_mcp_claim(
    name: str, toolset: str, alias_of: str | None, policy: PluginPolicy
) -> Ruling | None:
    """A pack may not register into an MCP server's toolset, nor under an MCP tool's name.

    Those belong to MCP servers alone: a pack that holds ``mcp__victim__z`` in
    ``mcp-victim`` would answer that server's calls while it is down. Whatever
    the operator allowed, in process or isolated (``acting_for``), by
    ``register``, ``register_many`` or ``replace_toolset``.
    """
    if is_mcp(toolset):
        rule = f"toolsets starting with {MCP_PREFIX!r}"
    elif alias_of is not None and is_mcp(alias_of):
        rule = f"toolsets starting with {MCP_PREFIX!r} ({toolset!r} is an alias of {alias_of!r})"
    elif name.startswith(MCP_TOOL_PREFIX):
        rule = f"tool names starting with {MCP_TOOL_PREFIX!r}"
    else:
        return None
    return Ruling(
        None,
        f"plugin {policy.plugin_id!r} may not register tool {name!r} in toolset "
        f"{toolset!r}: {rule} belong to MCP servers alone",
        refuse=True,
    )


def same_party(a: Owner, b: Owner) -> bool:
    """Host and built-in code are one party; a plugin is only ever itself."""
    if a.is_plugin or b.is_plugin:
        return a.label == b.label and a.policy == b.policy
    return True


def judge_removal(name: str, owner: Owner, callers: Sequence[PluginPolicy], how: str) -> str | None:
    """Why the calling plugins may not remove ``name`` (owned by ``owner``) with ``how``.

    None if they may.
    """
    for policy in callers:
        if policy == owner.policy or policy.allowed:
            continue
        return (
            f"plugin {policy.plugin_id!r} may not remove tool {name!r} owned by "
            f"{owner.label} (with {how}); set {policy.config_key} = true to allow it"
        )
    return None


def judge_host_action(what: str, callers: Sequence[PluginPolicy]) -> str | None:
    """Why the calling plugins may not ``what`` (an action for the host only); None if host."""
    # Consent is for overriding tools, not for changing the registry's rules:
    # plugin code never acts for the host, whatever the operator allowed.
    if not callers:
        return None
    return (
        f"plugin {callers[0].plugin_id!r} may not {what}: that is for the host "
        "application, never for plugin code"
    )


def judge_alias(alias: str, toolset: str, toolsets: Sequence[str] | frozenset[str]) -> str | None:
    """Why ``alias`` may not name ``toolset``; None if it may."""
    if not alias or not isinstance(alias, str):
        return f"invalid toolset alias {alias!r}"
    if alias in toolsets:
        return f"alias {alias!r} would hide the toolset of the same name"
    if is_mcp(alias):
        return f"alias {alias!r}: names starting with {MCP_PREFIX!r} belong to MCP servers"
    if toolset not in toolsets:
        return f"alias {alias!r}: there is no toolset {toolset!r} (an alias needs tools)"
    return None
