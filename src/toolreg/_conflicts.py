"""The conflict rules: may this registration take that name?

A pure function of the new entry, who is registering it, the entry it would
displace and that entry's owner; the table applies the verdict.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._decisions import Action
from ._entry import ToolEntry
from ._ownership import Owner, PluginPolicy

MCP_PREFIX = "mcp-"


def is_mcp(toolset: str) -> bool:
    return toolset.startswith(MCP_PREFIX)


@dataclass(frozen=True)
class Verdict:
    """``action`` None means rejected; ``refuse`` means raise PermissionError."""

    action: Action | None
    reason: str = ""
    refuse: bool = False


def judge(
    entry: ToolEntry,
    owner: Owner,
    plugins: list[PluginPolicy],
    override: bool,
    existing: ToolEntry | None,
    previous: Owner | None,
) -> Verdict:
    name, toolset = entry.name, entry.toolset
    for policy in plugins:
        if not policy.may_name(name):
            return Verdict(
                None,
                f"plugin {policy.plugin_id!r} may register only tools matching "
                f"{list(policy.tool_patterns or ())} "
                f"(plugins.entries.{policy.plugin_id}.tools); {name!r} is outside them",
                refuse=True,
            )
    if existing is None or previous is None:
        return Verdict("registered")
    if is_mcp(existing.toolset) and is_mcp(toolset) and not plugins:
        return Verdict("replaced")  # an MCP server refresh repaves its own tools
    # Same toolset is a reload only for the same party: a pack naming the
    # built-ins' toolset does not get to replace them quietly.
    same_party = previous.label == owner.label or not (previous.is_plugin or owner.is_plugin)
    if existing.toolset == toolset and same_party:
        return Verdict("replaced")
    if not override:
        return Verdict(
            None,
            f"tool {name!r} of toolset {toolset!r} ({owner.label}) conflicts with the "
            f"existing tool of toolset {existing.toolset!r} ({previous.label}); "
            "pass override=True to replace it",
        )
    refused = [p for p in plugins if not p.allowed]
    if refused:
        policy = refused[0]
        return Verdict(
            None,
            f"plugin {policy.plugin_id!r} may not override tool {name!r} "
            f"(toolset {existing.toolset!r}, owner {previous.label}) without operator "
            f"consent; set {policy.config_key} = true to allow it",
            refuse=True,
        )
    return Verdict("overridden")
