"""Stateless ``toolreg serve`` replicas behind HAProxy, and MCP load through them.

Shared by ``tests/_mcp_serve/test_scaleout.py`` and ``benchmarks/bench_scaleout.py``,
so the benchmark measures the setup the test proves. HAProxy runs with the
very config ``docs/deploy.md`` shows (``deploy/haproxy.cfg``), its addresses
given in the environment as that file expects.

The ``nap`` tool (a local plugin) waits 50 ms and returns the pid of the
replica that ran it, so the load can tell which replica answered.
"""

from __future__ import annotations

import base64
import csv
import io
import os
import secrets
import shutil
import socket
import subprocess
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from serve_harness import HttpServer, ServeSetup, stop_process

ROOT = Path(__file__).resolve().parent.parent
HAPROXY_CONFIG = ROOT / "deploy" / "haproxy.cfg"
REPLICA_NAMES = ("replica1", "replica2", "replica3")

NAP_PLUGIN = """\
import os
import time

from toolreg import registry


def _nap(args):
    time.sleep(0.05)
    return str(os.getpid())


registry.register(
    "nap",
    "scale",
    {
        "name": "nap",
        "description": "Wait 50 ms; return the pid of the server that ran it.",
        "parameters": {"type": "object", "properties": {}},
    },
    _nap,
)
"""

#: A call with no answer after this many seconds is an error on the client's side.
CALL_TIMEOUT = 10.0
#: A call with neither an answer nor an error after this many seconds is lost.
LOST_AFTER = 30.0


def haproxy_missing() -> str | None:
    """Why the scale-out setup cannot run here, or None."""
    if shutil.which("haproxy") is None:
        return (
            "haproxy is not installed (Debian: apt-get install -y haproxy); "
            ".ci/run installs it where it can"
        )
    return None


def free_ports(count: int) -> list[int]:
    """``count`` loopback ports free a moment ago (held together, so all differ)."""
    held = [socket.socket() for _ in range(count)]
    try:
        for sock in held:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in held]
    finally:
        for sock in held:
            sock.close()


def scale_setup(tmp: Path) -> ServeSetup:
    """A ``ServeSetup`` whose replicas also load the ``nap`` tool."""
    setup = ServeSetup.create(tmp)
    (setup.plugin.parent / "scale.py").write_text(NAP_PLUGIN)
    setup.env["TOOLREG_PLUGINS"] = "local:demo,local:scale"
    return setup


def start_replica(setup: ServeSetup, port: int, max_calls: int) -> HttpServer:
    """``toolreg serve --transport http --stateless`` on ``port``, tools loaded."""
    return HttpServer(setup, "--stateless", "--port", str(port), "--max-calls", str(max_calls))


class Balancer:
    """HAProxy in the foreground with ``deploy/haproxy.cfg``, its addresses from the env."""

    _STATS_AUTH = "toolreg-test:" + secrets.token_urlsafe(16)

    def __init__(self, replica_ports: list[int], log_path: Path) -> None:
        self.port, self.stats_port = free_ports(2)
        env = {
            **os.environ,
            "TOOLREG_LB_BIND": f"127.0.0.1:{self.port}",
            "TOOLREG_LB_STATS": f"127.0.0.1:{self.stats_port}",
            # The config serves the stats page only behind a password.
            "TOOLREG_LB_STATS_AUTH": self._STATS_AUTH,
        }
        for index, port in enumerate(replica_ports, start=1):
            env[f"TOOLREG_REPLICA_{index}"] = f"127.0.0.1:{port}"
        check = subprocess.run(
            ["haproxy", "-c", "-q", "-f", str(HAPROXY_CONFIG)],
            env=env,
            capture_output=True,
            text=True,
        )
        if check.returncode != 0:
            raise RuntimeError(f"haproxy refused {HAPROXY_CONFIG}: {check.stderr}")
        self.log = open(log_path, "a")  # noqa: SIM115 - lives as long as HAProxy
        self.proc = subprocess.Popen(
            ["haproxy", "-db", "-f", str(HAPROXY_CONFIG)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def stats(self) -> dict[str, dict[str, str]]:
        """HAProxy's CSV stats of the backend's servers, by server name."""
        url = f"http://127.0.0.1:{self.stats_port}/stats;csv"
        basic = base64.b64encode(self._STATS_AUTH.encode()).decode()
        request = urllib.request.Request(url, headers={"Authorization": f"Basic {basic}"})
        with urllib.request.urlopen(request, timeout=5) as reply:
            text = reply.read().decode().lstrip("# ")
        rows = csv.DictReader(io.StringIO(text))
        return {r["svname"]: r for r in rows if r["pxname"] == "toolreg" and r["type"] == "2"}

    def wait_until(self, states: dict[str, str], timeout: float = 30) -> None:
        """Wait until HAProxy reports each named server in the given state (``UP``, ``DOWN``)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                seen = {name: row["status"] for name, row in self.stats().items()}
            except OSError:
                seen = {}
            if all(seen.get(name) == state for name, state in states.items()):
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"HAProxy never reported {states}; last seen {seen}")
            time.sleep(0.1)

    def stop(self) -> None:
        stop_process(self.proc)
        self.log.close()


@dataclass
class Tally:
    """What became of the calls the sessions sent."""

    sent: int = 0
    answered: int = 0
    failed: Counter[str] = field(default_factory=Counter)
    lost: int = 0
    #: Answers per pid of the replica that ran the call.
    by_pid: Counter[str] = field(default_factory=Counter)
    #: Sessions that had to connect again after their connection broke.
    reconnects: int = 0
    seconds: float = 0.0

    @property
    def calls_per_second(self) -> float:
        return self.answered / self.seconds if self.seconds else 0.0

    def report(self) -> str:
        failed = sum(self.failed.values())
        lines = [
            f"calls sent {self.sent}, answered {self.answered}, "
            f"failed with an error {failed}, lost {self.lost} "
            f"({self.seconds:.1f} s, {self.calls_per_second:.0f} answered/s, "
            f"{self.reconnects} reconnects)"
        ]
        lines += [f"  error x{n}: {reason}" for reason, n in self.failed.most_common()]
        return "\n".join(lines)


def describe(exc: BaseException) -> str:
    """A one-line name for an error; the first leaf of an exception group."""
    while getattr(exc, "exceptions", None):  # an exception group (3.10: the backport's)
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    return f"{type(exc).__name__}: {str(exc)[:80]}"


async def drive(
    url: str,
    tally: Tally,
    *,
    sessions: int,
    calls: int | None = None,
    more: Callable[[], bool] | None = None,
) -> None:
    """``sessions`` MCP clients calling ``nap`` through ``url`` until ``calls`` are sent
    (or ``more()`` says stop); half negotiate 2026-07-28, half use the handshake.

    Every session connects first; the clock (``tally.seconds``) runs from the
    moment all are connected to the last answer.
    """
    import anyio
    from mcp import Client

    def go_on() -> bool:
        if calls is not None and tally.sent >= calls:
            return False
        return more() if more is not None else True

    connected = 0
    all_connected = anyio.Event()

    def arrived() -> None:
        nonlocal connected
        connected += 1
        if connected == sessions:
            all_connected.set()

    async def call(client: Any) -> None:
        tally.sent += 1
        with anyio.move_on_after(LOST_AFTER):
            try:
                result = await client.call_tool("nap", {})
            except Exception as exc:
                tally.failed[describe(exc)] += 1
                return
            text = "".join(b.text for b in result.content if b.type == "text")
            if result.is_error:
                tally.failed[f"tool error: {text[:80]}"] += 1
            else:
                tally.answered += 1
                tally.by_pid[text] += 1
            return
        tally.lost += 1

    async def session(index: int) -> None:
        mode = "legacy" if index % 2 else "auto"
        first = True
        while go_on():
            pending = False
            try:
                async with Client(url, mode=mode, read_timeout_seconds=CALL_TIMEOUT) as client:
                    if first:
                        first = False
                        arrived()
                        await all_connected.wait()
                    while go_on():
                        pending = True
                        await call(client)
                        pending = False
            except Exception as exc:  # the connection itself broke: connect again
                if pending:  # the call in flight ends with this error
                    tally.failed[describe(exc)] += 1
                tally.reconnects += 1
                await anyio.sleep(0.05)
        if first:  # stopped before it ever connected: the others must not wait for it
            arrived()

    async with anyio.create_task_group() as tg:
        for index in range(sessions):
            tg.start_soon(session, index)
        await all_connected.wait()
        started = time.perf_counter()
    tally.seconds = time.perf_counter() - started


class Cluster:
    """Three stateless replicas on fixed loopback ports, and HAProxy in front of them."""

    def __init__(self, tmp: Path, max_calls: int) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.setup = scale_setup(tmp)
        self.max_calls = max_calls
        self.ports = free_ports(len(REPLICA_NAMES))
        self.replicas: list[HttpServer] = []
        #: Names of replicas that were killed, by their old pid.
        self.killed: dict[str, str] = {}
        self.balancer: Balancer | None = None
        try:
            with ThreadPoolExecutor(len(self.ports)) as pool:
                starting = [pool.submit(self._start, port) for port in self.ports]
                self.replicas = [future.result() for future in starting]
            self.balancer = Balancer(self.ports, tmp / "haproxy.log")
            self.balancer.wait_until(dict.fromkeys(REPLICA_NAMES, "UP"))
        except BaseException:
            self.stop()
            raise

    def _start(self, port: int) -> HttpServer:
        return start_replica(self.setup, port, self.max_calls)

    def pid_names(self) -> dict[str, str]:
        """Replica names by the pid the ``nap`` tool answers with, killed ones too."""
        names = {pid: f"{name} (killed)" for pid, name in self.killed.items()}
        for name, replica in zip(REPLICA_NAMES, self.replicas, strict=True):
            names[str(replica.proc.pid)] = name
        return names

    def kill(self, index: int) -> None:
        """SIGKILL one replica: no goodbye to its clients or to HAProxy."""
        replica = self.replicas[index]
        replica.proc.kill()
        replica.proc.wait()
        self.killed[str(replica.proc.pid)] = REPLICA_NAMES[index]

    def restart(self, index: int) -> HttpServer:
        """Start the replica again on its port; returns once its tools are loaded."""
        self.replicas[index] = self._start(self.ports[index])
        return self.replicas[index]

    def stop(self, *, show_logs: bool = True) -> None:
        if self.balancer is not None:
            self.balancer.stop()
        for replica in self.replicas:
            replica.stop()
        self.setup.close(show_log=show_logs)
