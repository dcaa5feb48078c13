"""Tool search on public data: BFCL's questions against a pooled catalog of its functions.

Run from the repository root, with the benchmark's data and rival installed
(never toolreg's dependencies)::

    .venv/bin/python -m pip install --no-deps bfcl-eval
    .venv/bin/python -m pip install toolregistry==0.19.0
    .venv/bin/python benchmarks/bench_search.py            # ~1 min
    .venv/bin/python benchmarks/bench_search.py --quick    # a smoke run

The catalog pools every distinct function of BFCL's non-live categories
``simple_python``, ``multiple``, ``parallel``, ``parallel_multiple`` and
``irrelevance`` (about 1,300 tools), each registered with its schema (BFCL's
``dict``, ``float``, ``tuple`` and ``any`` types made JSON Schema). Each
question is a query; its right answers are the functions its
``possible_answer`` names; an ``irrelevance`` question's right answer is an
empty list. The same catalog and queries go to ``ToolRegistry.search``, to
toolregistry's ``ToolDiscoveryTool`` and to a plain BM25 over name and
description. Latency is timed per query at 1,000 tools and at 10,000 (the
rest synthetic tools whose words no question uses). Building a catalog is
generic: :func:`evaluate` takes any tools and any (query, expected names).

The script reports only; the exit code is always 0.
"""

from __future__ import annotations

import gc
import json
import math
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import parse_run  # noqa: E402

CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance")


@dataclass(frozen=True)
class Case:
    """One query and the names that answer it (empty: no tool should)."""

    query: str
    expected: frozenset[str]
    category: str


@dataclass(frozen=True)
class Size:
    queries: int  # per category; 0: all
    latency_queries: int


FULL, QUICK = Size(0, 400), Size(40, 60)


# -- the data: BFCL, read from its package --------------------------------------


def _lines(name: str) -> list[dict[str, Any]]:
    from importlib.resources import files

    text = files("bfcl_eval").joinpath("data", name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


_TYPES = {"dict": "object", "float": "number", "tuple": "array", "int": "integer", "str": "string"}
_TYPES |= {"bool": "boolean", "list": "array", "long": "integer", "double": "number"}


def json_schema(node: Any) -> Any:
    """A BFCL parameter schema as JSON Schema: its Python type names made JSON Schema's."""
    if isinstance(node, list):
        return [json_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type":
            if value == "any":
                continue
            out[key] = _TYPES.get(value, value) if isinstance(value, str) else value
        elif key == "properties" and isinstance(value, dict):
            out[key] = {k: json_schema(v) for k, v in value.items()}
        elif key == "optional":
            continue
        else:
            out[key] = json_schema(value)
    return out


def load_bfcl(limit: int = 0) -> tuple[dict[str, dict[str, Any]], list[Case]]:
    """The pooled catalog (name -> schema) and the cases, ``limit`` per category (0: all).

    Every distinct function is one tool; two that share a name but differ get
    the second a ``~2`` suffix, and each question's answers name the variant it
    was asked with.
    """
    tools: dict[str, dict[str, Any]] = {}
    seen: dict[str, str] = {}  # a function's JSON -> its catalog name
    cases: list[Case] = []
    for category in CATEGORIES:
        questions = _lines(f"BFCL_v4_{category}.json")
        answers = {}
        if category != "irrelevance":
            answers = {a["id"]: a for a in _lines(f"possible_answer/BFCL_v4_{category}.json")}
        for index, item in enumerate(questions):
            for function in item["function"]:
                key = json.dumps(function, sort_keys=True)
                name = seen.get(key)
                if name is None:
                    name, n = function["name"], 1
                    while name in tools:
                        n += 1
                        name = f"{function['name']}--{n}"
                    seen[key] = name
                    tools[name] = {
                        "name": name,
                        "description": function.get("description", ""),
                        "parameters": json_schema(function.get("parameters"))
                        or {"type": "object", "properties": {}},
                    }
            if limit and index >= limit:
                continue
            turns = item["question"][0]
            query = " ".join(t["content"] for t in turns if t.get("role") == "user")
            expected: frozenset[str] = frozenset()
            if category != "irrelevance":
                calls = answers[item["id"]]["ground_truth"]
                expected = frozenset(n for call in calls for n in call)
            cases.append(Case(query, expected, category))
    return tools, cases


def synthetic_tools(count: int) -> dict[str, dict[str, Any]]:
    """Tools whose words no question uses: made-up words, so the catalog grows, not the answers."""
    syllables = ["zor", "vex", "qua", "lum", "dri", "pax", "kel", "mun", "tib", "rho", "gav", "sul"]

    def word(i: int) -> str:
        out = []
        for _ in range(3):
            out.append(syllables[i % len(syllables)])
            i //= len(syllables)
        return "".join(out)

    tools = {}
    for i in range(count):
        name = f"syn_{word(i)}_{word(i * 7 + 3)}"
        text = f"{word(i + 11).title()} the {word(i + 5)} of a {word(i * 3)} {word(i)}."
        tools[name] = {
            "name": name,
            "description": text,
            "parameters": {
                "type": "object",
                "properties": {word(i + 1): {"type": "string", "description": word(i + 2)}},
            },
        }
    return tools


# -- searchers: each (query, k) -> [(name, score)] best first ------------------

Searcher = Callable[[str, int], list[tuple[str, float]]]


def toolreg_searcher(tools: dict[str, dict[str, Any]], toolset: str = "bfcl") -> Searcher:
    from toolreg import ToolRegistry

    registry = ToolRegistry()
    for name, schema in tools.items():
        registry.register(name, toolset, schema, _handler, description=schema["description"])

    def search(query: str, k: int, min_score: float | None = 0.0) -> list[tuple[str, float]]:
        return [(h.name, h.score) for h in registry.search(query, limit=k, min_score=min_score)]

    search.registry = registry  # type: ignore[attr-defined]
    return search


def discovery_searcher(tools: dict[str, dict[str, Any]]) -> Searcher:
    """toolregistry's ToolDiscoveryTool, with its defaults, over the same tools."""
    import logging

    from toolregistry import Tool, ToolRegistry
    from toolregistry.llm.discovery import ToolDiscoveryTool

    logging.getLogger("toolregistry").setLevel(logging.ERROR)
    registry = ToolRegistry()
    for name, schema in tools.items():
        tool = Tool(
            name=name,
            description=schema["description"],
            parameters=schema["parameters"],
            callable=_handler,
        )
        registry.register(tool)
    discovery = ToolDiscoveryTool(registry)

    def search(query: str, k: int) -> list[tuple[str, float]]:
        return [(r["name"], float(r["score"])) for r in discovery.discover(query, top_k=k)]

    return search


def bm25_searcher(tools: dict[str, dict[str, Any]], k1: float = 1.2, b: float = 0.75) -> Searcher:
    """Plain Okapi BM25 over name and description: lower-case word tokens, nothing else."""
    token = re.compile(r"[a-z0-9]+")
    docs = {
        name: token.findall(f"{name.replace('_', ' ')} {s['description']}".lower())
        for name, s in tools.items()
    }
    postings: dict[str, dict[str, int]] = {}
    for name, words in docs.items():
        for w in words:
            postings.setdefault(w, {}).setdefault(name, 0)
            postings[w][name] += 1
    n = len(docs)
    avg = sum(map(len, docs.values())) / n

    def search(query: str, k: int) -> list[tuple[str, float]]:
        scores: dict[str, float] = {}
        for w in set(token.findall(query.lower())):
            hits = postings.get(w, {})
            idf = math.log(1 + (n - len(hits) + 0.5) / (len(hits) + 0.5))
            for name, tf in hits.items():
                norm = tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(docs[name]) / avg))
                scores[name] = scores.get(name, 0.0) + idf * norm
        return sorted(scores.items(), key=lambda kv: -kv[1])[:k]

    return search


def _handler(args: Any = None, **kwargs: Any) -> str:
    return "ok"


# -- metrics --------------------------------------------------------------------


def base_name(name: str) -> str:
    """The function a catalog name is a variant of (``math.gcd--2`` -> ``math.gcd``)."""
    return name.split("--")[0]


@dataclass
class Accuracy:
    recall1: float
    recall5: float
    mrr: float
    empty: float  # share of irrelevance queries answered with nothing


def evaluate(search: Searcher, cases: Sequence[Case]) -> Accuracy:
    """recall@1, recall@5 and MRR over the cases with answers; empty-rate over those without."""
    r1 = r5 = rr = 0.0
    relevant = empty = irrelevant = 0
    for case in cases:
        found = [base_name(n) for n, _ in search(case.query, 5)]
        if not case.expected:
            irrelevant += 1
            empty += not found
            continue
        relevant += 1
        r1 += bool(found[:1]) and found[0] in case.expected
        r5 += len(case.expected & set(found)) / min(5, len(case.expected))
        rank = next((i for i, name in enumerate(found, 1) if name in case.expected), None)
        rr += 1 / rank if rank else 0.0
    return Accuracy(r1 / relevant, r5 / relevant, rr / relevant, empty / max(irrelevant, 1))


def curve(search: Searcher, cases: Sequence[Case], thresholds: Iterable[float]) -> list[Any]:
    """(threshold, accuracy) for each ``min_score``: ``search(query, k, min_score)``."""
    return [(t, evaluate(lambda q, k, t=t: search(q, k, t), cases)) for t in thresholds]


def latency(search: Callable[[str], Any], queries: Sequence[str]) -> tuple[float, float]:
    """p50 and p95 of one search, in ms, each query timed once."""
    times = []
    for query in queries:
        start = time.perf_counter()
        search(query)
        times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


# -- the run --------------------------------------------------------------------


def register_cost(tools: dict[str, dict[str, Any]], count: int) -> tuple[float, float]:
    """ns per ``register`` of a new tool into a registry of ``tools``, search off and on.

    "On" is a registry that has searched (its index is built), so each write marks
    its name for the index. The two registries take turns, a block each, so a busy
    moment of the machine hits both.
    """
    from toolreg import ToolRegistry

    registries = {}
    for mode in ("off", "on"):
        registry = ToolRegistry()
        for name, schema in tools.items():
            registry.register(name, "bfcl", schema, _handler, description=schema["description"])
        if mode == "on":
            registry.search("warm the index")
        registries[mode] = registry
    schema = {"description": "A new tool.", "parameters": {"type": "object"}}
    spent: dict[str, list[float]] = {"off": [], "on": []}
    block = 200
    gc.collect()
    gc.disable()  # a collection would land in one block and not the other
    try:
        for start in range(0, count, block):
            for mode, registry in registries.items():
                names = [f"new_{mode}_{i}" for i in range(start, start + block)]
                began = time.perf_counter_ns()
                for name in names:
                    registry.register(name, "new", schema, _handler)
                spent[mode].append((time.perf_counter_ns() - began) / block)
    finally:
        gc.enable()
    return statistics.median(spent["off"]), statistics.median(spent["on"])


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def sweep(tools: dict[str, dict[str, Any]], cases: Sequence[Case]) -> None:
    """recall on simple_python (where the weights were chosen) and on all, per weighting."""
    from toolreg._search import index

    tuning = [c for c in cases if c.category == "simple_python"]
    heads = f"{'simple r1':>10}{'simple r5':>10}{'all r1':>8}{'all r5':>8}"
    print(f"{'name desc params toolset':<26}{heads}")
    chosen = index.DEFAULT_WEIGHTS
    grid = [(1, 1, 0.5), (3, 1, 0.5), (3, 1, 1), (3, 2, 0.5), (3, 2, 1), (2, 2, 1), (5, 1, 0.5)]
    try:
        for name, description, params in grid:
            index.DEFAULT_WEIGHTS = chosen._replace(
                name=name, description=description, params=params
            )
            search = toolreg_searcher(tools)
            a, b = evaluate(search, tuning), evaluate(search, cases)
            label = f"{name:g} {description:g} {params:g} {chosen.toolset:g}"
            print(
                f"{label:<26}{a.recall1:>10.3f}{a.recall5:>10.3f}{b.recall1:>8.3f}{b.recall5:>8.3f}"
            )
    finally:
        index.DEFAULT_WEIGHTS = chosen


def missing() -> str | None:
    """What to install, when the data or the rival is missing."""
    try:
        import bfcl_eval  # noqa: F401
        import toolregistry  # noqa: F401
    except ImportError as exc:
        return (
            f"skipped: {exc.name} is not installed; pip install --no-deps bfcl-eval and "
            "pip install toolregistry==0.19.0 (into the benchmark's venv, not toolreg's deps)"
        )
    return None


def main(argv: list[str] | None = None) -> int:
    args, size = parse_run(
        __doc__.splitlines()[0],
        argv,
        (FULL, QUICK),
        lambda p: p.add_argument("--sweep", action="store_true", help="also try other weights"),
    )
    lacking = missing()
    if lacking:
        print(lacking)
        return 0
    from toolreg._search.index import DEFAULT_MIN_SCORE
    from toolreg._search.text import _stems as stems

    started = time.perf_counter()
    tools, all_cases = load_bfcl()
    # --quick: every n-th question, so that each category is still asked.
    step = max(1, len(all_cases) // (5 * size.queries)) if size.queries else 1
    cases = all_cases[::step]
    relevant = sum(bool(c.expected) for c in cases)
    print(f"catalog: {len(tools)} tools; {len(cases)} queries ({relevant} with answers)")

    ours = toolreg_searcher(tools)
    rows: list[tuple[str, str, str, str]] = []
    mine = evaluate(lambda q, k: ours(q, k, None), cases)  # the default threshold
    theirs = evaluate(discovery_searcher(tools), cases)
    plain = evaluate(bm25_searcher(tools), cases)
    print()
    print(f"{'searcher':<34}{'recall@1':>9}{'recall@5':>9}{'MRR':>7}{'empty':>7}")
    for label, acc in (
        (f"toolreg search (min_score {DEFAULT_MIN_SCORE:g})", mine),
        ("toolregistry ToolDiscoveryTool", theirs),
        ("plain BM25, name + description", plain),
    ):
        print(f"{label:<34}{acc.recall1:>9.3f}{acc.recall5:>9.3f}{acc.mrr:>7.3f}{acc.empty:>7.3f}")

    print("\ncurve: min_score, recall@5, irrelevance empty-rate")
    points = curve(ours, cases, CURVE_POINTS)
    for threshold, acc in points:
        mark = "  <- default" if threshold == DEFAULT_MIN_SCORE else ""
        print(f"  {threshold:>5.2f}  {acc.recall5:.3f}  {acc.empty:.3f}{mark}")
    best_empty = max((acc.empty for _, acc in points if acc.recall5 >= 0.90), default=0.0)

    queries = [c.query for c in all_cases][: size.latency_queries]
    small = dict(list(tools.items())[:1000])
    big = {**tools, **synthetic_tools(10_000 - len(tools))}
    lat = {}
    for label, catalog in (("1,000", small), ("10,000", big)):
        search = toolreg_searcher(catalog)
        search("warm the index", 5)  # the first search builds the index
        # Each word is stemmed once per process; start from none, as a new process would.
        stems.clear()
        lat[label] = latency(lambda q, s=search: s(q, 5, None), queries)
    off, on = register_cost(big, 2_000 if not args.quick else 400)

    def row(what: str, measured: str, target: str, ok: bool) -> None:
        rows.append((what, measured, target, verdict(ok)))

    row("recall@5", f"{mine.recall5:.3f}", ">= 0.90", mine.recall5 >= 0.90)
    row("recall@1", f"{mine.recall1:.3f}", ">= 0.70", mine.recall1 >= 0.70)
    for label, acc in (("ToolDiscoveryTool", theirs), ("plain BM25", plain)):
        row(
            f"recall@5 vs {label}",
            f"{100 * (mine.recall5 - acc.recall5):+.1f} pts",
            ">= +5 pts",
            mine.recall5 - acc.recall5 >= 0.05,
        )
        row(
            f"recall@1 vs {label}",
            f"{100 * (mine.recall1 - acc.recall1):+.1f} pts",
            ">= +5 pts",
            mine.recall1 - acc.recall1 >= 0.05,
        )
    row(
        "irrelevance empty, default",
        f"{mine.empty:.3f}",
        ">= 0.40 with recall@5 >= 0.90",
        mine.empty >= 0.40 and mine.recall5 >= 0.90,
    )
    row(
        "irrelevance empty, best on curve",
        f"{best_empty:.3f}",
        ">= 0.40 with recall@5 >= 0.90",
        best_empty >= 0.40,
    )
    for label, limit in (("1,000", 1.0), ("10,000", 10.0)):
        p50, p95 = lat[label]
        row(
            f"search p95, {label} tools",
            f"{p95:.2f} ms (p50 {p50:.2f})",
            f"<= {limit:g} ms",
            p95 <= limit,
        )
    row(
        "register, search on / off (10,000)",
        f"{on / off:.2f}x ({on:.0f}/{off:.0f} ns)",
        "<= 1.5x",
        on <= 1.5 * off,
    )

    width = [max(len(r[i]) for r in rows) for i in range(4)]
    print()
    print(
        "  ".join(
            h.ljust(w)
            for h, w in zip(("what", "measured", "target", "verdict"), width, strict=True)
        )
    )
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, width, strict=True)))
    elapsed = time.perf_counter() - started
    print(f"\n{sys.implementation.name} {sys.version.split()[0]}, {elapsed:.1f} s")
    if args.sweep:
        print()
        sweep(tools, all_cases)
    if args.json:
        payload = {
            "rows": [
                dict(zip(("what", "measured", "target", "verdict"), r, strict=True)) for r in rows
            ]
        }
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


CURVE_POINTS = (0.0, 0.4, 0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9, 1.0, 1.2, 1.5)


if __name__ == "__main__":
    sys.exit(main())
