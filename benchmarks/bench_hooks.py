"""What pack hooks and the operator's permissions cost a dispatch, against a same-run floor.

Run from the repository root::

    .venv/bin/python benchmarks/bench_hooks.py [--quick]

Cases:
- dispatch after loading a pack that implements no dispatch hook, against a
  registry that never saw a pack (target: 1.0x, within noise);
- dispatch with one ``toolreg_pre_tool_call`` implementation, inline (no
  deadline) and with the default deadline (the hook runs in a worker thread);
- a typical handler that builds a small JSON result, dispatched and called
  directly, to put the fixed dispatch overhead in proportion;
- dispatch under the operator's ``[permissions]``: a config without the table
  (target: 1.0x), 200 rules of which none decides the call (five argument rules
  on the tool's name are matched every call; target: +1 µs at most) and one
  plain ``allow`` rule that names the tool, each against the bare registry.

The packs are real packages written to a temp dir and imported by the plugin
host; only the entry-point lookup is skipped (bench_packs.py measures that).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import textwrap
from pathlib import Path

from harness import FULL, QUICK, Result, print_table, time_statements

from toolreg import ToolRegistry, apply_config, parse_config, tool_result
from toolreg._discovery.entrypoints import PackRecord
from toolreg._loaders.plugins import PluginHost

PLAIN = """
from toolreg import registry

registry.register("pack_tool", "bench", {}, lambda args: "ok")
"""

HOOKED = (
    PLAIN
    + """

from toolreg import hookimpl


@hookimpl
def toolreg_pre_tool_call(name, args):
    return None
"""
)


def handler(args: dict) -> str:
    return "ok"


def typical(args: dict) -> str:
    return tool_result(path=args["path"], lines=12, truncated=False)


def load(root: Path, package: str, source: str, config_text: str = "") -> ToolRegistry:
    (root / package).mkdir()
    (root / package / "__init__.py").write_text(textwrap.dedent(source))
    registry = ToolRegistry()
    registry.register("bench_tool", "bench", {}, handler)
    registry.register("typical_tool", "bench", {}, typical)
    record = PackRecord(package.replace("_", "-"), package, "1.0", (("m", package),), None, "")
    report = PluginHost(registry, parse_config(config_text)).load_all(packs=[record])
    outcome = report.plugins[0]
    if outcome.status != "loaded":
        raise RuntimeError(f"{package}: {outcome.status}: {outcome.reason}")
    return registry


def rule_set(count: int = 200) -> dict[str, list[str]]:
    """``count`` rules over tool names, toolsets, packs and arguments; none allows bench_tool
    outright, five are argument rules on its name that its arguments do not match."""
    deny = [f"mcp__server{i}__delete_*" for i in range(count // 4)]
    ask = [f"write_{i}(path=/etc/*)" for i in range(count // 4 - 5)]
    ask += [f"bench_tool(path=/secret{i}/*)" for i in range(5)]
    allow = [f"toolset:web{i}" for i in range(count // 4)]
    allow += [f"pack:toolreg-pack{i}" for i in range(count - len(deny) - len(ask) - len(allow))]
    return {"default": "allow", "deny": deny, "ask": ask, "allow": allow}


def with_permissions(table: dict[str, object] | None) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register("bench_tool", "bench", {}, handler)
    if table is None:
        apply_config(parse_config(""), registry)  # what every host without the table runs
    else:
        registry.set_permissions(table)
    return registry


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats: a smoke run")
    cfg = QUICK if parser.parse_args(argv).quick else FULL
    with tempfile.TemporaryDirectory() as tmp:
        sys.path.insert(0, tmp)
        root = Path(tmp)
        bare = ToolRegistry()
        bare.register("bench_tool", "bench", {}, handler)
        no_hooks = load(root, "bench_plain_pack", PLAIN)
        inline = load(root, "bench_hook_inline", HOOKED, "[plugins]\nhook_timeout = 0\n")
        deadline = load(root, "bench_hook_deadline", HOOKED)
        args = {"path": "notes.txt"}
        rules = rule_set()
        assert sum(map(len, (rules["deny"], rules["ask"], rules["allow"]))) == 200
        namespace = {
            "no_table": with_permissions(None),
            "rules_200": with_permissions(rules),
            "one_rule": with_permissions({"allow": ["bench_tool"]}),
            "bare": bare,
            "no_hooks": no_hooks,
            "inline": inline,
            "deadline": deadline,
            "args": args,
            "handler": handler,
            "typical": typical,
        }
        times = time_statements(
            {
                "handler": "handler(args)",
                "bare": "bare.dispatch('bench_tool', args)",
                "no_hooks": "no_hooks.dispatch('bench_tool', args)",
                "inline": "inline.dispatch('bench_tool', args)",
                "deadline": "deadline.dispatch('bench_tool', args)",
                "typical": "typical(args)",
                "typical_dispatch": "no_hooks.dispatch('typical_tool', args)",
                "no_table": "no_table.dispatch('bench_tool', args)",
                "rules_200": "rules_200.dispatch('bench_tool', args)",
                "one_rule": "one_rule.dispatch('bench_tool', args)",
            },
            namespace,
            cfg,
        )

    def over_bare(case: str, key: str, how: str = "") -> Result:
        added = times[key] - times["bare"]
        note = f"{added / 1000:+.2f} µs per call{how}"
        return Result(case, times[key], times["bare"], added_ns=added, note=note)

    results = [
        Result(
            "dispatch, pack loaded, no dispatch hooks",
            times["no_hooks"],
            times["bare"],
            target=1.1,
            note="floor: dispatch on a registry that never loaded a pack",
        ),
        over_bare("dispatch, one pre_tool_call hook, no deadline", "inline"),
        over_bare(
            "dispatch, one pre_tool_call hook, 10 s deadline", "deadline", " (worker thread)"
        ),
        Result(
            "dispatch of a typical JSON-result handler",
            times["typical_dispatch"],
            times["typical"],
            target=3.0,
            note=f"{times['typical_dispatch'] - times['typical']:+.0f} ns over typical(args)",
        ),
        Result(
            "dispatch of a no-op handler (for scale)",
            times["bare"],
            times["handler"],
            note=f"{times['bare'] - times['handler']:+.0f} ns over handler(args)",
        ),
        Result(
            "dispatch, config without [permissions]",
            times["no_table"],
            times["bare"],
            target=1.1,
            note="floor: dispatch on a registry that never had rules",
        ),
        over_bare("dispatch, 200 permission rules, none deciding", "rules_200", " (target +1 µs)"),
        over_bare("dispatch, one matching allow rule", "one_rule"),
    ]
    print_table(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
