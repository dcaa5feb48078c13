"""Every route to a handler meets the operator's permissions: a deny rule stops each one.

``ROUTES`` is the list of call routes (docs/permissions.md lists the same). Each
route has one check in ``CHECKS``; each check first shows its handler leaves a
trace when allowed (a count, a line in a file), then that a ``deny`` rule stops
the call before the handler runs, with the rule named. ``test_every_route_is_checked``
keeps the two lists equal.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolreg import ToolRegistry, apply_config, parse_config

#: The call routes to a handler, the order docs/permissions.md gives them.
ROUTES = (
    "dispatch",
    "adispatch",
    "dispatch_many",
    "adispatch_many",
    "dispatch with progress=",
    "dispatch of a tool with a timeout",
    "dispatch with dispatch hooks installed",
    "dispatch with tracing on",
    "toolreg call",
    "toolreg serve (stdio)",
    "toolreg serve (HTTP)",
    "integrations.langchain",
    "integrations.llm",
    "integrations.openai_agents",
    "integrations.pydantic_ai",
    "an isolated pack's tool",
    "an MCP server's tool",
)

DENY = '[permissions]\ndeny = ["{tool}"]\n'
PARAMS = {"type": "object", "properties": {"x": {"type": "string"}}}


def denial(result: Any, tool: str) -> None:
    """``result`` is the tool_error of a call a ``deny`` rule naming ``tool`` stopped."""
    text = result if isinstance(result, str) else json.dumps(result)
    error = json.loads(text)
    assert (error["code"], error["rule"]) == ("denied", tool), error
    assert error["error"] == f"denied by the operator's rule '{tool}'"


class Counted:
    """A registry whose tool ``traced`` counts its runs."""

    def __init__(self, **options: Any) -> None:
        self.reg = ToolRegistry()
        self.runs = 0

        def handler(args: dict[str, Any]) -> str:
            self.runs += 1
            return "ran"

        self.reg.register("traced", "t", {"parameters": PARAMS}, handler, **options)

    def deny(self) -> None:
        apply_config(parse_config(DENY.format(tool="traced")), self.reg)

    def stops(self, call: Callable[[ToolRegistry], Any], check: Callable[[Any], None]) -> None:
        """``call`` runs the handler without rules, and not with ``deny = ["traced"]``."""
        call(self.reg)
        assert self.runs == 1, "the route reaches the handler when allowed"
        self.deny()
        check(call(self.reg))
        assert self.runs == 1, "the handler ran under a deny rule"


def first(results: list[Any]) -> Any:
    return results[0]


def check_dispatch(request: pytest.FixtureRequest) -> None:
    Counted().stops(lambda r: r.dispatch("traced", {}), lambda out: denial(out, "traced"))


def check_adispatch(request: pytest.FixtureRequest) -> None:
    Counted().stops(
        lambda r: asyncio.run(r.adispatch("traced", {})), lambda out: denial(out, "traced")
    )


def check_dispatch_many(request: pytest.FixtureRequest) -> None:
    Counted().stops(
        lambda r: first(r.dispatch_many([("traced", {})])), lambda out: denial(out, "traced")
    )


def check_adispatch_many(request: pytest.FixtureRequest) -> None:
    Counted().stops(
        lambda r: first(asyncio.run(r.adispatch_many([("traced", {}, "id")]))),
        lambda out: denial(out, "traced"),
    )


def check_progress(request: pytest.FixtureRequest) -> None:
    Counted().stops(
        lambda r: r.dispatch("traced", {}, progress=lambda *a: None),
        lambda out: denial(out, "traced"),
    )


def check_timeout(request: pytest.FixtureRequest) -> None:
    Counted(timeout=5).stops(lambda r: r.dispatch("traced", {}), lambda out: denial(out, "traced"))


def check_hooks(request: pytest.FixtureRequest) -> None:
    seen = []

    class Hooks:
        def before(self, name: str, args: dict[str, Any]) -> None:
            seen.append(name)

        def after(self, name: str, args: dict[str, Any], result: Any) -> Any:
            return result

    counted = Counted()
    counted.reg.set_dispatch_hooks(Hooks())
    counted.stops(lambda r: r.dispatch("traced", {}), lambda out: denial(out, "traced"))
    assert seen == ["traced"], "the hooks saw the allowed call only"


def check_tracing(request: pytest.FixtureRequest) -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    counted = Counted()
    counted.reg.enable_tracing(tracer_provider=provider)
    assert counted.reg._dispatcher.traced
    counted.stops(lambda r: r.dispatch("traced", {}), lambda out: denial(out, "traced"))
    assert len(spans.get_finished_spans()) == 2, "both calls were traced"


# -- the command line and toolreg serve: a local plugin's ``hold`` tool writes a line --------


def serve_setup_denying(request: pytest.FixtureRequest, tool: str) -> Any:
    setup = request.getfixturevalue("serve_setup")
    Path(setup.env["HOLD_RELEASE"]).touch()  # a hold that runs returns at once
    setup.config.write_text(setup.config.read_text() + DENY.format(tool=tool))
    return setup


def cli_call(setup: Any, config: Path, tag: str) -> subprocess.CompletedProcess[str]:
    argv = ["-m", "toolreg", "--config", str(config), "call", "hold", f"tag={tag}"]
    return subprocess.run(
        [sys.executable, *argv], env=setup.env, cwd=setup.tmp, capture_output=True, text=True
    )


def check_cli(request: pytest.FixtureRequest) -> None:
    setup = request.getfixturevalue("serve_setup")
    Path(setup.env["HOLD_RELEASE"]).touch()
    allowed = cli_call(setup, setup.config, "allowed")
    assert allowed.returncode == 0, allowed.stderr
    assert setup.holds() == ["start allowed", "end allowed"]
    setup.config.write_text(setup.config.read_text() + DENY.format(tool="hold"))
    done = cli_call(setup, setup.config, "denied")
    assert done.returncode == 1, done.stderr
    denial(done.stdout, "hold")
    assert setup.holds() == ["start allowed", "end allowed"]


def check_serve_stdio(request: pytest.FixtureRequest) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from serve_harness import run, stdio_client_for, text_of

    setup = serve_setup_denying(request, "hold")

    async def session() -> None:
        async with Client(stdio_client_for(setup, "--toolset", "demo", "--toolset", "slow")) as c:
            assert text_of(await c.call_tool("greet", {"name": "Ada"})) == "hello Ada"
            result = await c.call_tool("hold", {"tag": "stdio"})
            assert result.is_error
            denial(text_of(result), "hold")

    run(session)
    assert setup.holds() == []


def check_serve_http(request: pytest.FixtureRequest) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from serve_harness import run, text_of

    setup = serve_setup_denying(request, "hold")
    server = request.getfixturevalue("http_server")("--toolset", "slow")

    async def session() -> None:
        async with Client(server.url) as client:
            result = await client.call_tool("hold", {"tag": "http"})
            assert result.is_error
            denial(text_of(result), "hold")

    run(session)
    assert setup.holds() == []


# -- the integrations, each with its real framework ------------------------------------------


def check_langchain(request: pytest.FixtureRequest) -> None:
    pytest.importorskip("langchain_core")
    from toolreg.integrations import langchain

    def call(reg: ToolRegistry) -> Any:
        (tool,) = langchain.tools(reg)
        message = tool.invoke({"type": "tool_call", "id": "c1", "name": "traced", "args": {}})
        return message.content

    Counted().stops(call, lambda out: denial(out, "traced"))


def check_llm(request: pytest.FixtureRequest) -> None:
    pytest.importorskip("llm")
    from toolreg.integrations import llm as toolreg_llm

    def call(reg: ToolRegistry) -> Any:
        (tool,) = toolreg_llm.tools(reg)
        try:
            return tool.implementation()
        except toolreg_llm.ToolCallFailed as failed:
            assert failed.error_type == "denied"
            return str(failed)

    Counted().stops(call, lambda out: denial(out, "traced"))


def check_openai_agents(request: pytest.FixtureRequest) -> None:
    pytest.importorskip("agents")
    from agents.tool_context import ToolContext

    from toolreg.integrations import openai_agents

    def call(reg: ToolRegistry) -> Any:
        (tool,) = openai_agents.tools(reg)
        ctx = ToolContext(context=None, tool_name="traced", tool_call_id="c1", tool_arguments="{}")
        return asyncio.run(tool.on_invoke_tool(ctx, "{}"))

    def check(out: Any) -> None:
        error = json.loads(out) if isinstance(out, str) else out
        assert error["error_type"] == "denied" and "'traced'" in error["error"], error

    Counted().stops(call, check)


def check_pydantic_ai(request: pytest.FixtureRequest) -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    from toolreg.integrations import pydantic_ai

    def call(reg: ToolRegistry) -> Any:
        returned: list[Any] = []

        def model(messages: list[Any], info: Any) -> ModelResponse:
            if len(messages) == 1:
                return ModelResponse(parts=[ToolCallPart("traced", {}, tool_call_id="c1")])
            returned.extend(p for p in messages[-1].parts if p.part_kind == "tool-return")
            return ModelResponse(parts=[TextPart("done")])

        agent = Agent(FunctionModel(model), tools=pydantic_ai.tools(reg))
        assert agent.run_sync("go").output == "done"
        (part,) = returned
        return part.content

    Counted().stops(call, lambda out: denial(out, "traced"))


# -- tools that live in another process -------------------------------------------------------


def check_isolated_pack(request: pytest.FixtureRequest) -> None:
    """toolreg-usurper in a child process; its ``napper`` writes a pid file when it runs."""
    venv = request.getfixturevalue("pack_venv")
    tmp = request.getfixturevalue("tmp_path")
    config = tmp / "toolreg.toml"
    config.write_text(
        '[plugins.entries.toolreg-usurper]\nisolation = "process"\n' + DENY.format(tool="napper")
    )
    allowed, denied = tmp / "allowed.pid", tmp / "denied.pid"
    out = venv.python_json(
        f"""
        import json
        import toolreg
        from toolreg import apply_config, load_config, load_plugins, registry

        config = load_config({str(config)!r})
        report = load_plugins(config)
        apply_config(config, registry)
        out = {{"isolation": report["toolreg-usurper"].isolation}}
        out["denied"] = registry.dispatch("napper", {{"pidfile": {str(denied)!r}, "seconds": 0}})
        registry.set_permissions(None)
        out["allowed"] = registry.dispatch("napper", {{"pidfile": {str(allowed)!r}, "seconds": 0}})
        toolreg.get_plugin_host().unload_all()
        print(json.dumps(out))
        """,
        TOOLREG_PLUGINS="toolreg-usurper",
    )
    assert out["isolation"] == "process"
    assert out["allowed"] == "rested" and allowed.exists(), "the route reaches the handler"
    denial(out["denied"], "napper")
    assert not denied.exists(), "the isolated handler ran under a deny rule"


TRACE_SERVER = """
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("trace", log_level="WARNING")


@server.tool()
def touch(tag: str) -> str:
    \"\"\"Append the tag to the trace file.\"\"\"
    with open(sys.argv[1], "a") as trace:
        trace.write(tag + "\\n")
    return "touched"


server.run()
"""


def check_mcp_server(request: pytest.FixtureRequest) -> None:
    pytest.importorskip("mcp")
    from toolreg import start_mcp, stop_mcp

    tmp = request.getfixturevalue("tmp_path")
    script, trace = tmp / "trace_server.py", tmp / "trace.txt"
    script.write_text(textwrap.dedent(TRACE_SERVER))
    argv = json.dumps([str(script), str(trace)])
    config = parse_config(
        f"[mcp.servers.trace]\ncommand = {json.dumps(sys.executable)}\nargs = {argv}\n"
        "connect_timeout = 20\n"
    )
    reg = ToolRegistry()
    start_mcp(config, reg)
    try:
        assert reg.dispatch("mcp__trace__touch", {"tag": "allowed"}) == "touched"
        apply_config(parse_config(DENY.format(tool="pack:mcp:trace")), reg)
        result = json.loads(reg.dispatch("mcp__trace__touch", {"tag": "denied"}))
        assert (result["code"], result["rule"]) == ("denied", "pack:mcp:trace")
    finally:
        stop_mcp(reg)
    assert trace.read_text().splitlines() == ["allowed"]


CHECKS: dict[str, Callable[[pytest.FixtureRequest], None]] = {
    "dispatch": check_dispatch,
    "adispatch": check_adispatch,
    "dispatch_many": check_dispatch_many,
    "adispatch_many": check_adispatch_many,
    "dispatch with progress=": check_progress,
    "dispatch of a tool with a timeout": check_timeout,
    "dispatch with dispatch hooks installed": check_hooks,
    "dispatch with tracing on": check_tracing,
    "toolreg call": check_cli,
    "toolreg serve (stdio)": check_serve_stdio,
    "toolreg serve (HTTP)": check_serve_http,
    "integrations.langchain": check_langchain,
    "integrations.llm": check_llm,
    "integrations.openai_agents": check_openai_agents,
    "integrations.pydantic_ai": check_pydantic_ai,
    "an isolated pack's tool": check_isolated_pack,
    "an MCP server's tool": check_mcp_server,
}


def test_every_route_is_checked() -> None:
    assert list(CHECKS) == list(ROUTES)
    docs = Path(__file__).parents[2] / "docs" / "permissions.md"
    listed = docs.read_text(encoding="utf-8")
    assert [route for route in ROUTES if f"- {route}" not in listed] == [], (
        "docs/permissions.md lists every route"
    )


@pytest.mark.parametrize("route", ROUTES)
def test_a_deny_rule_stops_the_route_before_the_handler(route: str, request) -> None:
    CHECKS[route](request)
