"""Pack discovery benchmark: find_packs() against bare importlib.metadata, as ratios.

Run from the repository root::

    .venv/bin/python benchmarks/bench_packs.py [--quick] [--json PATH]

A temp site dir gets 50 fake installed tool packs and 150 other distributions
(a third with console scripts), each with a package directory beside its
dist-info, as in a real site-packages. The floor is
``importlib.metadata.entry_points(group="toolreg.tools")`` (stdlib) with
``sys.path`` set to just that dir, since ``entry_points()`` takes no path. Rows:

- warm / cold ``find_packs(path=[site])`` in this process (imports done);
- the same in a fresh interpreter, timing ``import toolreg._discovery.entrypoints`` plus
  the call against ``import importlib.metadata`` plus the floor call. Both
  children import ``toolreg`` first, untimed, as a host would anyway.

Target: warm <= 0.5x the floor. The script reports; the exit code is always 0.
See benchmarks/README.md.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from harness import Result, parse_run, report, run_case, time_calls, time_statements

from toolreg._discovery.entrypoints import CACHE_FILE_NAME, GROUP, find_packs

PACKS, OTHERS = 50, 150


@dataclass(frozen=True)
class Config:
    repeat: int  # interleaved timeit repeats of warm and floor (min is kept)
    slice_s: float  # target duration of one timeit repeat
    cold_samples: int  # single cold calls in process (min is kept)
    subprocess_samples: int  # fresh interpreters per variant (median is kept)


FULL = Config(repeat=9, slice_s=0.05, cold_samples=30, subprocess_samples=15)
QUICK = Config(repeat=3, slice_s=0.01, cold_samples=5, subprocess_samples=4)


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


def bench_in_process(site: str, cache: str, cfg: Config) -> list[Result]:
    os.environ["TOOLREG_CACHE_DIR"] = cache
    cache_file = os.path.join(cache, CACHE_FILE_NAME)
    found, floor_found = len(find_packs(path=[site])), floor_call(site)
    note = f"{found} packs found (floor: {floor_found} entry points)"
    # Warm vs floor: timeit loops calibrated to slice_s, interleaved, min kept.
    best = time_statements(
        {"floor": "floor_call(site)", "warm": "find_packs(path=[site])"},
        {"floor_call": floor_call, "find_packs": find_packs, "site": site},
        cfg,  # time_statements reads only .repeat and .slice_s
    )
    # Cold: a single call after deleting the cache file, min of N, GC off like timeit.
    cold = time_calls(
        {"cold": lambda: find_packs(path=[site])},
        prepare=lambda: os.unlink(cache_file),
        samples=cfg.cold_samples,
    )["cold"]
    return [
        # The hit is checked against every entry_points.txt, as the floor reads them.
        Result("warm find_packs, in process", best["warm"], best["floor"], target=1.0, note=note),
        Result("cold find_packs, in process", cold, best["floor"], note="empty cache, min"),
    ]


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
    from toolreg._discovery.entrypoints import find_packs
    n = len(find_packs(path=[site]))
print((time.perf_counter() - start) * 1e9, n)
"""


def bench_subprocess(site: str, root: str, cfg: Config) -> list[Result]:
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
    for _ in range(cfg.subprocess_samples):
        for variant in variants:
            samples[variant].append(run(variant))
    med = {v: statistics.median(s) for v, s in samples.items()}
    note = f"median of {cfg.subprocess_samples} fresh interpreters, import included"
    return [
        Result(
            "warm find_packs, fresh interpreter", med["warm"], med["floor"], target=0.5, note=note
        ),
        Result("cold find_packs, fresh interpreter", med["cold"], med["floor"], note=note),
    ]


def main(argv: list[str] | None = None) -> int:
    args, cfg = parse_run(__doc__.splitlines()[0], argv, (FULL, QUICK))
    started = time.perf_counter()
    root = tempfile.mkdtemp(prefix="toolreg-bench-packs-")
    results: list[Result] = []
    try:
        site = make_site(root)
        # A case that crashes becomes an ERROR row: the script never fails.
        cache = os.path.join(root, "cache")
        run_case(results, "in-process", lambda: bench_in_process(site, cache, cfg))
        run_case(results, "subprocess", lambda: bench_subprocess(site, root, cfg))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    report(results, args, cfg, started, {"packs": PACKS, "other_dists": OTHERS})
    return 0


if __name__ == "__main__":
    sys.exit(main())
