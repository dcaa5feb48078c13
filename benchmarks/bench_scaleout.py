"""Throughput of stateless ``toolreg serve``: one replica direct against three behind HAProxy.

Run from the repository root, with the MCP SDK and the ``haproxy`` binary
(Debian: ``apt-get install -y haproxy``)::

    .venv/bin/python benchmarks/bench_scaleout.py            # 3 rounds of 600 calls, ~1 min
    .venv/bin/python benchmarks/bench_scaleout.py --quick    # 1 round of 200 calls, ~20 s

The setup is the scale-out test's (``tests/scaleout_harness.py``): three
``toolreg serve --transport http --stateless`` replicas on loopback, HAProxy
in front with ``deploy/haproxy.cfg``, and 20 MCP client sessions (half
2026-07-28, half handshake-era) calling ``nap``, a tool that waits 50 ms.

Rounds alternate: the same sessions' load straight at replica 1, then
through HAProxy at all three. Each row gives the best round's time per
answered call (wall time / answers, so the inverse of throughput) through
HAProxy as the value and straight at one replica as the floor; the ratio must
be <= 0.4, a speed-up of at least 2.5x.

The first row limits each replica to 2 calls at once (``--max-calls 2``), so
one replica's capacity (about 40 calls/s) is what limits it, as in a
deployment where each replica has its own machine. The second row is
``--max-calls 40`` (the default), for information: then the replicas share
this machine's CPUs with the clients and HAProxy, and the ratio shows how
CPU-bound the machine is, not what more machines would give. Without haproxy
the script says so and exits 0; it never asserts.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from functools import partial
from pathlib import Path

from harness import Result, print_table, run_case, write_json

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the scale-out test's own harness

from scaleout_harness import Cluster, Tally, drive, haproxy_missing  # noqa: E402

SESSIONS = 20
TARGET = 0.4  # ns per call through 3 replicas / ns per call at 1 replica: a 2.5x speed-up


def measure(max_calls: int, rounds: int, calls: int, target: float | None) -> list[Result]:
    """Best-of-``rounds`` ns per answered call, direct at one replica and through HAProxy."""
    import anyio

    with tempfile.TemporaryDirectory() as tmp:
        cluster = Cluster(Path(tmp), max_calls)
        try:
            assert cluster.balancer is not None
            direct, balanced = [], []
            for _ in range(rounds):
                for url, tallies in (
                    (cluster.replicas[0].url, direct),
                    (cluster.balancer.url, balanced),
                ):
                    tally = Tally()
                    anyio.run(partial(drive, url, tally, sessions=SESSIONS, calls=calls))
                    if tally.answered != calls or tally.lost:
                        raise RuntimeError(f"not every call was answered: {tally.report()}")
                    tallies.append(tally)
        finally:
            cluster.stop(show_logs=False)
    best_direct = max(direct, key=lambda t: t.calls_per_second)
    best_balanced = max(balanced, key=lambda t: t.calls_per_second)
    speedup = best_balanced.calls_per_second / best_direct.calls_per_second
    goal = f" (target >= {1 / target:g}x)" if target else ""
    return [
        Result(
            f"nap 50 ms, {SESSIONS} sessions, --max-calls {max_calls}",
            1e9 / best_balanced.calls_per_second,
            1e9 / best_direct.calls_per_second,
            target=target,
            note=(
                f"calls/s: 1 replica {best_direct.calls_per_second:.0f}, 3 behind HAProxy "
                f"{best_balanced.calls_per_second:.0f}; speed-up {speedup:.2f}x{goal}"
            ),
        )
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="one round of 200 calls")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()
    missing = haproxy_missing()
    if missing is not None:
        print(f"bench_scaleout: skipped: {missing}")
        return 0
    rounds, calls = (1, 200) if args.quick else (3, 600)
    results: list[Result] = []
    run_case(results, "max-calls 2", lambda: measure(2, rounds, calls, TARGET))
    run_case(results, "max-calls 40", lambda: measure(40, rounds, calls, None))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    print("value: ns per answered call through HAProxy (3 replicas); floor: at 1 replica")
    print(f"{os.cpu_count()} CPUs; 1-minute load average after the run: {load}")
    print_table(results)
    if args.json:
        meta = {"sessions": SESSIONS, "rounds": rounds, "calls": calls, "loadavg": load}
        write_json(args.json, results, meta)
    return 0


if __name__ == "__main__":
    sys.exit(main())
