"""A server's tool listing → the registry entries that replace its toolset.

Every tool that cannot be registered is skipped with a reason, never the whole
listing: a tool ``toolreg.lock`` withholds (``lock_check``), a name two of the
server's tools share once sanitised, a name a tool of another server maps to as
well (``claims``), a name another toolset already owns, a schema the registry
refuses.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .._contract.entry import ToolEntry
from .._contract.names import registry_name, sanitise, wanted
from .._contract.schema_checks import check_registration
from .calls import call_sync
from .convert import KEEP_STRUCTURED, annotations, description, output_schema, parameters

if TYPE_CHECKING:
    from .link import ServerLink

logger = logging.getLogger("toolreg.mcp")


class McpToolHandler:
    """The registry's handler for one MCP tool: a sync call over the manager's loop."""

    __slots__ = ("link", "tool", "name", "has_output_schema")

    def __init__(
        self, link: ServerLink, tool: str, name: str, has_output_schema: bool = False
    ) -> None:
        self.link = link
        #: The tool's name on its server.
        self.tool = tool
        #: Its name in the registry.
        self.name = name
        #: Its entry has the server's output schema (see convert.KEEP_STRUCTURED).
        self.has_output_schema = has_output_schema

    def __call__(self, args: dict[str, Any], **_kwargs: Any) -> str | dict[str, Any]:
        keep = self.has_output_schema and KEEP_STRUCTURED.get()
        return call_sync(self.link, self.tool, self.name, args, keep_structured=keep)

    def __repr__(self) -> str:
        return f"<MCP tool {self.tool!r} of server {self.link.name!r}>"


def named_tools(link: ServerLink, listing: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Registry name → the kept tools that map to it, the one that gets it first.

    The same winner on every refresh, whatever order the server lists in: a
    tool whose name needed no change, else the first by name.
    """
    config = link.config
    by_name: dict[str, list[dict[str, Any]]] = {}
    for tool in listing:
        original = tool.get("name")
        if (
            isinstance(original, str)
            and original
            and wanted(original, config.include, config.exclude)
        ):
            by_name.setdefault(registry_name(link.name, original), []).append(tool)
    for tools in by_name.values():
        tools.sort(key=lambda t: (sanitise(t["name"]) != t["name"], t["name"]))
    return by_name


def build_entries(
    link: ServerLink,
    by_name: dict[str, list[dict[str, Any]]],
    check: Callable[[], Any],
    contested: dict[str, list[tuple[str, str]]],
    held: Mapping[str, str] | None = None,
) -> tuple[list[ToolEntry], list[tuple[ToolEntry, str]]]:
    """(entries to publish, [(skipped entry, reason)]) for ``named_tools``' result.

    ``contested`` holds the names other servers' tools map to as well, with
    those (server, tool) pairs: such a name goes to neither server. ``held``
    holds the tools the lock withholds (by the server's names), with the reason.
    """
    entries: list[ToolEntry] = []
    rejected: list[tuple[ToolEntry, str]] = []
    for name, (winner, *losers) in by_name.items():
        entry = _entry(link, name, winner, check)
        for loser in losers:
            reason = (
                f"MCP tool {loser['name']!r} of server {link.name!r} is skipped: its name "
                f"sanitises to {name!r}, which the server's tool {winner['name']!r} has"
            )
            rejected.append((_entry(link, name, loser, check), reason))
        refusal = _refusal(link, name, winner, contested.get(name), held)
        if refusal is None:
            try:
                check_registration(entry.name, entry.toolset, entry.schema, entry.handler)
            except ValueError as exc:
                refusal = f"MCP tool {winner['name']!r} of server {link.name!r} is skipped: {exc}"
        if refusal is not None:
            rejected.append((entry, refusal))
            continue
        entries.append(entry)
    return entries, rejected


def _refusal(
    link: ServerLink,
    name: str,
    tool: dict[str, Any],
    rivals: list[tuple[str, str]] | None,
    held: Mapping[str, str] | None = None,
) -> str | None:
    """Why ``tool`` may not have ``name``: the lock withholds it, or a rival server's
    tool, or another toolset, has the name."""
    if held:
        reason = held.get(tool["name"])
        if reason is not None:
            return reason
    skipped = f"MCP tool {tool['name']!r} of server {link.name!r} is skipped"
    if rivals:
        others = ", ".join(f"tool {t!r} of server {s!r}" for s, t in rivals)
        return (
            f"{skipped}: its name {name!r} is also the name of {others}; a name tools "
            "of two servers map to goes to neither (rename one of the servers)"
        )
    owner = link.registry.get_toolset_for_tool(name)
    if owner is not None and owner != link.toolset:
        return f"{skipped}: its name {name!r} belongs to toolset {owner!r}"
    return None


def _entry(
    link: ServerLink,
    name: str,
    tool: dict[str, Any],
    check: Callable[[], Any],
) -> ToolEntry:
    # A locked server's tools say only what the lock holds (see convert.description).
    locked = link.lock is not None and link.lock.locked is not None
    text = description(link.name, tool, title=not locked)
    schema = {"name": name, "description": text, "parameters": parameters(tool)}
    output, problem = output_schema(name, tool)
    if problem:
        logger.warning(
            "MCP tool %r of server %r: its outputSchema is left out: %s",
            tool["name"],
            link.name,
            problem,
        )
    return ToolEntry(
        name=name,
        toolset=link.toolset,
        schema=schema,
        handler=McpToolHandler(link, tool["name"], name, output is not None),
        check_fn=check,
        description=text,
        max_result_size_chars=link.config.max_result_size_chars,
        annotations=annotations(tool) or None,
        output_schema=output,
    )
