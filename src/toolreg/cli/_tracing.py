"""Traces of tool calls for ``toolreg serve`` and ``toolreg call``, asked for by config or env.

``[tracing] enabled`` in the operator config, or else the standard ``OTEL_*``
variables, turn it on. OpenTelemetry's SDK is then set up the way
``opentelemetry-instrument`` does it, from the environment (the distro's
``initialize``: exporters, endpoint, service name, sampler, resource, installed
instrumentations), and the registry's dispatches are traced. Nothing here is
imported unless tracing is asked for.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, MutableMapping
from contextlib import redirect_stdout

from toolreg import Config, registry

#: Variables that say where traces go; setting one asks for them. A service name alone does not.
ASKING = (
    "OTEL_TRACES_EXPORTER",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
)
INSTALL = "pip install 'toolreg-core[otel]'"


def tracing_wanted(config: Config, environ: Mapping[str, str]) -> str | None:
    """What asks for tracing (a config key or a variable), or None when it stays off.

    ``OTEL_SDK_DISABLED=true`` turns it off whatever else says; then the config's
    ``tracing.enabled``, when written; then the variables in ``ASKING``.
    """
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    if config.tracing.enabled is not None:
        return "tracing.enabled" if config.tracing.enabled else None
    for name in ASKING:
        value = environ.get(name, "").strip()
        if value and value.lower() != "none":
            return name
    return None


def start_tracing(config: Config) -> bool:
    """Set up OpenTelemetry and trace the registry's calls, if asked; whether it is on.

    Without the ``otel`` extra, or when the SDK cannot be set up, one warning on
    stderr and the command runs untraced.
    """
    reason = tracing_wanted(config, os.environ)
    if reason is None:
        return False
    try:
        from opentelemetry import trace
        from opentelemetry.instrumentation.auto_instrumentation import initialize
        from opentelemetry.sdk.trace import TracerProvider  # noqa: F401 - the SDK is there
    except ImportError:
        _warn(f"{reason} asks for traces, but OpenTelemetry's SDK is not installed: {INSTALL}")
        return False
    # Under `opentelemetry-instrument toolreg ...` the SDK is set up already.
    if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        _defaults(os.environ)
        # The console exporters write to the stdout of when they are imported, here:
        # stdout is serve's protocol stream and call's result, so they get stderr.
        with redirect_stdout(sys.stderr):
            initialize()
        if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
            _warn("OpenTelemetry's SDK could not be set up (logged above)")
            return False
    registry.enable_tracing()
    return True


#: How long the command's end waits for the last spans and metrics to go out.
FLUSH_MILLIS = 5000


def flush_tracing() -> None:
    """Send what the SDK still holds, within ``FLUSH_MILLIS`` per signal.

    The command calls this as it ends: ``toolreg`` leaves with ``os._exit``, which
    skips the SDK's own flush at exit, and spans are sent in batches.
    """
    from opentelemetry import metrics, trace

    for provider in (trace.get_tracer_provider(), metrics.get_meter_provider()):
        force_flush = getattr(provider, "force_flush", None)
        if force_flush is not None:
            force_flush(FLUSH_MILLIS)


def _defaults(environ: MutableMapping[str, str]) -> None:
    """What toolreg fills in before the distro's own defaults, the operator's values kept."""
    # The extra ships the OTLP exporter over HTTP; the distro would pick gRPC.
    environ.setdefault("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    if "service.name=" not in environ.get("OTEL_RESOURCE_ATTRIBUTES", ""):
        environ.setdefault("OTEL_SERVICE_NAME", "toolreg")


def _warn(message: str) -> None:
    print(f"toolreg: warning: {message}; running without traces", file=sys.stderr)
