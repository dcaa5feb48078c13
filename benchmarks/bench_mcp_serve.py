"""``toolreg serve`` over stdio against a bare MCP SDK server: per-call round trip, as ratios.

Run from the repository root, with the MCP SDK installed (``pip install -e '.[mcp]'``)::

    .venv/bin/python benchmarks/bench_mcp_serve.py            # 1,000 calls per server, ~10 s
    .venv/bin/python benchmarks/bench_mcp_serve.py --quick    # 150 calls per server, ~5 s

Both servers are subprocesses the SDK's ``Client`` starts over stdio, in the
same run, with the SDK's default protocol negotiation (2026-07-28):

- **toolreg serve**: ``python -m toolreg serve`` with a local folder plugin whose
  ``ok`` tool returns ``"ok"`` (built-ins load too, as they would in use);
- **bare MCPServer**: ``MCPServer("bare")`` with one ``@mcp.tool()`` ``ok``
  returning ``"ok"``, run with ``mcp.run()``.

After a warm-up, calls alternate between the two sessions (a noisy moment hits
both alike) and each call is timed with ``perf_counter``. Rows give the
**median** per-call round trip of each, the p90 in the note, and the ratio
toolreg / bare. ``tools/list`` is timed the same way (toolreg lists ~10 tools,
bare 1). The startup row is one sample each: spawn to the first ``tools/list``
answer, which includes loading built-ins and plugins.

How to read it: the ratio of ``tools/call`` is the cost of toolreg's layer
(offered-set check, argument validation, dispatch, result conversion) over the
SDK's own tool machinery, which also runs a sync tool in a worker thread. Both
figures are dominated by the stdio round trip and the SDK's JSON-RPC handling,
so expect a ratio near 1. Compare ratios across runs, not microseconds. The
script reports only; the exit code is always 0.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

PLUGIN = """\
from toolreg import registry

registry.register(
    "ok",
    "bench",
    {"name": "ok", "description": "Return ok.", "parameters": {"type": "object", "properties": {}}},
    lambda args: "ok",
)
"""

BARE = """\
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("bare")


@mcp.tool()
def ok() -> str:
    \"\"\"Return ok.\"\"\"
    return "ok"


mcp.run()
"""


def _setup(root: Path) -> tuple[list[str], list[str], dict[str, str]]:
    plugins = root / "plugins"
    plugins.mkdir()
    (plugins / "bench_ok.py").write_text(PLUGIN)
    config = root / "toolreg.toml"
    config.write_text(f"[plugins]\npaths = [{json.dumps(str(plugins))}]\n")
    (root / "bare.py").write_text(BARE)
    env = {k: v for k, v in os.environ.items() if k != "TOOLREG_DISABLE_PLUGIN_AUTOLOAD"}
    env.pop("TOOLREG_CONFIG", None)
    env["TOOLREG_PLUGINS"] = "local:bench_ok"
    env["TOOLREG_CACHE_DIR"] = str(root / "cache")
    toolreg = ["-m", "toolreg", "serve", "--config", str(config)]
    return toolreg, [str(root / "bare.py")], env


async def _measure(
    toolreg_args: list[str], bare_args: list[str], env: dict[str, str], calls: int, warmup: int
) -> dict[str, dict[str, list[float]]]:
    from contextlib import AsyncExitStack

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    samples: dict[str, dict[str, list[float]]] = {}
    clients: dict[str, Any] = {}
    devnull = open(os.devnull, "w")  # noqa: SIM115 - the servers' stderr, closed below
    async with AsyncExitStack() as stack:
        stack.callback(devnull.close)
        for label, args in (("toolreg serve", toolreg_args), ("bare MCPServer", bare_args)):
            params = StdioServerParameters(command=sys.executable, args=args, env=env)
            start = time.perf_counter()
            client = await stack.enter_async_context(Client(stdio_client(params, errlog=devnull)))
            tools = (await client.list_tools()).tools
            samples.setdefault("startup (spawn to first tools/list)", {})[label] = [
                time.perf_counter() - start
            ]
            if not any(tool.name == "ok" for tool in tools):
                raise RuntimeError(f"{label}: no 'ok' tool in {[t.name for t in tools]}")
            clients[label] = client
        for label, client in clients.items():
            for _ in range(warmup):
                result = await client.call_tool("ok", {})
            if result.is_error or result.content[0].text != "ok":
                raise RuntimeError(f"{label}: unexpected result {result}")
        for case, rounds in (("tools/call ok", calls), ("tools/list", max(calls // 5, 20))):
            per_server = samples.setdefault(case, {label: [] for label in clients})
            for _ in range(rounds):
                for label, client in clients.items():  # interleaved
                    start = time.perf_counter()
                    if case == "tools/list":
                        await client.list_tools()
                    else:
                        await client.call_tool("ok", {})
                    per_server[label].append(time.perf_counter() - start)
    return samples


def _fmt(seconds: float) -> str:
    if seconds >= 0.1:
        return f"{seconds * 1e3:.0f} ms"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.0f} µs"


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


def _report(samples: dict[str, dict[str, list[float]]]) -> None:
    header = f"{'case':<38} {'toolreg serve':>14} {'bare MCPServer':>15} {'ratio':>8}  note"
    print(header)
    print("-" * len(header))
    for case, per_server in samples.items():
        ours, bare = per_server["toolreg serve"], per_server["bare MCPServer"]
        mine, theirs = statistics.median(ours), statistics.median(bare)
        if len(ours) > 1:
            note = (
                f"median of {len(ours)}; p90 {_fmt(_p90(ours))} vs {_fmt(_p90(bare))}; "
                f"{(mine - theirs) * 1e6:+.0f} µs per call"
            )
        else:
            note = "one sample each; includes interpreter start and tool loading"
        print(f"{case:<38} {_fmt(mine):>14} {_fmt(theirs):>15} {mine / theirs:>7.2f}x  {note}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="150 calls per server instead of 1,000"
    )
    options = parser.parse_args(argv)
    calls, warmup = (150, 20) if options.quick else (1000, 100)

    def measure() -> None:
        import anyio

        with tempfile.TemporaryDirectory(prefix="bench-mcp-serve-") as tmp:
            toolreg_args, bare_args, env = _setup(Path(tmp))
            print(
                f"timing {calls} interleaved calls per server after {warmup} warm-up calls...",
                file=sys.stderr,
            )
            samples = anyio.run(_measure, toolreg_args, bare_args, env, calls, warmup)
        print_header()
        _report(samples)

    return run_reporting(measure)


def print_header() -> None:
    print(f"Python {sys.version.split()[0]}, {sys.platform}; stdio, SDK default protocol")


def run_reporting(measure: Callable[[], None]) -> int:
    """Run ``measure``, which prints its table; a missing SDK or a crash is said, never raised."""
    try:
        measure()
    except ImportError as exc:
        print(f"skipped: the MCP SDK is not installed ({exc}); pip install -e '.[mcp]'")
    except Exception:  # report, never fail the caller
        traceback.print_exc()
        print("ERROR: the benchmark did not complete (traceback on stderr)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
