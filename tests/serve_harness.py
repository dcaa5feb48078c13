"""``toolreg serve`` as a real subprocess: a local plugin, its config, and an HTTP server handle.

The plugin's ``demo`` toolset answers at once; its ``slow`` toolset's ``hold``
tool writes ``start TAG`` to ``$HOLD_LOG``, waits until ``$HOLD_RELEASE``
exists, then writes ``end TAG``, so a test can see which calls ran and when.
Its ``chatter`` toolset logs: ``chatty`` once at each Python level on the
``toolreg.demo`` logger (set to DEBUG, so the client's level is the only
filter; ``timed_chatty`` the same from a worker thread, as it has a timeout),
``flood`` ``count`` warnings, ``steps`` three warnings before and three after
it waits for ``$HOLD_RELEASE``, and ``notice`` through ``log_to_client`` (it
returns what that returned). Its ``progress`` toolset reports progress and
logs through a ``ToolContext``: ``count_up`` (``@tool``, ``steps`` reports then
a notice), ``timed_count_up`` (the same on a worker thread, as it has a
timeout) and ``manual_count_up`` (hand-written, through ``current_context``).
``RawSession`` speaks HTTP by hand, to drop and resume streams.
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import re
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

PLUGIN = """\
import json
import logging
import os
import time
from pathlib import Path

from toolreg import ToolContext, current_context, registry, tool
from toolreg._contract.client_log import log_to_client

demo_log = logging.getLogger("toolreg.demo")
demo_log.setLevel(logging.DEBUG)

print("demo plugin: import chatter that must not reach the protocol stream")


def _schema(tool, **properties):
    return {
        "name": tool,
        "description": f"The {tool} tool.",
        "parameters": {
            "type": "object",
            "properties": properties,
            "required": list(properties),
        },
    }


def _greet(args):
    print("demo plugin: handler chatter")
    return f"hello {args['name']}"


def _boom(args):
    raise RuntimeError("kaboom")


def _note(line):
    with open(os.environ["HOLD_LOG"], "a") as log:
        log.write(line + "\\n")


def _hold(args):
    _note(f"start {args['tag']}")
    release = Path(os.environ["HOLD_RELEASE"])
    while not release.exists():
        time.sleep(0.01)
    _note(f"end {args['tag']}")
    return f"released {args['tag']}"


registry.register("greet", "demo", _schema("greet", name={"type": "string"}), _greet)
registry.register("boom", "demo", _schema("boom"), _boom)
registry.register("whoami", "demo", _schema("whoami"), lambda args: str(os.getpid()))
registry.register("hold", "slow", _schema("hold", tag={"type": "string"}), _hold)


def _chatty(args):
    for level in ("debug", "info", "warning", "error"):
        getattr(demo_log, level)("%s says %s", args["tag"], level)
    return "chatted"


def _flood(args):
    for n in range(args["count"]):
        demo_log.warning("flood %d", n)
    return "flooded"


def _steps(args):
    for n in (1, 2, 3):
        demo_log.warning("step %d", n)
    release = Path(os.environ["HOLD_RELEASE"])
    while not release.exists():
        time.sleep(0.01)
    for n in (4, 5, 6):
        demo_log.warning("step %d", n)
    return "stepped"


def _notice(args):
    sent = [log_to_client("notice", "a notice"), log_to_client("debug", "a debug line")]
    return json.dumps(sent)


registry.register("chatty", "chatter", _schema("chatty", tag={"type": "string"}), _chatty)
registry.register(
    "timed_chatty", "chatter", _schema("timed_chatty", tag={"type": "string"}), _chatty, timeout=30
)
registry.register("flood", "chatter", _schema("flood", count={"type": "integer"}), _flood)
registry.register("steps", "chatter", _schema("steps"), _steps)
registry.register("notice", "chatter", _schema("notice"), _notice)


def _count(steps, ctx):
    for n in range(1, steps + 1):
        ctx.report_progress(n, steps, f"step {n} of {steps}")
    ctx.log("notice", f"counted to {steps}")
    return f"counted {steps}"


@tool(toolset="progress")
def count_up(steps: int, ctx: ToolContext) -> str:
    \"\"\"Report progress at each step, then log a notice.\"\"\"
    return _count(steps, ctx)


@tool(toolset="progress", timeout=30)
def timed_count_up(steps: int, ctx: ToolContext) -> str:
    \"\"\"count_up on a worker thread.\"\"\"
    return _count(steps, ctx)


registry.register(
    "manual_count_up",
    "progress",
    _schema("manual_count_up", steps={"type": "integer"}),
    lambda args: _count(args["steps"], current_context()),
)
"""


#: Appended to PLUGIN (then SIGHUP) to change the offered tools while serving.
EXTRA_TOOL = """
registry.register("late_tool", "demo", _schema("late_tool"), lambda args: "late")
"""


@dataclass
class ServeSetup:
    """A local plugin folder, a config naming it, and an env that loads only it."""

    tmp: Path
    plugin: Path
    config: Path
    env: dict[str, str]
    logs: list[TextIO] = field(default_factory=list)

    @classmethod
    def create(cls, tmp: Path) -> ServeSetup:
        plugins = tmp / "plugins"
        plugins.mkdir()
        (plugins / "demo.py").write_text(PLUGIN)
        config = tmp / "toolreg.toml"
        config.write_text(f"[plugins]\npaths = [{json.dumps(str(plugins))}]\n")
        dropped = ("TOOLREG_DISABLE_PLUGIN_AUTOLOAD", "TOOLREG_CONFIG", "TOOLREG_SERVE_TOKEN")
        env = {k: v for k, v in os.environ.items() if k not in dropped}
        env["TOOLREG_PLUGINS"] = "local:demo"  # only ours, whatever packs the venv holds
        env["HOLD_LOG"] = str(tmp / "hold.log")
        env["HOLD_RELEASE"] = str(tmp / "hold.release")
        return cls(tmp, plugins / "demo.py", config, env)

    @property
    def log_path(self) -> Path:
        """Where the servers' stderr goes; printed at teardown so a failure shows it."""
        return self.tmp / "serve.log"

    def open_log(self) -> TextIO:
        log = open(self.log_path, "a")  # noqa: SIM115 - lives as long as the server
        self.logs.append(log)
        return log

    def holds(self) -> list[str]:
        """The lines the ``hold`` tool wrote so far."""
        path = Path(self.env["HOLD_LOG"])
        return path.read_text().splitlines() if path.exists() else []

    def release_holds(self) -> None:
        Path(self.env["HOLD_RELEASE"]).touch()

    def close(self, *, show_log: bool = True) -> None:
        self.release_holds()  # no hold call may outlive the test
        for log in self.logs:
            log.close()
        if show_log and self.log_path.exists():
            print("---- toolreg serve stderr ----\n" + self.log_path.read_text())


def serve_args(setup: ServeSetup, *extra: str) -> list[str]:
    return ["-m", "toolreg", "serve", "--config", str(setup.config), *extra]


def stdio_client_for(setup: ServeSetup, *extra: str) -> Any:
    """An SDK stdio transport that starts ``toolreg serve``; its stderr goes to a file."""
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=serve_args(setup, *extra), env=setup.env, cwd=setup.tmp
    )
    return stdio_client(params, errlog=setup.open_log())


def run(main_fn: Callable[[], Awaitable[None]], timeout: float = 30) -> None:
    import anyio

    async def bounded() -> None:
        with anyio.fail_after(timeout):
            await main_fn()

    anyio.run(bounded)


def text_of(result: Any) -> str:
    return "".join(block.text for block in result.content if block.type == "text")


class User:
    """An ``elicitation_callback`` that keeps each request and answers with ``answer``."""

    def __init__(self, answer: Callable[[], Any]) -> None:
        self.answer = answer
        self.asked: list[Any] = []

    async def __call__(self, context: Any, params: Any) -> Any:
        self.asked.append(params)
        return self.answer()


def accept(approve: bool = True) -> Callable[[], Any]:
    """A ``User`` answer: the form accepted, ``approve`` ticked or not."""
    import mcp_types as types

    return lambda: types.ElicitResult(action="accept", content={"approve": approve})


def decline() -> Callable[[], Any]:
    """A ``User`` answer: the form declined."""
    import mcp_types as types

    return lambda: types.ElicitResult(action="decline")


def assert_asked_to_approve_hold(params: Any, arguments: str) -> None:
    """``params`` is the form that asks the user about ``hold`` (its rule) with ``arguments``."""
    assert params.mode == "form"
    assert "Tool hold needs your approval" in params.message
    assert "'hold'" in params.message  # the rule that asked
    assert arguments in params.message
    assert params.requested_schema["properties"]["approve"]["type"] == "boolean"


def with_rules(setup: ServeSetup, rules: str) -> ServeSetup:
    """``setup`` with ``rules`` appended to its config; a ``hold`` that runs returns at once."""
    setup.release_holds()
    setup.config.write_text(setup.config.read_text() + rules)
    return setup


def error_of(result: Any) -> dict[str, Any]:
    """The JSON error of a tool result that is one."""
    assert result.is_error
    return json.loads(text_of(result))


def approval_target(
    transport: str, setup: ServeSetup, http_server: Callable[..., HttpServer], *extra: str
) -> Any:
    """A ``Client`` target serving ``demo`` and ``slow``: "stdio", "http" or "stateless" (HTTP)."""
    toolsets = ("--toolset", "demo", "--toolset", "slow", *extra)
    if transport == "stdio":
        return stdio_client_for(setup, *toolsets)
    if transport == "stateless":
        return http_server(*toolsets, "--stateless").url
    return http_server(*toolsets).url


class HttpServer:
    """``toolreg serve --transport http --port 0`` in a subprocess; finds its URL on stderr.

    It waits for the "serving" line (tools loaded) unless ``serving`` is False:
    then it returns as soon as the socket listens, while the tools still load.
    """

    def __init__(
        self,
        setup: ServeSetup,
        *extra: str,
        env: dict[str, str] | None = None,
        serving: bool = True,
    ) -> None:
        self.log = setup.open_log()
        self.proc = subprocess.Popen(
            [sys.executable, *serve_args(setup, "--transport", "http", "--port", "0", *extra)],
            env={**setup.env, **(env or {})},
            cwd=setup.tmp,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        found = re.search(r"listening on (http://\S+)", self.wait_for_line("listening on http"))
        assert found is not None
        self.url = found.group(1) + "/mcp"
        if serving:
            self.wait_serving()

    def wait_serving(self) -> None:
        """Wait for the line that says the tools are loaded and served."""
        self.wait_for_line(r" at http://\S+/mcp")

    def _pump(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.write(line)
            self.log.flush()
            self.lines.put(line)

    def next_line(self, what: str, timeout: float = 20) -> str:
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            self.stop()
            raise AssertionError(f"toolreg serve did not report {what}") from None

    def wait_for_line(self, pattern: str) -> str:
        """The next stderr line matching ``pattern`` (earlier lines are skipped)."""
        while True:
            line = self.next_line(repr(pattern))
            if re.search(pattern, line):
                return line

    @property
    def authority(self) -> str:
        """``host:port`` as the URL has it (IPv6 in brackets)."""
        return self.url.split("/")[2]

    def health(self, headers: dict[str, str] | None = None) -> dict[str, Any]:
        url = self.url.replace("/mcp", "/healthz")
        request = urllib.request.Request(url, headers=headers or {})
        with urllib.request.urlopen(request, timeout=5) as reply:
            return json.loads(reply.read())

    def status(self, method: str, path: str, headers: dict[str, str]) -> int:
        """The HTTP status of one raw request; ``headers`` may override ``Host``."""
        return self.fetch(method, path, headers)[0]

    def fetch(
        self, method: str, path: str, headers: dict[str, str] | None = None
    ) -> tuple[int, bytes, http.client.HTTPMessage]:
        """Status, body and headers of one raw request.

        ``headers`` may override ``Host``, or drop it with ``{"Host": ""}``.
        """
        headers = dict(headers or {})
        host, _, port = self.authority.rpartition(":")
        connection = http.client.HTTPConnection(host.strip("[]"), int(port), timeout=10)
        try:
            body = b"{}" if method == "POST" else None
            connection.putrequest(method, path, skip_host="Host" in headers)
            if headers.get("Host") == "":
                del headers["Host"]
            for name, value in {"Content-Type": "application/json", **headers}.items():
                connection.putheader(name, value)
            connection.endheaders(body)
            reply = connection.getresponse()
            return reply.status, reply.read(), reply.headers
        finally:
            connection.close()

    def probe(self, path: str, headers: dict[str, str] | None = None) -> tuple[int, Any]:
        """``GET path``: the status and the JSON body."""
        status, body, _ = self.fetch("GET", path, headers)
        return status, json.loads(body)

    def stop(self) -> None:
        stop_process(self.proc)


def stop_process(proc: subprocess.Popen[Any]) -> None:
    """SIGTERM, then SIGKILL if it has not ended within 10 s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


SSE_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@dataclass
class SseEvent:
    """One server-sent event: its ``id``, ``retry`` and ``data`` (JSON, or "" when priming)."""

    id: str | None = None
    retry: int | None = None
    data: str = ""

    @property
    def message(self) -> dict[str, Any]:
        return json.loads(self.data)


def read_events(stream: Any) -> Iterator[SseEvent]:
    """The events of an open httpx2 streaming response, as they arrive."""
    event = SseEvent()
    for line in stream.iter_lines():
        if not line:
            if event.id is not None or event.data:
                yield event
            event = SseEvent()
            continue
        field_name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field_name == "id":
            event.id = value
        elif field_name == "retry":
            event.retry = int(value)
        elif field_name == "data":
            event.data += value


class RawSession:
    """A handshake-era HTTP session spoken by hand, so a test can drop and resume streams."""

    def __init__(self, url: str, protocol: str = "2025-11-25") -> None:
        import httpx2

        self.url = url
        self.protocol = protocol
        self.streams: list[tuple[Any, Any]] = []
        with httpx2.Client(headers=SSE_HEADERS, timeout=10) as connection:
            reply = connection.post(url, json=self.request(0, "initialize", self._init_params()))
            reply.raise_for_status()
            self.id = reply.headers.get("mcp-session-id")  # None when stateless
            self.headers = {**SSE_HEADERS, "mcp-protocol-version": protocol}
            if self.id is not None:
                self.headers["mcp-session-id"] = self.id
            notice = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            connection.post(url, json=notice, headers=self.headers).raise_for_status()

    @staticmethod
    def request(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}

    def _init_params(self) -> dict[str, Any]:
        client = {"name": "raw", "version": "1"}
        return {"protocolVersion": self.protocol, "capabilities": {}, "clientInfo": client}

    def _open(self, method: str, **kwargs: Any) -> Any:
        """A streaming request on a connection of its own, left open until :meth:`drop`."""
        import httpx2

        connection = httpx2.Client(headers=self.headers, timeout=10)
        stream = connection.stream(method, self.url, **kwargs)
        reply = stream.__enter__()
        reply.raise_for_status()
        self.streams.append((connection, stream))
        return reply

    def start_call(self, request_id: int, tool: str, args: dict[str, Any]) -> Any:
        """POST a tools/call and leave its answer stream open; the open response."""
        body = self.request(request_id, "tools/call", {"name": tool, "arguments": args})
        return self._open("POST", json=body)

    def resume(self, last_event_id: str) -> Any:
        """GET the stream again after ``last_event_id``; the open response."""
        return self._open("GET", headers={"Last-Event-ID": last_event_id})

    def drop(self) -> None:
        """Close every connection, without ending the session (no DELETE): a crashed client."""
        for connection, stream in self.streams:
            stream.__exit__(None, None, None)
            connection.close()
        self.streams = []
