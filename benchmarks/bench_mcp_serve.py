"""``toolreg serve`` against a bare MCP SDK server, over stdio and HTTP: round trips, as ratios.

Run from the repository root, with the MCP SDK installed (``pip install -e '.[mcp]'``)::

    .venv/bin/python benchmarks/bench_mcp_serve.py            # 1,000 calls per server, ~30 s
    .venv/bin/python benchmarks/bench_mcp_serve.py --quick    # 150 calls per server, ~10 s

All servers are subprocesses, measured in the same run, with the SDK's default
protocol negotiation (2026-07-28). Over stdio the SDK's ``Client`` starts them:

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

Over HTTP (streamable HTTP on 127.0.0.1, each server on its own port) the
same two run, plus ``toolreg serve`` with a bearer token
(``$TOOLREG_SERVE_TOKEN``), whose client sends ``Authorization`` with every
request. Both toolreg columns pay the Host/Origin check; the token column
adds the token check. The bare server has the SDK's own Host/Origin check.

Both transports are measured twice: with the SDK's default negotiation
(2026-07-28) and with ``mode="legacy"`` clients (the ``initialize`` handshake,
2025-11-25). Only the second pays for what toolreg does for handshake-era
sessions on every call: the call's log outbox (a client's default level is
``warning``, so every call has one) and, over HTTP, the event store that
keeps each stream's events for a client that resumes (the bare server keeps
none).

How to read it: the ratio of ``tools/call`` is the cost of toolreg's layer
(offered-set check, argument validation, dispatch, fair-share admission,
result conversion) over the SDK's own tool machinery, which also runs a sync
tool in a worker thread. The figures are dominated by the transport round trip
and the SDK's JSON-RPC handling, so expect ratios near 1. Compare ratios
across runs, not microseconds. The script reports only; the exit code is
always 0.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
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
import sys

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("bare")


@mcp.tool()
def ok() -> str:
    \"\"\"Return ok.\"\"\"
    return "ok"


if len(sys.argv) > 1:
    stateless = "--stateless" in sys.argv  # bench_serve_load.py's stateless rows
    mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]), stateless_http=stateless)
else:
    mcp.run()
"""

TOKEN = "bench-token-0123456789abcdef"


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


async def _time_cases(
    clients: dict[str, Any], calls: int, warmup: int, samples: dict[str, dict[str, list[float]]]
) -> None:
    """Warm up, then time interleaved tools/call and tools/list on every client."""
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


async def _measure_stdio(
    toolreg_args: list[str],
    bare_args: list[str],
    env: dict[str, str],
    calls: int,
    warmup: int,
    mode: str = "auto",
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
            transport = stdio_client(params, errlog=devnull)
            client = await stack.enter_async_context(Client(transport, mode=mode))
            tools = (await client.list_tools()).tools
            samples.setdefault("startup (spawn to first tools/list)", {})[label] = [
                time.perf_counter() - start
            ]
            if not any(tool.name == "ok" for tool in tools):
                raise RuntimeError(f"{label}: no 'ok' tool in {[t.name for t in tools]}")
            clients[label] = client
        await _time_cases(clients, calls, warmup, samples)
    return samples


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_until_accepting(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"the server on port {port} did not start")


async def _measure_http(
    toolreg_args: list[str],
    bare_args: list[str],
    env: dict[str, str],
    calls: int,
    warmup: int,
    mode: str = "auto",
) -> dict[str, dict[str, list[float]]]:
    from contextlib import AsyncExitStack

    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    servers = {
        "toolreg serve": (toolreg_args + ["--transport", "http", "--port"], {}, {}),
        "+ bearer token": (
            toolreg_args + ["--transport", "http", "--port"],
            {"TOOLREG_SERVE_TOKEN": TOKEN},
            {"Authorization": f"Bearer {TOKEN}"},
        ),
        "bare MCPServer": (bare_args, {}, {}),
    }
    samples: dict[str, dict[str, list[float]]] = {}
    clients: dict[str, Any] = {}
    async with AsyncExitStack() as stack:
        for label, (args, extra_env, headers) in servers.items():
            port = _free_port()
            process = subprocess.Popen(
                [sys.executable, *args, str(port)],
                env={**env, **extra_env},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            stack.callback(process.wait, 10)
            stack.callback(process.terminate)
            _wait_until_accepting(port, process)
            http = await stack.enter_async_context(httpx2.AsyncClient(headers=headers))
            url = f"http://127.0.0.1:{port}/mcp"
            transport = streamable_http_client(url, http_client=http)
            client = Client(transport, cache=None, mode=mode)
            clients[label] = await stack.enter_async_context(client)
        await _time_cases(clients, calls, warmup, samples)
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
    """One row per case: each server's median, then each toolreg column's ratio to the last."""
    labels = list(next(iter(samples.values())))
    *ours, bare = labels
    names = ["ratio"] if len(ours) == 1 else [f"{label.split()[-1]}/bare" for label in ours]
    ratios = [f"{name:>10}" for name in names]
    columns = " ".join(f"{label:>15}" for label in labels)
    header = f"{'case':<36} {columns} {' '.join(ratios)}  note"
    print(header)
    print("-" * len(header))
    for case, per_server in samples.items():
        medians = {label: statistics.median(per_server[label]) for label in labels}
        cells = " ".join(f"{_fmt(medians[label]):>15}" for label in labels)
        cuts = " ".join(f"{medians[label] / medians[bare]:>9.2f}x" for label in ours)
        first = per_server[ours[0]]
        if len(first) > 1:
            p90s = " vs ".join(_fmt(_p90(per_server[label])) for label in labels)
            extra = (medians[ours[0]] - medians[bare]) * 1e6
            note = f"median of {len(first)}; p90 {p90s}; {extra:+.0f} µs per call"
        else:
            note = "one sample each; includes interpreter start and tool loading"
        print(f"{case:<36} {cells} {cuts}  {note}")


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
            eras = (("auto", ""), ("legacy", ", handshake-era clients (2025-11-25)"))
            transports = (("stdio", _measure_stdio), ("streamable HTTP", _measure_http))
            tables = []
            for mode, era in eras:
                for name, measure_one in transports:
                    samples = anyio.run(
                        measure_one, toolreg_args, bare_args, env, calls, warmup, mode
                    )
                    tables.append((name + era, samples))
        print_header()
        for title, samples in tables:
            print(f"\n{title}")
            _report(samples)

    return run_reporting(measure)


def print_header() -> None:
    print(f"Python {sys.version.split()[0]}, {sys.platform}; SDK default protocol")


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
