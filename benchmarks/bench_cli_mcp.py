"""What ``toolreg list`` saves by not starting MCP servers (their last known tools instead).

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_cli_mcp.py [--quick] [--json PATH]

Whole ``toolreg list --json`` processes, the median of fresh runs each:

- floor: no ``[mcp.servers]`` in the config;
- ``list`` with one stdio MCP server configured: its last known tools, from the
  cache file (target: within 1.25x of the floor, since nothing is started);
- ``list --mcp``: the server is started, listed and stopped (reported only).

The server is the test suite's ``tests/_mcp/servers/basic_server.py``, run
with this interpreter; it needs the MCP SDK (``pip install -e '.[dev]'``).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import Result, parse_run, report, run_case

REPO = Path(__file__).resolve().parents[1]
SERVER = REPO / "tests" / "_mcp" / "servers" / "basic_server.py"
#: Fresh processes per variant (the median is kept).
FULL_SAMPLES, QUICK_SAMPLES = 15, 3


def bench_list(root: Path, samples: int) -> list[Result]:
    plain = root / "plain.toml"
    plain.write_text("")
    with_server = root / "mcp.toml"
    with_server.write_text(
        f"[mcp.servers.bench]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(SERVER))}]\nconnect_timeout = 60\n"
    )
    env = dict(os.environ, TOOLREG_CACHE_DIR=str(root / "cache"), TOOLREG_PLUGINS="")
    variants = {
        "floor": ["--config", str(plain), "list", "--json"],
        "cached": ["--config", str(with_server), "list", "--json"],
        "mcp": ["--config", str(with_server), "list", "--mcp", "--json"],
    }

    def run(argv: list[str]) -> float:
        start = time.perf_counter_ns()
        subprocess.run(
            [sys.executable, "-m", "toolreg", *argv],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return time.perf_counter_ns() - start

    for argv in variants.values():  # warm-up; "mcp" runs first time here and fills the cache
        run(argv)
    times: dict[str, list[float]] = {v: [] for v in variants}
    for _ in range(samples):
        for variant, argv in variants.items():  # interleaved: noise hits each alike
            times[variant].append(run(argv))
    med = {variant: statistics.median(values) for variant, values in times.items()}
    note = f"median of {samples} processes"
    return [
        Result("list --json, no MCP server configured (floor)", med["floor"], med["floor"]),
        Result(
            "list --json, 1 server: its cached tools", med["cached"], med["floor"], 1.25, note=note
        ),
        Result("list --mcp --json, 1 server started", med["mcp"], med["floor"], note=note),
    ]


def main(argv: list[str] | None = None) -> int:
    args, cfg = parse_run(__doc__.splitlines()[0], argv)
    samples = QUICK_SAMPLES if args.quick else FULL_SAMPLES
    started = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix="toolreg-bench-cli-mcp-"))
    results: list[Result] = []
    try:
        run_case(results, "list", lambda: bench_list(root, samples))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    report(results, args, cfg, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
