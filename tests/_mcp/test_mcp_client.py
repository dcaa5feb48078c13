"""MCP servers' tools as toolsets: config, naming, results, refresh, failures, lifecycle.

The servers are real subprocesses (``tests/_mcp/servers/``) written with the
SDK's ``MCPServer``, spoken to over stdio and over streamable HTTP.
"""

from __future__ import annotations

import _thread
import concurrent.futures
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import toolreg  # noqa: E402
from conftest import FakeClock, schema  # noqa: E402
from toolreg import (  # noqa: E402
    ConfigError,
    ToolEntry,
    ToolRegistry,
    get_mcp_manager,
    is_tool_error,
    parse_config,
    start_mcp,
    stop_mcp,
)
from toolreg._contract.names import registry_name, sanitise, wanted  # noqa: E402
from toolreg._mcp.link import ReconnectPolicy  # noqa: E402
from toolreg.cli import _commands, _render, main  # noqa: E402

SERVERS = Path(__file__).parent / "servers"
PYTHON = sys.executable
#: Retry fast and never park, unless a test says otherwise.
FAST = ReconnectPolicy(initial_delay=0.05, max_delay=0.2, max_failures=1000, coalesce=0.02)


def toml_str(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def stdio_server(name: str, script: str, *args: str, extra: str = "") -> str:
    """A ``[mcp.servers.NAME]`` table running ``tests/_mcp/servers/SCRIPT`` over stdio."""
    argv = ", ".join(toml_str(a) for a in (str(SERVERS / script), *args))
    return (
        f"[mcp.servers.{name}]\ncommand = {toml_str(PYTHON)}\nargs = [{argv}]\n"
        f"connect_timeout = 20\n{textwrap.dedent(extra)}\n"
    )


def wait_for(predicate: Callable[[], Any], timeout: float = 10.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def launch_http(port: int, script: str = "basic_server.py") -> subprocess.Popen[bytes]:
    """A test server (the basic one) on streamable HTTP; returns once the port accepts."""
    process = subprocess.Popen([PYTHON, str(SERVERS / script), "http", str(port)])

    def accepting() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return True
        except OSError:
            return False

    wait_for(accepting, 20, "the HTTP server")
    return process


def gone(pid: int) -> bool:
    """Exited and reaped: a zombie would still have its /proc entry."""
    return not Path(f"/proc/{pid}").exists()


def server_pid(registry: ToolRegistry, tool: str) -> int:
    return int(registry.dispatch(tool, {}))


# -- config ----------------------------------------------------------------------------------


def test_config_reads_servers_with_defaults() -> None:
    config = parse_config(
        """
        [mcp.servers.files]
        command = "python"
        args = ["-m", "files"]
        env = { TOKEN = "x" }
        tools = { include = ["read_*"] }
        [mcp.servers.web-1]
        url = "https://example.com/mcp"
        headers = { Authorization = "Bearer t" }
        timeout = 5
        connect_timeout = 2.5
        refresh_interval = 60
        enabled = false
        max_result_size_chars = 5000
        """.replace("\n        ", "\n")
    )
    files, web = config.mcp.servers["files"], config.mcp.servers["web-1"]
    assert (files.transport, files.args, dict(files.env)) == (
        "stdio",
        ("-m", "files"),
        {"TOKEN": "x"},
    )
    assert (files.timeout, files.connect_timeout, files.refresh_interval) == (120.0, 30.0, None)
    assert files.enabled and files.include == ("read_*",) and files.exclude == ()
    assert (files.max_result_size_chars, web.max_result_size_chars) == (100_000, 5000)
    assert (web.transport, web.url, dict(web.headers)) == (
        "http",
        "https://example.com/mcp",
        {"Authorization": "Bearer t"},
    )
    assert (web.timeout, web.connect_timeout, web.refresh_interval, web.enabled) == (
        5.0,
        2.5,
        60.0,
        False,
    )
    assert toolreg.Config().mcp.servers == {}


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        ('command = "x"\nurl = "http://h/mcp"', "mcp.servers.s", "exactly one of"),
        ("args = []", "mcp.servers.s", "exactly one of"),
        ('url = "ftp://h"', "mcp.servers.s.url", "http:// or https://"),
        ('command = "x"\ntimeout = 0', "mcp.servers.s.timeout", "> 0"),
        ('command = "x"\nconnect_timeout = -1', "mcp.servers.s.connect_timeout", "> 0"),
        ('command = "x"\nrefresh_interval = "1"', "mcp.servers.s.refresh_interval", "> 0"),
        ('command = "x"\nenabled = "yes"', "mcp.servers.s.enabled", "true or false"),
        ('command = "x"\nargs = [1]', "mcp.servers.s.args", "array of strings"),
        ('command = "x"\nenv = { A = 1 }', "mcp.servers.s.env.A", "a string"),
        ('url = "http://h"\nheaders = []', "mcp.servers.s.headers", "a table"),
        ('url = "http://h"\nargs = ["a"]', "mcp.servers.s.args", "only applies with 'command'"),
        ('command = "x"\nheaders = {}', "mcp.servers.s.headers", "only applies with 'url'"),
        ('command = "x"\ntools = { include = "a" }', "mcp.servers.s.tools.include", "array"),
        ('command = "x"\ntools = { only = [] }', "mcp.servers.s.tools.only", "unknown key"),
        ('command = "x"\nretries = 3', "mcp.servers.s.retries", "unknown key"),
        ('command = "x"\nmax_result_size_chars = 0', "mcp.servers.s.max_result_size_chars", "> 0"),
        (
            'command = "x"\nmax_result_size_chars = true',
            "mcp.servers.s.max_result_size_chars",
            "> 0",
        ),
    ],
)
def test_config_errors_name_the_key(text: str, key: str, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(f"[mcp.servers.s]\n{text}\n", Path("/etc/toolreg.toml"))
    assert caught.value.key == key and words in caught.value.problem
    assert str(caught.value).startswith("/etc/toolreg.toml: ")


def test_config_rejects_bad_and_clashing_server_names() -> None:
    with pytest.raises(ConfigError, match=r"mcp\.servers\.a b: expected a server name"):
        parse_config('[mcp.servers."a b"]\ncommand = "x"\n')
    with pytest.raises(ConfigError, match="same tool names") as caught:
        parse_config('[mcp.servers.a-b]\ncommand = "x"\n[mcp.servers.a_b]\ncommand = "y"\n')
    assert caught.value.key == "mcp.servers.a_b"
    with pytest.raises(ConfigError, match=r"mcp\.other: unknown key"):
        parse_config("[mcp]\nother = 1\n")


# -- names and results, without a server ----------------------------------------------------


def test_names_are_sanitised_and_filters_let_include_win() -> None:
    assert sanitise("a.b-c d/é") == "a_b_c_d__"
    assert registry_name("my-srv", "read.file") == "mcp__my_srv__read_file"
    assert wanted("read_x", None, ())
    assert not wanted("nap", None, ("nap",)) and not wanted("exec_x", None, ("exec_*",))
    assert wanted("read_x", ("read_*",), ()) and not wanted("write", ("read_*",), ())
    assert wanted("read_x", ("read_*",), ("read_x",))  # include wins


def test_record_rejection_logs_a_decision_without_publishing(reg: ToolRegistry) -> None:
    entry = ToolEntry(name="x", toolset="mcp-s", schema=schema("x"), handler=lambda a: "")
    generation = reg.generation
    reg.record_rejection(entry, "because")
    (decision,) = reg.decisions()
    assert (decision.action, decision.tool, decision.owner, decision.reason) == (
        "rejected",
        "x",
        "mcp:s",
        "because",
    )
    assert reg.generation == generation and "x" not in reg


def test_import_toolreg_does_not_import_mcp() -> None:
    code = (
        "import sys, toolreg; toolreg.stop_mcp(); assert toolreg.get_mcp_manager() is None; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types', 'httpx2') "
        # toolreg._mcp.api is the SDK-free way in; everything else there needs the SDK.
        "or (m.startswith('toolreg._mcp.') and m != 'toolreg._mcp.api')]; "
        "print(bad); assert not bad"
    )
    subprocess.run([PYTHON, "-c", code], check=True, timeout=60)


def test_stop_without_start_is_a_no_op(reg: ToolRegistry) -> None:
    stop_mcp(reg)
    assert get_mcp_manager(reg) is None


# -- one manager, four servers: stdio and HTTP ----------------------------------------------


@pytest.fixture(scope="module")
def live() -> Iterator[tuple[ToolRegistry, Any, list[int]]]:
    """basic (all tools), picky (include/exclude, short timeout), skippy, and web (HTTP)."""
    port = free_port()
    http = launch_http(port)
    registry = ToolRegistry(clock=FakeClock())
    registry.register(
        "mcp__basic__owned", "host-tools", schema("mcp__basic__owned"), lambda a: "host"
    )
    config = parse_config(
        stdio_server("basic", "basic_server.py", extra='env = { GREETING = "hello" }')
        + stdio_server(
            "picky",
            "basic_server.py",
            extra="""
            timeout = 1.5
            tools = { include = ["echo", "na*"], exclude = ["echo", "pid"] }
            """,
        )
        + stdio_server(
            "skippy",
            "basic_server.py",
            extra='tools = { exclude = ["e*", "read*"] }\nmax_result_size_chars = 50',
        )
        + f'[mcp.servers.web]\nurl = "http://127.0.0.1:{port}/mcp"\n'
        + 'headers = { X-Toolreg-Test = "1" }\nconnect_timeout = 20\n'
    )
    manager = start_mcp(config, registry, policy=FAST)
    pids = [server_pid(registry, f"mcp__{name}__pid") for name in ("basic", "skippy")]
    yield registry, manager, pids
    stop_mcp(registry)
    http.terminate()
    http.wait(10)
    assert all(gone(pid) for pid in pids), "a stdio server outlived stop_mcp"


def test_every_server_connects(live) -> None:
    registry, manager, _ = live
    states = {s["name"]: (s["state"], s["transport"]) for s in manager.status()}
    assert states == {
        "basic": ("connected", "stdio"),
        "picky": ("connected", "stdio"),
        "skippy": ("connected", "stdio"),
        "web": ("connected", "http"),
    }


def test_tools_land_in_their_toolset_and_alias(live) -> None:
    registry, _, _ = live
    names = registry.get_tool_names_for_toolset("mcp-basic")
    assert names == registry.get_tool_names_for_toolset("basic")
    assert {"mcp__basic__echo", "mcp__basic__picture", "mcp__basic__read_file"} <= set(names)
    assert all(registry.get_owner(name) == "mcp:basic" for name in names)
    definition = registry.get_definition("mcp__basic__echo")["function"]
    assert definition["description"] == "[server basic] Say it back."
    assert definition["parameters"]["properties"]["text"]["type"] == "string"
    assert definition["parameters"]["required"] == ["text"]
    assert registry.availability("mcp__basic__echo") == (True, "")


def test_calls_return_text_errors_images_and_structured_content(live) -> None:
    registry, _, _ = live
    assert registry.dispatch("mcp__basic__echo", {"text": "hi"}) == "hi"
    assert registry.dispatch("mcp__basic__two_lines", {}) == "first\nsecond"
    failed = registry.dispatch("mcp__basic__fail", {"message": "boom"})
    assert is_tool_error(failed) and "boom" in json.loads(failed)["error"]
    picture = registry.dispatch("mcp__basic__picture", {})
    assert picture["_multimodal"] is True
    assert [block["type"] for block in picture["content"]] == ["text", "image"]
    assert picture["content"][1]["mimeType"] == "image/png"
    assert json.loads(registry.dispatch("mcp__basic__numbers", {})) == {"total": 3, "items": [1, 2]}
    assert registry.dispatch("mcp__basic__env", {"name": "GREETING"}) == "hello"
    invalid = json.loads(registry.dispatch("mcp__basic__echo", {}))
    assert invalid["error_type"] == "invalid_arguments"  # checked against the server's schema


def test_a_servers_annotations_and_output_schema_are_kept(live) -> None:
    from toolreg._mcp.convert import KEEP_STRUCTURED

    registry, _, _ = live
    echo = registry.get_entry("mcp__basic__echo")
    assert dict(echo.annotations) == {"title": "Echo", "readOnlyHint": True, "idempotentHint": True}
    assert echo.output_schema["properties"]["result"]["type"] == "string"
    assert not registry.get_entry("mcp__basic__pid").annotations
    assert registry.get_entry("mcp__basic__two_lines").output_schema is None
    mcp = registry.get_definition("mcp__basic__echo", format="mcp")
    assert mcp["annotations"]["readOnlyHint"] is True
    assert mcp["outputSchema"] == echo.output_schema
    # A host gets the server's text, as ever; toolreg serve gets the object too.
    assert registry.dispatch("mcp__basic__echo", {"text": "hi"}) == "hi"
    token = KEEP_STRUCTURED.set(True)
    try:
        kept = registry.dispatch("mcp__basic__echo", {"text": "hi"})
        plain = registry.dispatch("mcp__basic__two_lines", {})  # no output schema
    finally:
        KEEP_STRUCTURED.reset(token)
    assert kept == {
        "_multimodal": True,
        "content": [{"type": "text", "text": "hi"}],
        "structured": {"result": "hi"},
    }
    assert plain == "first\nsecond"


def test_results_are_capped_by_the_servers_limit(live) -> None:
    registry, _, _ = live
    # Default limit: a text past 100,000 characters is cut, with dispatch's marker.
    text = registry.dispatch("mcp__basic__big", {"chars": 300_000})
    assert text == "x" * 100_000 + "\n…[truncated 200000 of 300000 characters]"
    assert registry.dispatch("mcp__basic__big", {"chars": 100_000}) == "x" * 100_000
    # skippy's limit is 50: its picture's caption fits, its image does not.
    assert registry.dispatch("mcp__skippy__big", {"chars": 60}).startswith("x" * 50 + "\n…")
    picture = registry.dispatch("mcp__skippy__picture", {})
    assert [block.get("text") for block in picture["content"]] == [
        "a pixel",
        "…[truncated: image (88 characters) left out past 50 characters]",
    ]


def test_http_server_tools_work(live) -> None:
    registry, _, _ = live
    assert registry.dispatch("mcp__web__echo", {"text": "over http"}) == "over http"
    assert registry.dispatch("mcp__web__picture", {})["content"][1]["type"] == "image"


def test_include_and_exclude_filter_by_the_servers_names(live) -> None:
    registry, _, _ = live
    assert registry.get_tool_names_for_toolset("picky") == ["mcp__picky__echo", "mcp__picky__nap"]
    skippy = registry.get_tool_names_for_toolset("skippy")
    assert "mcp__skippy__picture" in skippy
    assert not [n for n in skippy if n.startswith(("mcp__skippy__e", "mcp__skippy__read"))]


def test_a_slow_call_times_out_and_the_session_survives(live) -> None:
    registry, _, _ = live
    started = time.monotonic()
    # Had the call waited for the nap, it would have answered: the timeout proves it did not.
    result = json.loads(registry.dispatch("mcp__picky__nap", {"seconds": 60}))
    assert time.monotonic() - started >= 1.5, "not before the server's timeout"
    assert result["error_type"] == "timeout" and "picky" in result["error"]
    assert registry.dispatch("mcp__picky__echo", {"text": "still here"}) == "still here"


def test_name_collisions_are_skipped_and_recorded_with_both_names(live) -> None:
    registry, _, _ = live
    # read.file and read-file both sanitise to read_file: one deterministic winner.
    assert registry.dispatch("mcp__basic__read_file", {}) == "dash"
    rejected = [d for d in registry.decisions() if d.action == "rejected"]
    clash = [d for d in rejected if d.tool == "mcp__basic__read_file"]
    assert len(clash) == 1  # recorded once, not on every refresh
    assert "'read.file'" in clash[0].reason and "'read-file'" in clash[0].reason
    # A name a host toolset already owns stays the host's.
    assert registry.dispatch("mcp__basic__owned", {}) == "host"
    assert registry.get_toolset_for_tool("mcp__basic__owned") == "host-tools"
    owned = [d for d in rejected if d.tool == "mcp__basic__owned"]
    assert owned and "'owned'" in owned[0].reason and "'host-tools'" in owned[0].reason
    assert owned[0].previous_toolset == "host-tools" and owned[0].toolset == "mcp-basic"


def test_refresh_on_demand_keeps_the_same_tools(live) -> None:
    registry, manager, _ = live
    generation = registry.generation
    link = manager.links["basic"]
    before = link._listing
    manager.refresh("basic")
    # The server was really asked again (a fresh listing arrived)...
    wait_for(lambda: link._listing is not before, 15, "the re-listing")
    # ...and an unchanged listing publishes nothing.
    assert link._listing == before
    assert registry.generation == generation


# -- refresh: listen (2026-07-28), list_changed (2025), polling -------------------------------


@pytest.fixture(scope="module")
def dynamic() -> Iterator[tuple[ToolRegistry, Any]]:
    registry = ToolRegistry()
    config = parse_config(
        stdio_server("modern", "dynamic_server.py")
        + stdio_server("legacy", "dynamic_server.py", "--legacy")
        + stdio_server("polled", "dynamic_server.py", "--silent", extra="refresh_interval = 0.2")
    )
    manager = start_mcp(config, registry, policy=FAST)
    yield registry, manager
    stop_mcp(registry)


def test_each_server_speaks_its_protocol_era(dynamic) -> None:
    registry, manager = dynamic
    versions = {s["name"]: s["protocol_version"] for s in manager.status()}
    assert versions == {"modern": "2026-07-28", "legacy": "2025-11-25", "polled": "2026-07-28"}
    assert registry.dispatch("mcp__legacy__version", {}) == "2025-11-25"


@pytest.mark.parametrize("server", ["modern", "legacy", "polled"])
def test_added_and_removed_tools_follow_the_server(dynamic, server: str) -> None:
    registry, _ = dynamic
    name = f"mcp__{server}__fresh"
    # Six tools to begin with, listed two per page: the listing followed the cursor.
    assert len(registry.get_tool_names_for_toolset(server)) >= 6
    assert registry.dispatch(f"mcp__{server}__grow", {"name": "fresh"}) == "grown"
    wait_for(lambda: name in registry, 5, f"{name} to appear")
    assert registry.dispatch(name, {}) == "I am fresh"
    assert (
        registry.get_definition(name)["function"]["description"]
        == f"[server {server}] Grown fresh."
    )
    assert registry.dispatch(f"mcp__{server}__shrink", {"name": "fresh"}) == "shrunk"
    wait_for(lambda: name not in registry, 5, f"{name} to go")


@pytest.mark.parametrize("server", ["modern", "legacy"])
def test_dispatch_never_misses_a_stable_tool_during_refreshes(dynamic, server: str) -> None:
    registry, _ = dynamic
    stable = [f"mcp__{server}__stable_a", f"mcp__{server}__stable_b"]
    generation = registry.generation
    stop = threading.Event()
    unknown: list[Any] = []
    calls = [0] * 8

    def hammer(index: int) -> None:
        while not stop.is_set():
            name = stable[index % 2]
            result = registry.dispatch(name, {"x": 1} if name.endswith("_a") else {})
            if is_tool_error(result) and "Unknown tool" in result:
                unknown.append(result)
            calls[index] += 1

    threads = [threading.Thread(target=hammer, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    try:
        # A burst of signals (coalesced), then swaps the test can see land.
        assert registry.dispatch(f"mcp__{server}__churn", {"rounds": 10}) == "churned"
        for index in range(3):
            name = f"mcp__{server}__temp_x{index}"
            registry.dispatch(f"mcp__{server}__grow", {"name": f"temp_x{index}"})
            wait_for(lambda name=name: name in registry, 5, f"{name} to appear")
            registry.dispatch(f"mcp__{server}__shrink", {"name": f"temp_x{index}"})
            wait_for(lambda name=name: name not in registry, 5, f"{name} to go")
    finally:
        stop.set()
        for thread in threads:
            thread.join(10)
    assert unknown == []
    assert min(calls) > 0
    assert registry.generation > generation  # the toolset really was swapped meanwhile
    assert not [n for n in registry.get_tool_names_for_toolset(server) if "temp_" in n]


# -- failures -----------------------------------------------------------------------------------


def test_killed_server_goes_unavailable_and_comes_back(tmp_path: Path) -> None:
    block = tmp_path / "block"
    clock = FakeClock()
    registry = ToolRegistry(clock=clock)
    config = parse_config(
        stdio_server(
            "victim", "basic_server.py", extra=f"env = {{ BLOCK_FILE = {toml_str(str(block))} }}"
        )
    )
    start_mcp(config, registry, policy=FAST)
    try:
        first = server_pid(registry, "mcp__victim__pid")
        # A success is cached, and a failure soon after it would count as a flake:
        # the check must still tell the truth at once.
        assert registry.availability("mcp__victim__echo") == (True, "")
        block.touch()  # hold the server down once it dies
        os.kill(first, signal.SIGKILL)
        verdict = wait_for(
            lambda: (v := registry.availability("mcp__victim__echo")) and not v[0] and v,
            10,
            "the tools to go unavailable",
        )
        assert verdict[1].startswith("server victim disconnected")
        assert "mcp__victim__echo" not in {
            d["function"]["name"] for d in registry.get_definitions(["mcp__victim__echo"])
        }
        down = json.loads(registry.dispatch("mcp__victim__echo", {"text": "x"}))
        assert "victim" in down["error"] and down["error_type"] == "unavailable"
        assert get_mcp_manager(registry).status()[0]["state"] == "disconnected"
        block.unlink()
        wait_for(lambda: registry.availability("mcp__victim__echo")[0], 20, "the tools to return")
        assert registry.dispatch("mcp__victim__echo", {"text": "back"}) == "back"
        second = server_pid(registry, "mcp__victim__pid")
        assert second != first
    finally:
        stop_mcp(registry)
    assert wait_for(lambda: gone(first) and gone(second), 5, "no leftover processes")


def test_killed_http_server_comes_back_when_restarted() -> None:
    port = free_port()
    http = launch_http(port)
    registry = ToolRegistry()
    config = parse_config(f'[mcp.servers.remote]\nurl = "http://127.0.0.1:{port}/mcp"\n')
    start_mcp(config, registry, policy=FAST)
    try:
        assert registry.dispatch("mcp__remote__echo", {"text": "1"}) == "1"
        http.kill()
        http.wait(10)
        wait_for(lambda: not registry.availability("mcp__remote__echo")[0], 10, "unavailable")
        assert "server remote" in registry.availability("mcp__remote__echo")[1]
        http = launch_http(port)  # the same command, the same port
        wait_for(lambda: registry.availability("mcp__remote__echo")[0], 20, "available again")
        assert registry.dispatch("mcp__remote__echo", {"text": "2"}) == "2"
    finally:
        stop_mcp(registry)
        http.kill()
        http.wait(10)


def test_a_server_that_keeps_failing_is_parked_and_shown_by_doctor() -> None:
    config = parse_config(
        f"[mcp.servers.broken]\ncommand = {toml_str(PYTHON)}\n"
        'args = ["-c", "raise SystemExit(3)"]\n'
    )
    policy = ReconnectPolicy(initial_delay=0.01, max_delay=0.02, max_failures=3)
    manager = start_mcp(config, toolreg.registry, policy=policy)  # doctor reads the global one
    try:
        wait_for(lambda: manager.status()[0]["state"] == "parked", 15, "parking")
        report = _commands.doctor_report()
        (server,) = report["mcp_servers"]
        assert (server["name"], server["state"], server["failures"]) == ("broken", "parked", 3)
        assert server["last_error"]
        text = _render.doctor_report(report)
        assert "MCP servers not connected (1):" in text and "broken: parked after 3" in text
    finally:
        stop_mcp()
    assert _commands.doctor_report()["mcp_servers"] == []


def test_connect_timeout_bounds_a_server_that_never_answers(reg: ToolRegistry) -> None:
    reg.register("local", "host", schema("local"), lambda a: "local works")
    config = parse_config(
        f"[mcp.servers.mute]\ncommand = {toml_str(PYTHON)}\n"
        f"args = [{toml_str(str(SERVERS / 'silent_server.py'))}]\nconnect_timeout = 0.5\n"
    )
    starter = threading.Thread(target=start_mcp, args=(config, reg), kwargs={"policy": FAST})
    starter.start()
    try:
        assert reg.dispatch("local", {}) == "local works"  # other tools work meanwhile
        starter.join(30)  # a hang guard; the bound itself is the connect_timeout error below
        assert not starter.is_alive(), "start_mcp waited past the server's connect_timeout"
        (status,) = get_mcp_manager(reg).status()
        assert status["state"] == "disconnected" and "connect_timeout" in status["last_error"]
        assert reg.get_tool_names_for_toolset("mcp-mute") == []
    finally:
        stop_mcp(reg)


def test_toolsets_config_can_turn_a_server_off(reg: ToolRegistry) -> None:
    config = parse_config(
        stdio_server("quiet", "basic_server.py") + '[toolsets]\ndisabled = ["quiet"]\n'
    )
    manager = start_mcp(config, reg)
    try:
        assert manager.status()[0]["state"] == "disabled"
        assert reg.get_all_tool_names() == []
    finally:
        stop_mcp(reg)


# -- lifecycle and the CLI ----------------------------------------------------------------------


def test_stop_removes_toolsets_ends_processes_and_joins_the_thread() -> None:
    registry = ToolRegistry()
    config = parse_config(
        stdio_server("one", "basic_server.py") + stdio_server("two", "basic_server.py")
    )
    manager = start_mcp(config, registry, policy=FAST)
    pids = [server_pid(registry, f"mcp__{name}__pid") for name in ("one", "two")]
    assert all(Path(f"/proc/{pid}").exists() for pid in pids)
    stop_mcp(registry)
    assert registry.get_all_tool_names() == [] and get_mcp_manager(registry) is None
    assert all(gone(pid) for pid in pids)
    assert not manager._thread.is_alive()
    assert not [t for t in threading.enumerate() if t is manager._thread]


def test_cli_lists_mcp_tools_and_stops_the_servers(tmp_path: Path, capsys) -> None:
    config = tmp_path / "toolreg.toml"
    config.write_text(stdio_server("cli", "basic_server.py"), encoding="utf-8")
    assert main(["--config", str(config), "list", "--mcp", "--json", "--toolset", "cli"]) == 0
    tools = json.loads(capsys.readouterr().out)
    assert {"mcp__cli__echo", "mcp__cli__pid"} <= {t["name"] for t in tools}
    assert {t["owner"] for t in tools} == {"mcp:cli"}
    assert get_mcp_manager() is None
    assert "mcp__cli__echo" not in toolreg.registry
    assert main(["--config", str(config), "call", "mcp__cli__echo", '{"text": "via cli"}']) == 0
    assert capsys.readouterr().out.strip() == "via cli"


def processes_running(marker: str) -> list[int]:
    """Pids whose command line mentions ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to find the server")
def test_ctrl_c_while_connecting_stops_the_servers(tmp_path: Path) -> None:
    script = tmp_path / "mute_for_ctrl_c.py"
    script.write_text((SERVERS / "silent_server.py").read_text())
    config = tmp_path / "toolreg.toml"
    config.write_text(
        f"[mcp.servers.mute]\ncommand = {toml_str(PYTHON)}\nargs = [{toml_str(str(script))}]\n"
        "connect_timeout = 60\n",
        encoding="utf-8",
    )
    cli = subprocess.Popen(
        [PYTHON, "-m", "toolreg", "--config", str(config), "list", "--mcp"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONFAULTHANDLER": "1"},
    )
    try:
        wait_for(lambda: processes_running(str(script)), 30, "the server process")
        cli.send_signal(signal.SIGINT)
        # A hang guard, not a speed bound: closing a server that never answers
        # waits out the SDK's stdio shutdown, which a loaded machine stretches.
        try:
            _, err = cli.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            # Once seen under load: the kernel gave the SIGINT to a background
            # thread while the main thread sat in one long wait. Waits are now
            # sliced (wait_interruptibly); should it recur, keep where it hung
            # (faulthandler dumps every thread on SIGABRT) rather than fail the run.
            cli.send_signal(signal.SIGABRT)
            _, err = cli.communicate(timeout=30)
            pytest.xfail(f"intermittent: the CLI did not end after Ctrl-C:\n{err[-4000:]}")
    finally:
        cli.kill()
    assert cli.returncode == 130 and "interrupted" in err
    wait_for(lambda: not processes_running(str(script)), 30, "the server to end")


def test_backoff_doubles_with_jitter_up_to_the_cap() -> None:
    policy = ReconnectPolicy(initial_delay=1.0, max_delay=8.0)
    for failures, base in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (9, 8.0)]:
        delays = {policy.delay(failures) for _ in range(50)}
        assert all(base * 0.5 <= d <= base for d in delays) and len(delays) > 1


def test_a_server_that_crashes_right_after_connecting_is_parked(
    reg: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolreg._mcp.link import ServerLink

    async def connect_then_drop(self: ServerLink) -> None:
        self._connected_at = time.monotonic()

    monkeypatch.setattr(ServerLink, "_session", connect_then_drop)
    config = parse_config('[mcp.servers.flaky]\ncommand = "unused"\n')
    policy = ReconnectPolicy(initial_delay=0.01, max_delay=0.01, max_failures=3, stable_after=60)
    manager = start_mcp(config, reg, policy=policy)
    try:
        wait_for(lambda: manager.status()[0]["state"] == "parked", 5, "parking")
        assert manager.status()[0]["failures"] == 3
    finally:
        stop_mcp(reg)


def test_waiting_for_servers_notices_a_signal_given_to_another_thread() -> None:
    """A Ctrl-C the kernel hands to a background thread still interrupts the wait."""
    from toolreg._mcp.manager import wait_interruptibly

    later: concurrent.futures.Future[str] = concurrent.futures.Future()
    # interrupt_main sets the flag a signal sets, without waking the main thread:
    # as when the kernel delivers SIGINT to another thread. One long wait notices
    # it only once the future is done; a main thread that wakes up to look sees
    # it while the servers are still connecting.
    threading.Timer(0.2, _thread.interrupt_main).start()
    finish = threading.Timer(5.0, later.set_result, ("connected",))
    finish.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            wait_interruptibly(later, 60)
        assert not later.done(), "Ctrl-C was noticed only after the wait ended"
    finally:
        finish.cancel()
    done: concurrent.futures.Future[int] = concurrent.futures.Future()
    done.set_result(7)
    assert wait_interruptibly(done, 1) == 7
    failed: concurrent.futures.Future[int] = concurrent.futures.Future()
    failed.set_exception(TimeoutError("the coroutine's own"))
    with pytest.raises(TimeoutError, match="the coroutine's own"):
        wait_interruptibly(failed, 5)
