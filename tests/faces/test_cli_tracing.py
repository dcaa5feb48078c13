"""``toolreg serve`` and ``toolreg call`` trace tool calls when the config or ``OTEL_*`` asks.

Real processes, real exporters: the SDK's console exporter, and the OTLP/HTTP
exporter posting to a small collector on loopback in the test.
"""

from __future__ import annotations

import http.server
import importlib.util
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pack_cli import write_config
from serve_harness import run
from toolreg import Config
from toolreg._policy.config import TracingConfig
from toolreg.cli._tracing import tracing_wanted

SRC = Path(__file__).resolve().parents[2] / "src"
TRACES_ENDPOINT = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
QUIET_SIGNALS = {"OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none"}


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    """This checkout's toolreg, its built-in tools alone, no config, no OTEL_* but ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLREG_", "OTEL_"))}
    env.update(
        PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
        TOOLREG_PLUGINS="",
        TOOLREG_CACHE_DIR=str(tmp_path / "cache"),
    )
    env.update(extra)
    return env


def call(tmp_path: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolreg", *argv],
        capture_output=True,
        text=True,
        env=env_for(tmp_path, **env),
        cwd=tmp_path,
        timeout=60,
        check=False,
    )


def console_spans(text: str) -> list[dict[str, Any]]:
    """The spans the console exporter wrote (indented JSON objects) among other lines."""
    decoder = json.JSONDecoder()
    text = "\n" + text  # the first span may open the text
    spans, index = [], 0
    while (index := text.find("\n{", index)) != -1:
        try:
            found, end = decoder.raw_decode(text, index + 1)
        except ValueError:
            index += 2
            continue
        if isinstance(found, dict) and "context" in found:
            spans.append(found)
        index = end
    return spans


def tool_span(spans: list[dict[str, Any]], tool: str) -> dict[str, Any]:
    [span] = [s for s in spans if s["name"] == f"execute_tool {tool}"]
    return span


# -- when tracing is on -------------------------------------------------------------------


def config_with(enabled: bool | None) -> Config:
    return Config(tracing=TracingConfig(enabled=enabled))


@pytest.mark.parametrize(
    ("enabled", "environ", "wanted"),
    [
        (None, {}, None),
        (None, {"OTEL_SERVICE_NAME": "agent"}, None),  # naming the service asks for nothing
        (None, {"OTEL_TRACES_EXPORTER": "console"}, "OTEL_TRACES_EXPORTER"),
        (None, {"OTEL_TRACES_EXPORTER": "none"}, None),
        (None, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, "OTEL_EXPORTER_OTLP_ENDPOINT"),
        (
            None,
            {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c"},
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        ),
        (True, {}, "tracing.enabled"),
        (False, {"OTEL_TRACES_EXPORTER": "otlp"}, None),  # the operator's file has the last word
        (True, {"OTEL_SDK_DISABLED": "true"}, None),  # ...but the standard off switch wins
        (None, {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "TRUE"}, None),
        (
            None,
            {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "false"},
            "OTEL_TRACES_EXPORTER",
        ),
    ],
)
def test_what_asks_for_tracing(enabled, environ, wanted):
    assert tracing_wanted(config_with(enabled), environ) == wanted


# -- with the otel extra ------------------------------------------------------------------

otel = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("opentelemetry.sdk", "opentelemetry.distro")),
    reason="the otel extra is not installed",
)


@otel
def test_serve_over_stdio_traces_a_tools_call_to_the_console_exporter(tmp_path):
    pytest.importorskip("mcp")
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = env_for(tmp_path, OTEL_TRACES_EXPORTER="console", **QUIET_SIGNALS)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "toolreg", "serve"], env=env, cwd=tmp_path
    )
    log = tmp_path / "serve.log"

    async def session() -> None:
        with log.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                result = await client.call_tool("current_time", {})
                # The console exporter writes to stderr: stdout is the protocol stream.
                assert not result.is_error

    run(session)
    span = tool_span(console_spans(log.read_text()), "current_time")
    assert span["attributes"]["gen_ai.tool.name"] == "current_time"
    assert span["attributes"]["gen_ai.operation.name"] == "execute_tool"
    assert span["resource"]["attributes"]["service.name"] == "toolreg"


@otel
def test_call_traces_to_stderr_and_keeps_stdout_for_the_result(tmp_path):
    done = call(
        tmp_path,
        "call",
        "current_time",
        OTEL_TRACES_EXPORTER="console",
        OTEL_SERVICE_NAME="night-shift",
        **QUIET_SIGNALS,
    )
    assert done.returncode == 0, done.stderr
    assert "execute_tool" not in done.stdout
    span = tool_span(console_spans(done.stderr), "current_time")
    assert span["resource"]["attributes"]["service.name"] == "night-shift"


@otel
@pytest.mark.parametrize(
    ("config", "env"),
    [
        ("[tracing]\nenabled = false\n", {}),
        ("", {"OTEL_SDK_DISABLED": "true"}),
    ],
)
def test_turned_off_no_span_comes_out(tmp_path, config, env):
    path = write_config(tmp_path, config)
    done = call(
        tmp_path,
        "--config",
        str(path),
        "call",
        "current_time",
        OTEL_TRACES_EXPORTER="console",
        **QUIET_SIGNALS,
        **env,
    )
    assert (done.returncode, done.stderr) == (0, "")


@otel
def test_an_sdk_that_cannot_be_set_up_is_a_warning_and_the_call_runs(tmp_path):
    done = call(tmp_path, "call", "current_time", OTEL_TRACES_EXPORTER="no_such_exporter")
    assert done.returncode == 0 and done.stdout.strip()
    assert done.stderr.splitlines()[-1] == (
        "toolreg: warning: OpenTelemetry's SDK could not be set up (logged above); "
        "running without traces"
    )


class Collector(http.server.BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver: keeps each POST's path and body, answers 200."""

    received: list[tuple[str, bytes]]

    def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.received.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def collector() -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
    received: list[tuple[str, bytes]] = []
    handler = type("Handler", (Collector,), {"received": received})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", received
    server.shutdown()
    server.server_close()


@otel
def test_an_otlp_endpoint_alone_sends_the_span_over_http(tmp_path, collector):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    endpoint, received = collector
    done = call(tmp_path, "call", "current_time", OTEL_EXPORTER_OTLP_ENDPOINT=endpoint)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    spans = []
    for path, body in received:
        if path == "/v1/traces":
            request = ExportTraceServiceRequest.FromString(body)
            for resource_spans in request.resource_spans:
                resource = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
                for scope in resource_spans.scope_spans:
                    spans += [(resource, scope.scope.name, span) for span in scope.spans]
    [(resource, scope, span)] = [s for s in spans if s[2].name == "execute_tool current_time"]
    assert (resource["service.name"], scope) == ("toolreg", "toolreg")
    attributes = {a.key: a.value.string_value for a in span.attributes}
    assert attributes["gen_ai.tool.name"] == "current_time"
    # The distro's default exports metrics too: toolreg's call counter went out.
    assert any(path == "/v1/metrics" for path, _ in received)


# -- without it ---------------------------------------------------------------------------


def test_without_the_sdk_tracing_asked_for_is_one_warning_and_the_command_runs(pack_venv):
    # The pack venv has toolreg-core[mcp]: OpenTelemetry's API (the MCP SDK needs it), no SDK.
    done = pack_venv.run("call", "current_time", OTEL_TRACES_EXPORTER="console", TOOLREG_PLUGINS="")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    # Other warnings may come from the shared venv's hostile wheels (a file planted
    # among the built-ins is counted on every command); tracing's is one line.
    tracing = [line for line in done.stderr.splitlines() if "OpenTelemetry" in line]
    assert tracing == [
        "toolreg: warning: OTEL_TRACES_EXPORTER asks for traces, but OpenTelemetry's SDK "
        "is not installed: pip install 'toolreg-core[otel]'; running without traces"
    ]
    assert "Traceback" not in done.stderr
