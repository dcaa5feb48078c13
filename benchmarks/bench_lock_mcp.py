"""What ``toolreg.lock`` adds to an MCP server's listing, at 1,000 tools.

Run from the repository root::

    .venv/bin/python benchmarks/bench_lock_mcp.py [--quick] [--json PATH]

A link's ``_register_tools`` (what every connect and every refresh that found
a change runs: name the tools, build the entries, swap the toolset) for one
listing of 1,000 realistic tools, with no lock and with a lock that names
every tool unchanged (each definition is digested and compared). Both are
timed in the same samples, a fresh publish each time. Rows:

- ``no lock``: the baseline;
- ``locked``: against that baseline;
- ``lock check added``: locked minus baseline, against the 2 ms budget per
  1,000 tools (the target: a ratio <= 1);
- ``check_listing alone``: the lock check by itself (report only);
- ``unchanged re-listing``: a refresh that found nothing new, locked against
  unlocked (neither checks again: nothing is published; report only).

The script reports; it never fails. See benchmarks/README.md.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import sys
import threading
import time
from typing import Any

from bench_core import realistic_schema
from harness import Config, Result, parse_run, report, run_case, time_calls

from toolreg import ToolRegistry, parse_config
from toolreg._contract.definition_digest import digest, mcp_definition
from toolreg._mcp.link import ReconnectPolicy, ServerLink
from toolreg._mcp.lock_check import ServerLock, check_listing
from toolreg._policy.lock_file import LockedServer, LockedTool, shown

TOOLS = 1_000
#: The target: what the lock check may add per 1,000 tools on a listing.
BUDGET_NS = 2_000_000


def listing() -> list[dict[str, Any]]:
    """1,000 tools as ``tools/list`` gives them; every fourth read-only, every tenth structured."""
    tools = []
    for i in range(TOOLS):
        schema = realistic_schema(i)
        tool: dict[str, Any] = {
            "name": f"tool_{i:04d}",
            "description": schema["description"],
            "inputSchema": schema["parameters"],
        }
        if i % 4 == 0:
            tool["annotations"] = {"readOnlyHint": True, "title": f"Tool {i}"}
        if i % 10 == 0:
            tool["outputSchema"] = {
                "type": "object",
                "properties": {"count": {"type": "integer"}, "summary": {"type": "string"}},
            }
        tools.append(tool)
    return tools


def link(tools: list[dict[str, Any]], lock: ServerLock | None) -> ServerLink:
    """A link off any loop (nothing here awaits), publishing into its own registry."""
    config = parse_config('[mcp.servers.bench]\ncommand = "unused"\n').mcp.servers["bench"]
    made = ServerLink(
        config,
        ToolRegistry(clock=lambda: 0.0),
        ReconnectPolicy(),
        asyncio.new_event_loop(),
        threading.current_thread(),
        lock=lock,
    )
    made._register_tools(copy.deepcopy(tools))  # a first publish, untimed
    return made


def locked(tools: list[dict[str, Any]]) -> ServerLock:
    return ServerLock(
        LockedServer(
            {
                t["name"]: LockedTool(digest(mcp_definition(t)), shown(mcp_definition(t)))
                for t in tools
            }
        )
    )


def bench_publish(cfg: Config) -> list[Result]:
    tools = listing()
    lock = locked(tools)
    plain, checked = link(tools, None), link(tools, lock)
    if len(checked.tool_names) != TOOLS or checked.lock_issues:
        raise RuntimeError("the locked link did not publish every tool unchanged")
    fresh = [copy.deepcopy(tools), copy.deepcopy(tools)]

    def forget() -> None:
        # Untimed: each sample publishes afresh, as a listing that changed does.
        plain._published = checked._published = None

    samples = max(10, cfg.samples // 4)
    times = time_calls(
        {
            "plain": lambda: plain._register_tools(fresh[0]),
            "locked": lambda: checked._register_tools(fresh[1]),
        },
        forget,
        samples,
    )
    added = times["locked"] - times["plain"]
    kept = [t for t in tools]
    names = [t["name"] for t in tools]
    alone = time_calls({"check": lambda: check_listing(lock, kept, names)}, lambda: None, samples)
    repeat = time_calls(
        {
            "plain": lambda: plain._register_tools(fresh[0]),
            "locked": lambda: checked._register_tools(fresh[1]),
        },
        lambda: None,
        samples,
    )
    note = f"min of {samples} single publishes"
    return [
        Result(f"_register_tools, {TOOLS:,} MCP tools, no lock", times["plain"], note=note),
        Result(
            f"_register_tools, {TOOLS:,} MCP tools, locked",
            times["locked"],
            times["plain"],
            added_ns=added,
            note=f"{added / 1e6:+.2f} ms over no lock; {note}",
        ),
        Result(
            f"lock check added per {TOOLS:,} MCP tools",
            added,
            BUDGET_NS,
            target=1.0,
            note="locked minus no lock, against the 2 ms budget",
        ),
        Result(
            f"check_listing alone, {TOOLS:,} tools",
            alone["check"],
            BUDGET_NS,
            note="digest and compare each tool; floor: the 2 ms budget",
        ),
        Result(
            f"unchanged re-listing, {TOOLS:,} tools, locked",
            repeat["locked"],
            repeat["plain"],
            note="nothing new: neither link publishes or checks; floor: no lock",
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    args, cfg = parse_run(__doc__.splitlines()[0], argv)
    started = time.perf_counter()
    print(f"toolreg MCP lock benchmark ({'quick' if args.quick else 'full'} run)", file=sys.stderr)
    logging.getLogger("toolreg.mcp").setLevel(logging.ERROR)
    results: list[Result] = []
    run_case(results, "publish", lambda: bench_publish(cfg))
    report(results, args, cfg, started, {"tools": TOOLS, "budget_ns": BUDGET_NS})
    return 0


if __name__ == "__main__":
    sys.exit(main())
