"""What ``toolreg.lock`` adds to a warm load of 50 packs, as ratios of the same load without it.

Run from the repository root::

    .venv/bin/python benchmarks/bench_lock.py [--quick] [--json PATH]

The site is ``bench_loading.py``'s: 50 installed packs of 5 tools each, laid
out as pip does, with RECORDs that give each file's sha256 as pip writes them.
``toolreg lock`` (the real command, in a child) writes the lock of the 50. Each
sample is a fresh interpreter, caches warm (the pack cache, the file hash
cache, bytecode), that imports toolreg untimed and then times:

- **without a lock** (the floor): ``load_plugins(config, ToolRegistry())`` with
  the lock's path None, so nothing is checked;
- **with the lock**: the same load with ``[lock] path`` set, so every pack is
  checked against it before its code runs. A toolreg without the lock's
  enforcement ignores the path; the row then says so (no file was hashed)
  and is information only;
- **the check's own parts**: what that check must do whatever the loader
  around it, timed alone in a fresh interpreter: importing what reads a lock,
  ``read_lock``, then for each of the 50 packs ``read_record`` and ``tampered``
  with a ``FileHashes`` read from its warm cache file. A figure today, and the
  floor of the row above; the next row is its ``read_lock`` alone.

Target: the lock adds <= 10% to the load (ratio <= 1.10). Medians of N
interpreters, interleaved. The script reports; the exit code is always 0.
See benchmarks/README.md.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from bench_loading import PACKS, TOOLS_PER_PACK, child_env, make_site, write_config
from harness import Result, parse_run, report, run_case

TARGET = 1.10


@dataclass(frozen=True)
class Config:
    samples: int  # fresh interpreters per variant (median is kept)


FULL = Config(samples=15)
QUICK = Config(samples=3)


def add_hashes(site: str) -> None:
    """Rewrite each RECORD as pip writes it: every file with its urlsafe sha256 and size."""
    for name in sorted(os.listdir(site)):
        if not name.endswith(".dist-info"):
            continue
        record = os.path.join(site, name, "RECORD")
        with open(record, encoding="utf-8") as f:
            paths = [line.split(",")[0] for line in f if line.strip()]
        rows = []
        for path in paths:
            if path.endswith("/RECORD"):
                rows.append(f"{path},,\n")
                continue
            with open(os.path.join(site, path), "rb") as f:
                data = f.read()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            rows.append(f"{path},sha256={digest.decode()},{len(data)}\n")
        with open(record, "w", encoding="utf-8") as f:
            f.writelines(rows)


def write_lock(site: str, root: str, config: str) -> str:
    """``toolreg lock`` of the 50 packs, as an operator would run it."""
    env = child_env(root)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [site, env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-m", "toolreg", "--config", config, "lock"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"toolreg lock failed: {done.stderr.strip()}")
    path = os.path.join(os.path.dirname(config), "toolreg.lock")
    if f"locked {PACKS} packs ({PACKS * TOOLS_PER_PACK} tools)" not in done.stdout:
        raise RuntimeError(f"toolreg lock did not lock the {PACKS} packs: {done.stdout.strip()}")
    return path


# One sample: argv is site, variant, config. Prints wall and CPU ns, tools, files hashed.
CHILD = """
import os, sys, time
site, variant, config_path = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, site)
import toolreg
from toolreg._discovery import file_hashes

config = toolreg.load_config(config_path)
lock_path = config.lock.path
looked = []
real_hash = file_hashes.FileHashes.hash
def counted(self, path, algorithm):
    looked.append(path)
    return real_hash(self, path, algorithm)
file_hashes.FileHashes.hash = counted  # a class attribute: seen however it is imported
tools = 0
if variant == "read-lock":
    wall, cpu = time.perf_counter_ns(), time.process_time_ns()
    from toolreg._policy.lock_file import read_lock
    lock = read_lock(lock_path)
    wall, cpu = time.perf_counter_ns() - wall, time.process_time_ns() - cpu
    tools = sum(len(p.tools) for p in lock.packs.values())
elif variant == "parts":
    from toolreg._discovery.entrypoints import find_packs
    packs = [p.path for p in find_packs(path=[site]) if p.plugin_id.startswith("toolreg-load")]
    wall, cpu = time.perf_counter_ns(), time.process_time_ns()
    from toolreg._discovery.file_hashes import FileHashes
    from toolreg._discovery.record_check import read_record, tampered
    from toolreg._policy.lock_file import read_lock
    lock = read_lock(lock_path)
    hashes = FileHashes()
    problems = []
    for dist_info in packs:
        record = read_record(dist_info)
        problems += tampered(record, hashes)
    hashes.save()
    wall, cpu = time.perf_counter_ns() - wall, time.process_time_ns() - cpu
    assert lock is not None and len(lock.packs) == len(packs) and not problems, problems
    tools = sum(len(p.tools) for p in lock.packs.values())
else:
    if variant == "none":
        config = config._replace(lock=config.lock._replace(path=None))
    target = toolreg.ToolRegistry()
    load_plugins = toolreg.load_plugins
    wall, cpu = time.perf_counter_ns(), time.process_time_ns()
    report = load_plugins(config, target)
    wall, cpu = time.perf_counter_ns() - wall, time.process_time_ns() - cpu
    tools = len(target.get_all_tool_names())
print(wall, cpu, tools, len(looked))
"""


@dataclass(frozen=True)
class Sample:
    wall_ns: float
    cpu_ns: float
    tools: int
    hashed: int  # files looked up through FileHashes: 0 means no lock check ran


def run_child(site: str, root: str, config: str, variant: str) -> Sample:
    cmd = [sys.executable, "-c", CHILD, site, variant, config]
    out = subprocess.run(cmd, env=child_env(root), capture_output=True, text=True, check=True)
    wall, cpu, tools, hashed = out.stdout.split()[-4:]
    return Sample(float(wall), float(cpu), int(tools), int(hashed))


VARIANTS = ("none", "lock", "parts", "read-lock")


def bench_lock(site: str, root: str, config: str, cfg: Config) -> list[Result]:
    expected = PACKS * TOOLS_PER_PACK
    for variant in VARIANTS:  # warm-up: bytecode, page cache, pack and file hash caches
        sample = run_child(site, root, config, variant)
        if sample.tools != expected:
            raise RuntimeError(f"{variant}: {sample.tools} tools, not {expected}")
    samples: dict[str, list[Sample]] = {v: [] for v in VARIANTS}
    for _ in range(cfg.samples):  # interleaved: a noisy moment hits every variant
        for variant in VARIANTS:
            samples[variant].append(run_child(site, root, config, variant))
    wall = {v: statistics.median(s.wall_ns for s in samples[v]) for v in VARIANTS}
    cpu = {v: statistics.median(s.cpu_ns for s in samples[v]) for v in VARIANTS}
    enforced = all(s.hashed for s in samples["lock"])

    def note(variant: str) -> str:
        return (
            f"CPU {cpu[variant] / 1e6:.2f} ms, {cpu[variant] / cpu['none']:.2f}x the floor's; "
            f"medians of {cfg.samples} fresh interpreters"
        )

    floor = wall["none"]
    results = [Result("load 50 packs, no lock (the floor)", floor, floor, note=note("none"))]
    with_lock = Result(
        "load 50 packs with the lock",
        wall["lock"],
        floor,
        target=TARGET if enforced else None,
        added_ns=wall["lock"] - floor,
        note=note("lock"),
    )
    if not enforced:
        with_lock.note = "this toolreg does not check the lock (no file hashed); " + with_lock.note
    results.append(with_lock)
    hashed = samples["parts"][0].hashed
    results.append(
        Result(
            "the check alone: read_lock, 50x read_record + tampered",
            wall["parts"],
            floor,
            target=TARGET - 1.0,
            note=f"{hashed} files, warm FileHashes from its cache file; " + note("parts"),
        )
    )
    size = os.path.getsize(os.path.join(os.path.dirname(config), "toolreg.lock"))
    results.append(
        Result(
            "  of which read_lock (import and parse the TOML)",
            wall["read-lock"],
            floor,
            note=f"a {size / 1024:.0f} KiB lock, {expected} tools; " + note("read-lock"),
        )
    )
    return results


def main(argv: list[str] | None = None) -> int:
    args, cfg = parse_run(__doc__.splitlines()[0], argv, (FULL, QUICK))
    started = time.perf_counter()
    root = tempfile.mkdtemp(prefix="toolreg-bench-lock-")
    results: list[Result] = []
    try:
        site, config = make_site(root), write_config(root)
        add_hashes(site)
        run_case(results, "lock", lambda: bench_lock_with(site, root, config, cfg))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    report(results, args, cfg, started)
    return 0


def bench_lock_with(site: str, root: str, config: str, cfg: Config) -> list[Result]:
    write_lock(site, root, config)
    return bench_lock(site, root, config, cfg)


if __name__ == "__main__":
    sys.exit(main())
