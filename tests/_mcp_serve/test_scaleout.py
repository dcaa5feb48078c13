"""Scale-out for real: three ``toolreg serve --stateless`` replicas behind HAProxy.

Opt-in (``-m scaleout``; ``make test-scaleout``, which CI runs): it needs the
``haproxy`` binary and takes about a minute. HAProxy runs with
``deploy/haproxy.cfg``, the config docs/deploy.md shows, and checks each
replica's ``/readyz``.

Each replica runs at most 2 calls at once (``--max-calls 2``): what one
replica can do is then bounded by its own capacity rather than by this
machine's CPUs, which all replicas and the clients share here. With 20
sessions calling a tool that waits 50 ms, one replica answers at most 40
calls/s and three 120. The figures are printed (``-rA`` shows them); only the outcomes of calls
are asserted, never timings.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scaleout_harness import Cluster, Tally, drive, haproxy_missing
from serve_harness import run

pytestmark = [
    pytest.mark.scaleout,
    pytest.mark.skipif(haproxy_missing() is not None, reason=str(haproxy_missing())),
]
pytest.importorskip("mcp")

import anyio  # noqa: E402  (after the importorskip: anyio comes with mcp)
import anyio.to_thread  # noqa: E402

SESSIONS = 20
MAX_CALLS = 2
THROUGHPUT_CALLS = 200


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    cluster = Cluster(tmp_path_factory.mktemp("scaleout"), MAX_CALLS)
    yield cluster
    cluster.stop()


def per_replica(cluster: Cluster, tally: Tally) -> dict[str, int]:
    names = cluster.pid_names()
    return {names.get(pid, f"pid {pid}"): n for pid, n in sorted(tally.by_pid.items())}


def test_three_replicas_behind_haproxy_against_one(cluster: Cluster) -> None:
    direct, balanced = Tally(), Tally()

    async def measure() -> None:
        await drive(cluster.replicas[0].url, direct, sessions=SESSIONS, calls=THROUGHPUT_CALLS)
        assert cluster.balancer is not None
        await drive(cluster.balancer.url, balanced, sessions=SESSIONS, calls=THROUGHPUT_CALLS)

    run(measure, timeout=120)
    speedup = balanced.calls_per_second / direct.calls_per_second
    print(f"\n1 replica, direct:   {direct.report()}")
    print(f"3 replicas, HAProxy: {balanced.report()}")
    print(f"answered per replica through HAProxy: {per_replica(cluster, balanced)}")
    print(f"throughput 3 replicas / 1 replica: {speedup:.2f}x (target >= 2.5x; not asserted)")
    for tally in (direct, balanced):
        assert (tally.sent, tally.answered, tally.lost) == (THROUGHPUT_CALLS,) * 2 + (0,)
    # Stateless: every replica serves every kind of session, no affinity needed.
    assert set(per_replica(cluster, balanced)) == {"replica1", "replica2", "replica3"}


def test_a_replica_killed_mid_run_loses_no_call(cluster: Cluster) -> None:
    """SIGKILL replica2 under load, restart it, and account for every call."""
    tally = Tally()
    stop = anyio.Event()
    events: list[str] = []
    restarted: list[str] = []

    async def answered_at_least(count: int) -> None:
        while tally.answered < count:
            await anyio.sleep(0.01)

    async def conductor() -> None:
        try:
            await answered_at_least(150)
            cluster.kill(1)
            events.append(f"killed replica2 after {tally.sent} calls sent")
            await answered_at_least(tally.answered + 150)
            replica = await anyio.to_thread.run_sync(cluster.restart, 1)
            pid = str(replica.proc.pid)
            restarted.append(pid)
            events.append(f"replica2 restarted (pid {pid}) after {tally.sent} calls sent")
            assert cluster.balancer is not None
            await anyio.to_thread.run_sync(cluster.balancer.wait_until, {"replica2": "UP"})
            events.append(f"HAProxy saw replica2 up after {tally.sent} calls sent")
            while tally.by_pid[pid] < 30:  # it takes its share again
                await anyio.sleep(0.01)
        finally:
            stop.set()

    async def scenario() -> None:
        assert cluster.balancer is not None
        async with anyio.create_task_group() as tg:
            tg.start_soon(conductor)
            await drive(
                cluster.balancer.url, tally, sessions=SESSIONS, more=lambda: not stop.is_set()
            )

    run(scenario, timeout=120)
    assert cluster.balancer is not None
    stats = cluster.balancer.stats()
    print("\n" + "\n".join(events))
    print(f"through HAProxy while replica2 was killed and restarted: {tally.report()}")
    print(f"answered per replica: {per_replica(cluster, tally)}")
    print(
        "HAProxy: "
        + ", ".join(
            f"{name} {row['status']} retries {row['wretr']} redispatches {row['wredis']}"
            for name, row in stats.items()
        )
    )
    failed = sum(tally.failed.values())
    assert tally.lost == 0
    assert tally.sent == tally.answered + failed
    # Only calls in flight on replica2 when it died may fail: one per session at most.
    assert failed <= SESSIONS, tally.report()
    assert tally.by_pid[restarted[0]] >= 30
