"""OpenTelemetry spans and metrics of dispatch, read back from the SDK's in-memory exporters."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from toolreg import ToolRegistry

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)
from opentelemetry.trace import StatusCode  # noqa: E402

OBJECT = {"parameters": {"type": "object"}}


class Telemetry:
    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.metrics = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.metrics])

    def points(self, metric: str) -> list[Any]:
        data = self.metrics.get_metrics_data()
        assert data is not None
        return [
            point
            for resource in data.resource_metrics
            for scope in resource.scope_metrics
            for found in scope.metrics
            if found.name == metric
            for point in found.data.data_points
        ]


@pytest.fixture
def traced() -> tuple[ToolRegistry, Telemetry]:
    reg = ToolRegistry()
    reg.register("echo", "t", OBJECT, lambda args: "echo")
    reg.register("boom", "t", OBJECT, lambda args: 1 / 0)

    async def later(args: dict[str, Any]) -> str:
        return "later"

    reg.register("later", "t", OBJECT, later, is_async=True)
    telemetry = Telemetry()
    reg.enable_tracing(
        tracer_provider=telemetry.tracer_provider, meter_provider=telemetry.meter_provider
    )
    return reg, telemetry


def test_every_dispatch_is_an_execute_tool_span(traced: tuple[ToolRegistry, Telemetry]) -> None:
    reg, telemetry = traced
    assert reg.dispatch("echo", {}) == "echo"
    assert asyncio.run(reg.adispatch("later", {})) == "later"
    reg.dispatch("boom", {})
    reg.dispatch("nope", {})
    spans = telemetry.spans.get_finished_spans()
    assert [span.name for span in spans] == [
        "execute_tool echo",
        "execute_tool later",
        "execute_tool boom",
        "execute_tool nope",
    ]
    for span in spans:
        assert span.attributes["gen_ai.operation.name"] == "execute_tool"
        assert span.attributes["gen_ai.tool.name"] == span.name.split()[1]
        assert "gen_ai.tool.call.id" not in span.attributes
    assert [span.status.status_code for span in spans] == [
        StatusCode.UNSET,
        StatusCode.UNSET,
        StatusCode.ERROR,
        StatusCode.ERROR,
    ]
    assert spans[2].attributes["error.type"] == "tool_error"


def test_batch_calls_carry_their_call_ids_and_a_blocked_call_its_error_type(
    traced: tuple[ToolRegistry, Telemetry],
) -> None:
    reg, telemetry = traced

    class Refuse:
        def before(self, name: str, args: dict[str, Any]) -> str | None:
            return "no" if name == "echo" else None

        def after(self, name: str, args: dict[str, Any], result: Any) -> Any:
            return result

    reg.dispatch_many([("later", {}, "call-1"), ("later", {})])
    asyncio.run(reg.adispatch_many([("later", {}, "call-2")]))
    reg.set_dispatch_hooks(Refuse())
    reg.dispatch_many([("echo", {}, "call-3")])
    spans = {
        span.attributes.get("gen_ai.tool.call.id"): span
        for span in telemetry.spans.get_finished_spans()
    }
    assert set(spans) == {"call-1", None, "call-2", "call-3"}
    assert spans["call-3"].attributes["error.type"] == "blocked"
    assert spans["call-3"].status.status_code == StatusCode.ERROR


def test_calls_are_counted_and_timed_per_tool_and_outcome(
    traced: tuple[ToolRegistry, Telemetry],
) -> None:
    reg, telemetry = traced
    for _ in range(3):
        reg.dispatch("echo", {})
    reg.dispatch("boom", {})
    counts = {
        tuple(sorted(point.attributes.items())): point.value
        for point in telemetry.points("toolreg.tool.calls")
    }
    assert counts == {
        (("gen_ai.tool.name", "echo"),): 3,
        (("error.type", "tool_error"), ("gen_ai.tool.name", "boom")): 1,
    }
    durations = telemetry.points("toolreg.tool.duration")
    assert sorted(point.count for point in durations) == [1, 3]


def test_disabled_tracing_records_nothing(traced: tuple[ToolRegistry, Telemetry]) -> None:
    reg, telemetry = traced
    reg.disable_tracing()
    reg.dispatch("echo", {})
    assert telemetry.spans.get_finished_spans() == ()


def test_without_enable_tracing_no_opentelemetry_module_is_imported() -> None:
    script = textwrap.dedent(
        """
        import sys
        import toolreg
        reg = toolreg.ToolRegistry()
        reg.register("echo", "t", {"parameters": {"type": "object"}}, lambda args: "echo")
        assert reg.dispatch("echo", {}) == "echo"
        assert reg.dispatch_many([("echo", {}), ("echo", {})]) == ["echo", "echo"]
        print(sorted(m for m in sys.modules if m.startswith("opentelemetry")))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"


def test_with_no_sdk_configured_tracing_stays_out_of_dispatch_and_says_so() -> None:
    script = textwrap.dedent(
        """
        import logging
        import toolreg
        logging.basicConfig(format="%(message)s")
        reg = toolreg.ToolRegistry()
        reg.register("echo", "t", {"parameters": {"type": "object"}}, lambda args: "echo")
        reg.enable_tracing()  # the API is installed; no SDK provider is set
        print(reg._dispatcher._wrapped, reg.dispatch("echo", {}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == ["False", "echo"]
    assert "no OpenTelemetry SDK is configured" in done.stderr


def test_enable_tracing_without_opentelemetry_names_the_extra() -> None:
    script = textwrap.dedent(
        """
        import sys
        sys.modules["opentelemetry"] = None  # as if it were not installed
        import toolreg
        try:
            toolreg.enable_tracing(toolreg.ToolRegistry())
        except ImportError as exc:
            print(exc)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert "pip install 'toolreg-core[otel]'" in done.stdout
