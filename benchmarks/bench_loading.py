"""Loading 50 tool packs: toolreg's load_plugins against pluggy, stevedore and a floor.

Run from the repository root::

    .venv/bin/python benchmarks/bench_loading.py [--quick] [--json PATH] [--profile] [--parts]
        [--inline]

A temp site dir gets 50 installed packs the way pip lays them out: a package
whose import registers 5 tools with ``toolreg.registry``, and a dist-info with
``METADATA``, ``RECORD`` and a ``toolreg.tools`` entry point naming the
module. Each sample is a fresh interpreter with that dir first on
``sys.path`` (the rest is this virtualenv's path, as a host's would be); it
imports what it needs untimed, then times only the loading:

- **floor**: ``importlib.import_module`` of the 50 modules by name, their
  ``registry.register`` calls going to a plain dict: no discovery, no checks;
- **pluggy**: ``PluginManager.load_setuptools_entrypoints("toolreg.tools")``
  (a fresh manager with toolreg's hookspecs), registrations to the plain dict;
- **stevedore**: ``ExtensionManager("toolreg.tools")`` with its entry-point
  cache warm, registrations to the plain dict (skipped if not installed);
- **toolreg**: ``load_plugins(config, ToolRegistry())`` with an operator
  config that enables the 50 packs (read untimed) and a warm pack cache.

Every row is the median of N interpreters against the floor's median; the
toolreg row's note gives its time over pluggy's (the target, in
bench_targets.py: no slower than pluggy). ``--profile``
also prints the toolreg row's cProfile, top functions by own time; ``--inline``
adds a row with toolreg's pack loop on the calling thread, no deadline (what
the import worker costs, measurement only). The script
reports; the exit code is always 0. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from harness import Result, parse_run, report, run_case

PACKS, TOOLS_PER_PACK = 50, 5
GROUP = "toolreg.tools"
VARIANTS = ("floor", "pluggy", "stevedore", "toolreg")


@dataclass(frozen=True)
class Config:
    samples: int  # fresh interpreters per variant (median is kept)


FULL = Config(samples=15)
QUICK = Config(samples=4)

PACK_MODULE = '''"""Benchmark pack {index}: five tools, registered at import."""

from toolreg import registry

SCHEMA = {{
    "type": "object",
    "properties": {{"text": {{"type": "string", "description": "Some text."}}}},
    "required": ["text"],
}}


def echo(args, **kwargs):
    return args["text"]


def upper(args, **kwargs):
    return args["text"].upper()


def lower(args, **kwargs):
    return args["text"].lower()


def length(args, **kwargs):
    return str(len(args["text"]))


def reverse(args, **kwargs):
    return args["text"][::-1]


for _handler in (echo, upper, lower, length, reverse):
    _name = "{module}_" + _handler.__name__
    registry.register(
        _name,
        "{module}",
        {{"name": _name, "description": "A benchmark tool.", "parameters": SCHEMA}},
        _handler,
    )
'''


def module_name(index: int) -> str:
    return f"toolreg_load{index:03d}"


def make_site(root: str) -> str:
    """Write PACKS installed packs: package, METADATA, RECORD, entry_points.txt."""
    site = os.path.join(root, "site")
    for index in range(PACKS):
        module = module_name(index)
        dist_info = f"{module}-1.0.dist-info"
        os.makedirs(os.path.join(site, module))
        os.makedirs(os.path.join(site, dist_info))
        write(site, f"{module}/__init__.py", PACK_MODULE.format(index=index, module=module))
        write(
            site,
            f"{dist_info}/METADATA",
            f"Metadata-Version: 2.1\nName: {module.replace('_', '-')}\nVersion: 1.0\n"
            "Requires-Dist: toolreg-core>=0.1\n",
        )
        write(site, f"{dist_info}/entry_points.txt", f"[{GROUP}]\n{module} = {module}\n")
        record = [f"{module}/__init__.py", f"{dist_info}/METADATA"]
        record += [f"{dist_info}/entry_points.txt", f"{dist_info}/RECORD"]
        write(site, f"{dist_info}/RECORD", "".join(f"{path},,\n" for path in record))
    return site


def write(directory: str, name: str, text: str) -> None:
    with open(os.path.join(directory, name), "w", encoding="utf-8") as f:
        f.write(text)


def write_config(root: str) -> str:
    path = os.path.join(root, "toolreg.toml")
    enabled = ", ".join(f'"{module_name(i).replace("_", "-")}"' for i in range(PACKS))
    write(root, "toolreg.toml", f"[plugins]\nenabled = [{enabled}]\n")
    return path


# The entry-point names of the other packs installed beside the bench's (a venv
# after `make demo` has the example packs), one per line. Asked once, in a child
# of its own: asking in a pluggy sample, even untimed, would fill the caches of
# importlib.metadata (each path folder's listing, the regexes) that its timed
# scan reads, and time a scan half done.
OTHERS_CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
from importlib.metadata import entry_points
ours = {f"toolreg_load{index:03d}" for index in range(int(sys.argv[2]))}
print("\\n".join(sorted({ep.name for ep in entry_points(group="toolreg.tools")} - ours)))
"""

# One sample: argv is site, variant, config, packs, the others' names (comma-
# separated). Prints the wall and CPU nanoseconds of the loading, the tools
# registered and (toolreg) the pack scans.
CHILD = """
import importlib, os, sys, time
site, variant, config_path, packs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
others = set(filter(None, sys.argv[5].split(",")))
sys.path.insert(0, site)
import pluggy
import toolreg
from toolreg import hookspecs
try:
    from toolreg._discovery import entrypoints
except ImportError:
    entrypoints = None

class PlainRegistry:
    def __init__(self):
        self.tools = {}

    def register(self, name, toolset, schema, handler, **options):
        self.tools[name] = (toolset, schema, handler, options)

scans = []
if variant.startswith("toolreg"):
    target = toolreg.ToolRegistry()
    config = toolreg.load_config(config_path)
    load_plugins = toolreg.load_plugins  # its modules imported, as a host has them
    count = lambda: len(target.get_all_tool_names())
    # A warm cache is served without a scan of the installed metadata: count any
    # (when the private scan is where it was; else no scan is counted).
    scan = getattr(entrypoints, "_scan", None)
    if scan is not None:
        entrypoints._scan = lambda *args: scans.append(1) or scan(*args)
else:
    target = toolreg.registry = PlainRegistry()
    count = lambda: len(target.tools)
# Only the bench's packs load, as the toolreg variants' `enabled` list has it, so
# packs installed beside them (a venv after `make demo`) are left out everywhere.
ours = [f"toolreg_load{index:03d}" for index in range(packs)]
if variant == "stevedore":
    from stevedore import NamedExtensionManager
profiler = None
if variant in ("toolreg-profile", "toolreg-inline"):
    from toolreg._loaders import pack_modules
    # The pack loop on this thread, without deadlines (cProfile sees one thread).
    pack_modules.ImportLoop.run = lambda self, job, recovered: job()
    pack_modules.import_with_deadline = lambda timeout, load, target: load(target)
if variant == "toolreg-profile":
    import cProfile
    profiler = cProfile.Profile(time.thread_time)  # CPU time: steadier on a busy machine
    profiler.enable()
parts = {}
if variant == "toolreg-parts":
    # Each part's wall time, summed over the load (the imports' own run on the worker).
    from toolreg._discovery import dist_info
    from toolreg._loaders import pack_hooks, pack_modules, plugins
    from toolreg._loaders.plugins import PluginHost
    from toolreg._policy import admission

    def timed(owner, name):
        real = getattr(owner, name)
        key = (getattr(owner, "__name__", None) or type(owner).__name__).rpartition(".")[2]
        key += "." + name

        def part(*args, **kwargs):
            begun = time.perf_counter_ns()
            try:
                return real(*args, **kwargs)
            finally:
                parts[key] = parts.get(key, 0) + time.perf_counter_ns() - begun

        setattr(owner, name, part)

    for owner, name in (
        (plugins, "find_packs"), (admission, "check_compatible"),
        (dist_info, "installed_sources"), (target, "register_plugin_override_policy"),
        (pack_modules.ImportLoop, "run"), (PluginHost, "_load_pack"),
        (pack_modules, "import_target"),
        (target, "register"), (pack_hooks.PackPluginManager, "register"),
        (target, "decisions"),
    ):
        timed(owner, name)
start, cpu = time.perf_counter_ns(), time.process_time_ns()
if variant == "floor":
    for index in range(packs):
        importlib.import_module(f"toolreg_load{index:03d}")
elif variant == "pluggy":
    pm = pluggy.PluginManager("toolreg")
    pm.add_hookspecs(hookspecs)
    for name in others:
        pm.set_blocked(name)
    pm.load_setuptools_entrypoints("toolreg.tools")
elif variant == "stevedore":
    NamedExtensionManager("toolreg.tools", names=ours)
else:
    load_plugins(config, target)
elapsed, cpu = time.perf_counter_ns() - start, time.process_time_ns() - cpu
if profiler is not None:
    import pstats
    profiler.disable()
    pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(40)
if parts:
    import json
    print("PARTS " + json.dumps(parts), file=sys.stderr)
print(elapsed, cpu, count(), len(scans))
"""


def has_stevedore() -> bool:
    try:
        import stevedore  # noqa: F401
    except ImportError:
        return False
    return True


def child_env(root: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPYCACHEPREFIX=os.path.join(root, "pycache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # load bytecode, as installed packs do
    for name in ("TOOLREG_PLUGINS", "TOOLREG_DISABLE_PLUGIN_AUTOLOAD", "TOOLREG_CONFIG"):
        env.pop(name, None)
    env["TOOLREG_CACHE_DIR"] = os.path.join(root, "toolreg-cache")
    env["XDG_CACHE_HOME"] = os.path.join(root, "xdg-cache")  # stevedore's cache
    return env


@dataclass(frozen=True)
class Sample:
    wall_ns: float
    cpu_ns: float  # the child's CPU time, all threads: less swayed by a busy machine
    tools: int
    scans: int
    stderr: str


def other_packs(site: str, root: str) -> str:
    """The other installed packs' entry-point names, comma-separated, for pluggy to block."""
    cmd = [sys.executable, "-c", OTHERS_CHILD, site, str(PACKS)]
    out = subprocess.run(cmd, env=child_env(root), capture_output=True, text=True, check=True)
    return ",".join(out.stdout.split())


def run_child(site: str, root: str, config: str, variant: str, others: str) -> Sample:
    cmd = [sys.executable, "-c", CHILD, site, variant, config, str(PACKS), others]
    out = subprocess.run(cmd, env=child_env(root), capture_output=True, text=True, check=True)
    wall, cpu, tools, scans = out.stdout.split()[-4:]
    return Sample(float(wall), float(cpu), int(tools), int(scans), out.stderr)


def bench_loading(
    site: str, root: str, config: str, cfg: Config, inline: bool = False
) -> list[Result]:
    variants = [v for v in VARIANTS if v != "stevedore" or has_stevedore()]
    variants += ["toolreg-inline"] if inline else []
    expected = PACKS * TOOLS_PER_PACK
    others = other_packs(site, root)
    for variant in variants:  # warm-up: bytecode, page cache, the discovery caches
        tools = run_child(site, root, config, variant, others).tools
        if tools != expected:
            raise RuntimeError(f"{variant} registered {tools} tools, not {expected}")
    samples: dict[str, list[Sample]] = {v: [] for v in variants}
    for _ in range(cfg.samples):  # interleaved: a noisy moment hits every variant
        for variant in variants:
            samples[variant].append(run_child(site, root, config, variant, others))
    if any(sample.scans for sample in samples["toolreg"]):
        raise RuntimeError("toolreg scanned the metadata: its pack cache was not used")
    wall = {v: statistics.median(s.wall_ns for s in samples[v]) for v in variants}
    cpu = {v: statistics.median(s.cpu_ns for s in samples[v]) for v in variants}

    def row(case: str, variant: str) -> Result:
        note = (
            f"CPU {cpu[variant] / 1e6:.1f} ms, {cpu[variant] / cpu['floor']:.2f}x the floor's; "
            f"medians of {cfg.samples} fresh interpreters"
        )
        return Result(case, wall[variant], wall["floor"], note=note)

    results = [row("floor: import the 50 modules by name", "floor")]
    results.append(row("pluggy load_setuptools_entrypoints", "pluggy"))
    if "stevedore" in wall:
        results.append(row("stevedore ExtensionManager, warm cache", "stevedore"))
    else:
        results.append(Result("stevedore ExtensionManager", None, note="skipped: not installed"))
    toolreg = row("toolreg load_plugins, warm cache", "toolreg")
    toolreg.note = f"{wall['toolreg'] / wall['pluggy']:.2f}x pluggy's time; " + toolreg.note
    results.append(toolreg)
    if inline:
        results.append(row("toolreg, the pack loop on the caller (no deadline)", "toolreg-inline"))
    return results


# What --parts prints: a label, the parts (owner.name) timed in the child, and
# the parts taken away (the packs load inside the import worker's loop).
IMPORTS = "pack_modules.import_target"
PARTS = (
    ("warm pack-cache check (find_packs)", "plugins.find_packs", ""),
    ("compatibility (packaging, imported once)", "admission.check_compatible", ""),
    ("RECORD read (installed_sources)", "dist_info.installed_sources", ""),
    ("policy bind", "ToolRegistry.register_plugin_override_policy", ""),
    ("import worker: the hand-off and the watch", "ImportLoop.run", "PluginHost._load_pack"),
    ("the imports, their registrations included", IMPORTS, ""),
    ("  of which the registrations (the gate)", "ToolRegistry.register", ""),
    ("pluggy registration", "PackPluginManager.register", ""),
    ("decisions read for the report", "ToolRegistry.decisions", ""),
)


def print_parts(site: str, root: str, config: str, samples: int) -> None:
    """Median wall time of each part of toolreg's load, over ``samples`` interpreters."""
    runs = []
    for _ in range(samples):
        sample = run_child(site, root, config, "toolreg-parts", "")
        line = next(x for x in sample.stderr.splitlines() if x.startswith("PARTS "))
        runs.append((sample.wall_ns, json.loads(line[len("PARTS ") :])))
    print(f"toolreg's load by part, ms (medians of {samples} interpreters; timers add a little):")
    print(f"  {'whole load':48s} {statistics.median(wall for wall, _ in runs) / 1e6:7.2f}")
    for label, part, less in PARTS:
        figures = [times.get(part, 0) - times.get(less, 0) for _, times in runs]
        print(f"  {label:48s} {statistics.median(figures) / 1e6:7.2f}")


def main(argv: list[str] | None = None) -> int:
    def profile_option(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--profile", action="store_true", help="print toolreg's cProfile")
        parser.add_argument("--parts", action="store_true", help="time each part of toolreg's load")
        parser.add_argument(
            "--inline",
            action="store_true",
            help="also toolreg with its pack loop on the calling thread (measurement only)",
        )

    args, cfg = parse_run(__doc__.splitlines()[0], argv, (FULL, QUICK), profile_option)
    started = time.perf_counter()
    root = tempfile.mkdtemp(prefix="toolreg-bench-loading-")
    results: list[Result] = []
    try:
        site, config = make_site(root), write_config(root)
        run_case(results, "loading", lambda: bench_loading(site, root, config, cfg, args.inline))
        if args.profile:
            print(run_child(site, root, config, "toolreg-profile", "").stderr)
        if args.parts:
            print_parts(site, root, config, cfg.samples)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    report(results, args, cfg, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
