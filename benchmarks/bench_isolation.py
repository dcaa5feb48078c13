"""What ``isolation = "process"`` costs a dispatch: an isolated pack's tool against the same
tool in-process and against a bare MCP SDK server's ``tools/call``, in the same run.

Run from the repository root, with the MCP SDK installed (``pip install -e '.[mcp]'``)::

    .venv/bin/python benchmarks/bench_isolation.py            # 1,000 calls each, ~10 s
    .venv/bin/python benchmarks/bench_isolation.py --quick    # 150 calls each, ~5 s

Set-up, in a temp dir removed at the end: a local folder plugin ``bench_ok``
whose ``ok`` tool returns ``"ok"``, loaded into one ``ToolRegistry`` in-process
and into another with ``isolation = "process"``; a plugin ``bench_hook`` with
one ``toolreg_pre_tool_call`` returning None, isolated, next to the in-process
``ok`` in a third registry; and the bare server of ``bench_mcp_serve.py``
(``MCPServer`` with one ``ok`` tool) in a subprocess, called by the SDK's
``Client`` over stdio.

The isolated dispatch, the hooked dispatch and the bare ``tools/call`` run
interleaved (a noisy moment hits all alike), each timed with ``perf_counter``;
rows give medians. The in-process dispatch is timed with ``timeit`` (it is too
short for one ``perf_counter`` reading). Target: an isolated dispatch adds at
most 1 ms to the bare server's ``tools/call``. It reports only; the exit code
is always 0.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import timeit
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_mcp_serve import BARE, PLUGIN, _p90, print_header, run_reporting  # noqa: E402
from bench_mcp_serve import _fmt as _fmt_ms  # noqa: E402

HOOK_PLUGIN = """\
from toolreg import hookimpl


@hookimpl
def toolreg_pre_tool_call(name, args):
    return None
"""
#: The budget an isolated dispatch may add to a bare SDK tools/call.
TARGET_OVERHEAD = 1e-3


def _registries(root: Path) -> dict[str, Any]:
    from toolreg import ToolRegistry, load_plugins, parse_config

    plugins = root / "plugins"
    plugins.mkdir()
    (plugins / "bench_ok.py").write_text(PLUGIN)
    (plugins / "bench_hook.py").write_text(HOOK_PLUGIN)
    folder = f"[plugins]\npaths = [{json.dumps(str(plugins))}]\n"
    configs = {
        "in-process": folder + 'enabled = ["local:bench_ok"]\n',
        "isolated": folder + 'enabled = ["local:bench_ok"]\nisolation = "process"\n',
        "hooked": folder
        + 'enabled = ["local:bench_ok", "local:bench_hook"]\n'
        + '[plugins.entries."local:bench_hook"]\nisolation = "process"\n',
    }
    registries = {}
    for label, text in configs.items():
        registry = ToolRegistry()
        report = load_plugins(parse_config(text), registry)
        broken = [f"{o.id}: {o.reason}" for o in report.with_status("failed", "refused")]
        if broken or registry.dispatch("ok", {}) != "ok":
            raise RuntimeError(f"{label}: the plugins did not load: {broken}")
        registries[label] = registry
    return registries


async def _interleaved(
    registries: dict[str, Any], bare: str, calls: int, warmup: int
) -> dict[str, list[float]]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    samples: dict[str, list[float]] = {"bare": [], "isolated": [], "hooked": []}
    params = StdioServerParameters(command=sys.executable, args=[bare])
    with open(os.devnull, "w") as devnull:
        async with Client(stdio_client(params, errlog=devnull)) as client:
            await client.list_tools()
            for index in range(warmup + calls):
                start = time.perf_counter()
                result = await client.call_tool("ok", {})
                took = {"bare": time.perf_counter() - start}
                # Blocking this loop while the isolated call runs on its own is fine:
                # the bare session is idle between its calls.
                for label in ("isolated", "hooked"):
                    start = time.perf_counter()
                    answer = registries[label].dispatch("ok", {})
                    took[label] = time.perf_counter() - start
                    if answer != "ok":
                        raise RuntimeError(f"{label}: unexpected result {answer!r}")
                if result.is_error:
                    raise RuntimeError(f"bare: unexpected result {result}")
                if index >= warmup:
                    for label, seconds in took.items():
                        samples[label].append(seconds)
    return samples


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e9:.0f} ns" if seconds < 1e-6 else _fmt_ms(seconds)


def _in_process(registry: Any) -> float:
    names = {"dispatch": registry.dispatch, "args": {}}
    timer = timeit.Timer("dispatch('ok', args)", globals=names)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=7, number=number)) / number


def _report(samples: dict[str, list[float]], in_process: float) -> None:
    bare, isolated, hooked = (statistics.median(samples[k]) for k in ("bare", "isolated", "hooked"))
    overhead = isolated - bare
    verdict = "PASS" if overhead <= TARGET_OVERHEAD else "MISS"
    n = len(samples["bare"])
    rows = [
        ("dispatch, in-process pack (for scale)", in_process, "", "", "", "timeit, min of 7"),
        ("tools/call, bare SDK server over stdio", bare, "", "", "", f"median of {n}; "
         f"p90 {_fmt(_p90(samples['bare']))}"),
        ("dispatch, isolated pack", isolated, f"{isolated / bare:.2f}x", "+<= 1 ms", verdict,
         f"{overhead * 1e6:+.0f} µs over the bare call; p90 {_fmt(_p90(samples['isolated']))}"),
        ("dispatch, isolated pre_tool_call hook", hooked, f"{hooked / bare:.2f}x", "report",
         "info", f"in-process tool; the hook adds {(hooked - in_process) * 1e3:.2f} ms "
         "(10 s deadline: worker thread)"),
    ]  # fmt: skip
    header = f"{'case':<40} {'value':>9} {'vs bare':>8} {'target':>9} {'verdict':>8}  note"
    print(header)
    print("-" * len(header))
    for case, value, ratio, target, verdict_, note in rows:
        print(f"{case:<40} {_fmt(value):>9} {ratio:>8} {target:>9} {verdict_:>8}  {note}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="150 calls instead of 1,000")
    options = parser.parse_args(argv)
    calls, warmup = (150, 20) if options.quick else (1000, 100)
    for name in ("TOOLREG_DISABLE_PLUGIN_AUTOLOAD", "TOOLREG_PLUGINS", "TOOLREG_CONFIG"):
        os.environ.pop(name, None)

    def measure() -> None:
        import anyio

        from toolreg import get_plugin_host

        with tempfile.TemporaryDirectory(prefix="bench-isolation-") as tmp:
            root = Path(tmp)
            os.environ["TOOLREG_CACHE_DIR"] = str(root / "cache")
            registries = _registries(root)
            (root / "bare.py").write_text(BARE)
            print(f"timing {calls} interleaved calls after {warmup} warm-up...", file=sys.stderr)
            samples = anyio.run(_interleaved, registries, str(root / "bare.py"), calls, warmup)
            in_process = _in_process(registries["in-process"])
            for registry in registries.values():
                host = get_plugin_host(registry)
                if host is not None:
                    host.unload_all()
        print_header()
        _report(samples, in_process)

    return run_reporting(measure)


if __name__ == "__main__":
    sys.exit(main())
