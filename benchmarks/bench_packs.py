"""Pack discovery benchmark: find_packs() against bare importlib.metadata, as ratios.

Run from the repository root::

    .venv/bin/python benchmarks/bench_packs.py [--quick] [--json PATH]

A temp site dir gets 50 fake installed tool packs and 150 other distributions
(a third with console scripts), each with a package directory beside its
dist-info, as in a real site-packages. The floor is
``importlib.metadata.entry_points(group="toolreg.tools")`` (stdlib) with
``sys.path`` set to just that dir, since ``entry_points()`` takes no path. Rows:

- warm / cold ``find_packs(path=[site])`` in this process (imports done);
- the same in a fresh interpreter, timing ``import toolreg._entrypoints`` plus
  the call against ``import importlib.metadata`` plus the floor call. Both
  children import ``toolreg`` first, untimed, as a host would anyway.

Target: warm <= 0.5x the floor. The script reports; the exit code is always 0.
See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import gc
import importlib.metadata
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from dataclasses import asdict, dataclass
from typing import Any

from toolreg._entrypoints import GROUP, find_packs

PACKS, OTHERS = 50, 150
FULL = {"repeat": 9, "slice_s": 0.05, "cold_samples": 30, "subprocess_samples": 15}
QUICK = {"repeat": 3, "slice_s": 0.01, "cold_samples": 5, "subprocess_samples": 4}


@dataclass
class Result:
    case: str
    value_ns: float | None
    floor_ns: float | None
    target: float | None = None  # ratio must be <= target; None means report only
    note: str = ""
    error: str | None = None

    @property
    def ratio(self) -> float | None:
        return self.value_ns / self.floor_ns if self.value_ns and self.floor_ns else None

    @property
    def verdict(self) -> str:
        if self.error:
            return "ERROR"
        if self.target is None or self.ratio is None:
            return "info"
        return "PASS" if self.ratio <= self.target else "MISS"


def make_site(root: str) -> str:
    """Write PACKS tool packs and OTHERS plain distributions the way pip lays them out."""
    site = os.path.join(root, "site")
    for i in range(PACKS + OTHERS):
        is_pack = i < PACKS
        name = f"toolreg-pack{i:03d}" if is_pack else f"dep{i:03d}"
        module = name.replace("-", "_")
        dist_info = os.path.join(site, f"{module}-1.{i}.dist-info")
        os.makedirs(dist_info)
        os.makedirs(os.path.join(site, module))
        open(os.path.join(site, module, "__init__.py"), "w").close()
        requires = "Requires-Dist: toolreg>=0.1,<0.2\n" if is_pack else ""
        write(dist_info, "METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.{i}\n")
        with open(os.path.join(dist_info, "METADATA"), "a") as f:
            f.write(f"{requires}Requires-Dist: requests>=2\n\n{'Description. ' * 200}\n")
        if is_pack:
            write(dist_info, "entry_points.txt", f"[{GROUP}]\n{module} = {module}.tools:pack\n")
        elif i % 3 == 0:
            write(dist_info, "entry_points.txt", f"[console_scripts]\n{module} = {module}:main\n")
        write(
            dist_info, "RECORD", f"{module}/__init__.py,,\n{os.path.basename(dist_info)}/RECORD,,\n"
        )
    return site


def write(directory: str, name: str, text: str) -> None:
    with open(os.path.join(directory, name), "w", encoding="utf-8") as f:
        f.write(text)


def floor_call(site: str) -> int:
    """The floor: bare stdlib entry_points(group=...) seeing only ``site``."""
    saved = sys.path[:]
    sys.path[:] = [site]
    try:
        return len(importlib.metadata.entry_points(group=GROUP))
    finally:
        sys.path[:] = saved


def bench_in_process(site: str, cache: str, cfg: dict[str, Any]) -> list[Result]:
    os.environ["TOOLREG_CACHE_DIR"] = cache
    cache_file = os.path.join(cache, "packs-v1.json")
    found, floor_found = len(find_packs(path=[site])), floor_call(site)
    note = f"{found} packs found (floor: {floor_found} entry points)"
    # Warm vs floor: timeit loops calibrated to slice_s, interleaved, min kept.
    timers = {
        "floor": timeit.Timer(lambda: floor_call(site)),
        "warm": timeit.Timer(lambda: find_packs(path=[site])),
    }
    numbers = {k: calibrate(t, cfg["slice_s"]) for k, t in timers.items()}
    best = dict.fromkeys(timers, math.inf)
    for _ in range(cfg["repeat"]):
        for key, timer in timers.items():
            best[key] = min(best[key], timer.timeit(numbers[key]) / numbers[key] * 1e9)
    # Cold: a single call after deleting the cache file, min of N, GC off like timeit.
    cold = math.inf
    gc.disable()
    try:
        for _ in range(cfg["cold_samples"]):
            os.unlink(cache_file)
            start = time.perf_counter_ns()
            find_packs(path=[site])
            cold = min(cold, time.perf_counter_ns() - start)
    finally:
        gc.enable()
    return [
        Result("warm find_packs, in process", best["warm"], best["floor"], 0.5, note),
        Result("cold find_packs, in process", cold, best["floor"], None, "empty cache, min"),
    ]


def calibrate(timer: timeit.Timer, slice_s: float) -> int:
    number = 1
    while True:
        elapsed = timer.timeit(number)
        if elapsed >= slice_s / 10:
            return max(1, round(number * slice_s / elapsed))
        number *= 10


CHILD = """
import os, sys, time
import toolreg
site, variant = sys.argv[1], sys.argv[2]
start = time.perf_counter()
if variant == "floor":
    import importlib.metadata
    saved, sys.path[:] = sys.path[:], [site]
    n = len(importlib.metadata.entry_points(group="toolreg.tools"))
    sys.path[:] = saved
else:
    from toolreg._entrypoints import find_packs
    n = len(find_packs(path=[site]))
print((time.perf_counter() - start) * 1e9, n)
"""


def bench_subprocess(site: str, root: str, cfg: dict[str, Any]) -> list[Result]:
    env = dict(os.environ, PYTHONPYCACHEPREFIX=os.path.join(root, "pycache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # load bytecode, as an installed package does
    warm_cache = os.path.join(root, "warm-cache")

    def run(variant: str) -> float:
        cache = warm_cache if variant != "cold" else tempfile.mkdtemp(dir=root)
        child_env = dict(env, TOOLREG_CACHE_DIR=cache)
        cmd = [sys.executable, "-c", CHILD, site, variant]
        out = subprocess.run(cmd, env=child_env, capture_output=True, text=True, check=True)
        return float(out.stdout.split()[0])

    variants = ("floor", "warm", "cold")
    for variant in variants:  # warm-up: bytecode, page cache, and the warm cache file
        run(variant)
    samples: dict[str, list[float]] = {v: [] for v in variants}
    for _ in range(cfg["subprocess_samples"]):
        for variant in variants:
            samples[variant].append(run(variant))
    med = {v: statistics.median(s) for v, s in samples.items()}
    note = f"median of {cfg['subprocess_samples']} fresh interpreters, import included"
    return [
        Result("warm find_packs, fresh interpreter", med["warm"], med["floor"], 0.5, note),
        Result("cold find_packs, fresh interpreter", med["cold"], med["floor"], None, note),
    ]


def format_ns(ns: float | None) -> str:
    if ns is None:
        return "-"
    for unit, scale in (("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.1f} {unit}"
    return f"{ns:.0f} ns"


def print_table(results: list[Result]) -> None:
    rows = [("case", "value", "floor", "ratio", "target", "verdict", "note")]
    for r in results:
        ratio = "-" if r.ratio is None else f"{r.ratio:.3f}x"
        target = "report" if r.target is None else f"<= {r.target:g}x"
        cells = (r.case, format_ns(r.value_ns), format_ns(r.floor_ns), ratio, target, r.verdict)
        rows.append((*cells, r.error or r.note))
    widths = [max(len(row[col]) for row in rows) for col in range(6)]
    for index, row in enumerate(rows):
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:6], widths[1:], strict=True)
        ]
        print("  ".join(cells) + "  " + row[6])
        if index == 0:
            print("-" * (sum(widths) + 2 * 6 + len("note")))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats: a smoke run")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    cfg = QUICK if args.quick else FULL
    started = time.perf_counter()
    root = tempfile.mkdtemp(prefix="toolreg-bench-packs-")
    results: list[Result] = []
    try:
        site = make_site(root)
        for name, case in (("in-process", bench_in_process), ("subprocess", bench_subprocess)):
            print(f"measuring {name} ...", file=sys.stderr)
            try:
                arg = os.path.join(root, "cache") if case is bench_in_process else root
                results += case(site, arg, cfg)
            except Exception as exc:  # report and carry on: the script never fails
                results.append(Result(f"{name} cases", None, None, error=repr(exc)))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print_table(results)
    if args.json:
        meta = {
            "python": sys.version,
            "platform": platform.platform(),
            "packs": PACKS,
            "other_dists": OTHERS,
            "config": cfg,
            "quick": args.quick,
            "elapsed_s": round(time.perf_counter() - started, 2),
        }
        rows = [asdict(r) | {"ratio": r.ratio, "verdict": r.verdict} for r in results]
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"meta": meta, "results": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
