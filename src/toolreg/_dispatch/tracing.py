"""OpenTelemetry traces and metrics of tool calls (the ``otel`` extra).

Nothing here is imported until a host calls ``toolreg.enable_tracing()``. The spans
and metrics it records are described in docs/hosts.md.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from .._contract.results import is_tool_error
from .._contract.version import __version__


def _error_type(result: Any) -> str | None:
    """The ``error.type`` of a tool_error result, or None for a success."""
    if type(result) is not str or not is_tool_error(result):
        return None
    try:
        kind = json.loads(result).get("error_type")
    except (ValueError, AttributeError):
        kind = None
    return kind if isinstance(kind, str) else "tool_error"


class Tracing:
    """The tracer and instruments one registry's dispatches report to."""

    def __init__(self, tracer_provider: Any = None, meter_provider: Any = None) -> None:
        try:
            from opentelemetry import metrics, trace
        except ImportError:
            raise ImportError(
                "toolreg tracing needs OpenTelemetry: pip install 'toolreg-core[otel]'"
            ) from None
        self._trace = trace
        self.tracer = trace.get_tracer("toolreg", __version__, tracer_provider=tracer_provider)
        meter = metrics.get_meter("toolreg", __version__, meter_provider=meter_provider)
        self.calls = meter.create_counter(
            "toolreg.tool.calls", unit="{call}", description="Tool calls dispatched"
        )
        self.duration = meter.create_histogram(
            "toolreg.tool.duration", unit="s", description="Time a tool call took"
        )
        #: False while neither a provider was given nor an OpenTelemetry SDK set up
        #: globally: a span would then cost microseconds and record nothing.
        self.live = (
            tracer_provider is not None
            or meter_provider is not None
            or not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
            or type(metrics.get_meter_provider()).__name__ != "_ProxyMeterProvider"
        )

    def _start(self, name: Any, call_id: str | None) -> tuple[Any, dict[str, Any]]:
        tool = name if type(name) is str else repr(name)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
        }
        if call_id is not None:
            attributes["gen_ai.tool.call.id"] = call_id
        span = self.tracer.start_span(
            f"execute_tool {tool}", kind=self._trace.SpanKind.INTERNAL, attributes=attributes
        )
        return span, {"gen_ai.tool.name": tool}

    def _finish(self, span: Any, labels: dict[str, Any], result: Any, started: float) -> None:
        error = _error_type(result)
        if error is not None:
            labels["error.type"] = error
            span.set_attribute("error.type", error)
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, error))
        span.end()
        self.calls.add(1, labels)
        self.duration.record(time.perf_counter() - started, labels)

    def run(self, name: Any, call_id: str | None, call: Callable[[], Any]) -> Any:
        """``call()`` inside the call's span; its result decides the span's status."""
        started = time.perf_counter()
        span, labels = self._start(name, call_id)
        result: Any = None
        try:
            with self._trace.use_span(span, end_on_exit=False):
                result = call()
        finally:
            self._finish(span, labels, result, started)
        return result

    async def arun(self, name: Any, call_id: str | None, call: Callable[[], Awaitable[Any]]) -> Any:
        started = time.perf_counter()
        span, labels = self._start(name, call_id)
        result: Any = None
        try:
            with self._trace.use_span(span, end_on_exit=False):
                result = await call()
        finally:
            self._finish(span, labels, result, started)
        return result
