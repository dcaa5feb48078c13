"""``toolreg.enable_tracing``: tracing for a registry, the process-wide one by default."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .registry import ToolRegistry


def enable_tracing(
    target: ToolRegistry | None = None, *, tracer_provider: Any = None, meter_provider: Any = None
) -> None:
    """Trace and count every dispatch of ``target`` (default: ``toolreg.registry``).

    Each call becomes an OpenTelemetry span ``execute_tool {name}`` and counts
    in ``toolreg.tool.calls`` and ``toolreg.tool.duration``, sent to the
    providers given or the global ones. ImportError naming the ``otel`` extra
    when OpenTelemetry is not installed.
    """
    from .registry import registry

    (target if target is not None else registry).enable_tracing(
        tracer_provider=tracer_provider, meter_provider=meter_provider
    )
