"""Start-up benchmark: whole ``python`` and ``toolreg`` processes against ``python -c pass``.

Run from the repository root::

    .venv/bin/python benchmarks/bench_startup.py [--quick] [--json PATH]

Each row is a fresh process of this interpreter, timed from spawn to exit
(``perf_counter`` around ``subprocess.run``, output to /dev/null); the floor
is ``python -c pass`` in the same run. The variants take turns, so a noisy
moment hits all of them alike, and each row gives the median. Rows:

- ``import toolreg``;
- the standard-library modules the registry imports, alone: report only, the
  part of the next rows toolreg's own code cannot shed;
- ``from toolreg import registry``: the registry core, report only;
- ``toolreg list --json``, built-in tools only;
- ``toolreg call current_time``: one trivial built-in call, report only.

The children run in a clean environment made for the run: no ``TOOLREG_*``
variables, an empty config dir and working directory, a scan cache of their
own (filled by the untimed warm-up runs), and bytecode written to and read
from a temp dir (``PYTHONPYCACHEPREFIX``), as an installed package would. The
note of each row gives the number of modules the process imports beyond the
floor's. The targets live in bench_targets.py; this script reports, and its
exit code is always 0. See benchmarks/README.md.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from harness import Result, parse_run, report, run_case


@dataclass(frozen=True)
class Config:
    samples: int  # fresh processes per variant (the median is kept)
    warmup: int  # untimed runs per variant first: bytecode, caches, page cache


FULL = Config(samples=40, warmup=3)
QUICK = Config(samples=8, warmup=2)

# Each case: (row name, the code run as ``python -c``, its argv).
# The toolreg commands run as the console script does: ``toolreg.cli.run``.
CLI = "import sys; from toolreg.cli import run; sys.argv[0] = 'toolreg'; run()"
# What `from toolreg import registry` loads from the standard library (and its own
# imports), measured alone for reference.
STDLIB = "import typing, dataclasses, logging, json, threading, copy, fnmatch, importlib.util"
CASES: list[tuple[str, str, list[str]]] = [
    ("import toolreg", "import toolreg", []),
    ("stdlib the registry needs (reference)", STDLIB, []),
    ("from toolreg import registry", "from toolreg import registry", []),
    ("toolreg list --json (built-ins only)", CLI, ["list", "--json"]),
    ("toolreg call current_time", CLI, ["call", "current_time", '{"timezone": "UTC"}']),
]

# Counts the modules a case imports, in a child of its own (not timed).
COUNT = """
import io, os, sys
before = set(sys.modules)
code, argv = sys.argv[1], sys.argv[2:]
sys.argv = ["toolreg", *argv]
if "toolreg.cli" in code:
    from toolreg.cli import main
    real, sys.stdout = sys.stdout, io.StringIO()
    main(argv)
    sys.stdout = real
else:
    exec(code)
print(len(set(sys.modules) - before))
"""


def clean_environment(root: str) -> dict[str, str]:
    """The children's environment: nothing of the operator's, caches of their own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLREG_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # load bytecode, as an installed package does
    for name in ("config", "cache", "pycache", "cwd"):
        os.makedirs(os.path.join(root, name))
    env.update(
        XDG_CONFIG_HOME=os.path.join(root, "config"),
        APPDATA=os.path.join(root, "config"),
        TOOLREG_CACHE_DIR=os.path.join(root, "cache"),
        PYTHONPYCACHEPREFIX=os.path.join(root, "pycache"),
    )
    packs = installed_packs(env, os.path.join(root, "cwd"))
    if packs:  # e.g. after `make demo`: the row is about the built-ins alone
        env["TOOLREG_PLUGINS"] = ""
    return env


def installed_packs(env: dict[str, str], cwd: str) -> int:
    code = "from toolreg._discovery.entrypoints import find_packs; print(len(find_packs()))"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True, check=True
    )
    return int(out.stdout)


def run_once(code: str, argv: list[str], env: dict[str, str], cwd: str) -> float:
    """Nanoseconds from spawning ``python -c code argv...`` to its exit."""
    start = time.perf_counter_ns()
    subprocess.run(
        [sys.executable, "-c", code, *argv],
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    return time.perf_counter_ns() - start


def module_count(code: str, argv: list[str], env: dict[str, str], cwd: str) -> int:
    cmd = [sys.executable, "-c", COUNT, code, *argv]
    out = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1])


def bench(cfg: Config, root: str) -> list[Result]:
    env = clean_environment(root)
    cwd = os.path.join(root, "cwd")
    variants = [("python -c pass", "pass", [])] + CASES
    for _ in range(cfg.warmup):
        for _name, code, argv in variants:
            run_once(code, argv, env, cwd)
    samples: dict[str, list[float]] = {name: [] for name, *_ in variants}
    for _ in range(cfg.samples):
        for name, code, argv in variants:
            samples[name].append(run_once(code, argv, env, cwd))
    floor = statistics.median(samples["python -c pass"])
    off = " (installed packs off: TOOLREG_PLUGINS='')" if "TOOLREG_PLUGINS" in env else ""
    results = [Result("python -c pass", floor, floor, note=f"median of {cfg.samples}; the floor")]
    for name, code, argv in CASES:
        value = statistics.median(samples[name])
        modules = module_count(code, argv, env, cwd)
        note = f"{(value - floor) / 1e6:+.1f} ms; {modules} modules imported"
        results.append(
            Result(
                name,
                value,
                floor,
                added_ns=value - floor,
                note=note + (off if "list" in name else ""),
            )
        )
    return results


def main(argv: list[str] | None = None) -> int:
    args, cfg = parse_run(__doc__.splitlines()[0], argv, (FULL, QUICK))
    started = time.perf_counter()
    root = tempfile.mkdtemp(prefix="toolreg-bench-startup-")
    results: list[Result] = []
    try:
        run_case(results, "start-up", lambda: bench(cfg, root))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    report(results, args, cfg, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
