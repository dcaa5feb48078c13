"""Parallel dispatch and tracing: what dispatch_many and enable_tracing cost against dispatch.

Run from the repository root::

    .venv/bin/python benchmarks/bench_dispatch_many.py [--quick] [--json PATH]

Rows, each against a floor measured in the same run:

- ``dispatch_many, 10 calls of a 50 ms tool``: one batch (max_concurrency 10)
  against the same ten calls dispatched one after another; target 0.15x.
- ``dispatch_many per call, no-op tool``: a batch of ten calls of a tool that
  returns at once, per call, against ``registry.dispatch`` per call; target 2x.
- ``dispatch, tracing enabled, no SDK configured``: ``enable_tracing()`` with
  OpenTelemetry's API installed and no SDK set up, against plain dispatch;
  target 1.2x. An info row shows a configured SDK provider with no exporter.

The script reports; it never fails. See benchmarks/README.md.
"""

from __future__ import annotations

import sys
import time

from harness import Config, Result, parse_run, report, run_case, time_calls, time_statements

from toolreg import ToolRegistry

OBJECT = {"parameters": {"type": "object"}}
WAIT_S = 0.05


def noop_registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register("noop", "bench", OBJECT, lambda args: "ok")
    registry.set_validation(False)  # the rows measure dispatch, not the validator
    return registry


def bench_waiting(cfg: Config) -> list[Result]:
    registry = ToolRegistry()
    registry.register("wait", "bench", OBJECT, lambda args: (time.sleep(WAIT_S), "ok")[1])
    calls = [("wait", {})] * 10

    def sequential() -> None:
        for name, args in calls:
            registry.dispatch(name, args)

    times = time_calls(
        {
            "many": lambda: registry.dispatch_many(calls, max_concurrency=10),
            "sequential": sequential,
        },
        lambda: None,
        max(2, cfg.samples // 40),
    )
    return [
        Result(
            "dispatch_many, 10 calls of a 50 ms tool",
            times["many"],
            times["sequential"],
            target=0.15,
            note="floor: the ten dispatched one after another",
        )
    ]


def bench_noop(cfg: Config) -> list[Result]:
    registry = noop_registry()
    batch = [("noop", {})] * 10
    namespace = {"registry": registry, "batch": batch, "args": {}}
    registry.dispatch_many(batch)  # the first batches learn that the tool is quick
    registry.dispatch_many(batch)
    times = time_statements(
        {
            "many": "registry.dispatch_many(batch)",
            "one": "registry.dispatch('noop', args)",
        },
        namespace,
        cfg,
    )
    return [
        Result(
            "dispatch_many per call, no-op tool",
            times["many"] / len(batch),
            times["one"],
            target=2.0,
            added_ns=times["many"] / len(batch) - times["one"],
            note="a batch of 10, per call; floor: registry.dispatch",
        )
    ]


def bench_tracing(cfg: Config) -> list[Result]:
    plain, traced = noop_registry(), noop_registry()
    traced.enable_tracing()  # API installed, no SDK provider set
    from opentelemetry.sdk.trace import TracerProvider

    recording = noop_registry()
    recording.enable_tracing(tracer_provider=TracerProvider())  # an SDK, no exporter
    namespace = {"plain": plain, "traced": traced, "recording": recording, "args": {}}
    times = time_statements(
        {
            "plain": "plain.dispatch('noop', args)",
            "traced": "traced.dispatch('noop', args)",
            "recording": "recording.dispatch('noop', args)",
        },
        namespace,
        cfg,
    )
    return [
        Result(
            "dispatch, tracing enabled, no SDK configured",
            times["traced"],
            times["plain"],
            target=1.2,
            added_ns=times["traced"] - times["plain"],
            note="floor: dispatch without enable_tracing",
        ),
        Result(
            "dispatch, SDK TracerProvider, no exporter",
            times["recording"],
            times["plain"],
            added_ns=times["recording"] - times["plain"],
            note="spans recorded and dropped; information",
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    args, cfg = parse_run(__doc__.splitlines()[0], argv)
    started = time.perf_counter()
    print(
        f"toolreg dispatch_many benchmark ({'quick' if args.quick else 'full'} run)",
        file=sys.stderr,
    )
    results: list[Result] = []
    run_case(results, "waiting", lambda: bench_waiting(cfg))
    run_case(results, "no-op", lambda: bench_noop(cfg))
    run_case(results, "tracing", lambda: bench_tracing(cfg))
    report(results, args, cfg, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
