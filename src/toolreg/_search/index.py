"""A BM25F index of the table's tools, kept up to date name by name.

Each tool is one document of four fields (:mod:`.document`). A term's weight in
a document is BM25F's: its count in each field, scaled by the field's length
against that field's average, weighed by the field's weight and summed, then
saturated (``tf / (k1 + tf)``). That saturated weight is stored with the
posting, so a search is one dict walk per query term; the averages it used are
refreshed in one pass whenever they have drifted by a quarter.

Writes only mark names (:meth:`SearchIndex.forget`); the next search
re-reads those names from the table before it scores. A registry that never
searches has no index at all (the registry makes one on its first search).
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Iterable
from typing import NamedTuple

from .._contract.entry import ToolEntry, ToolOptions
from .document import Fields, fields_of
from .hit import SearchHit
from .text import terms

#: Characters of a query that are read: a whole question fits many times over.
MAX_QUERY_CHARS = 2_000
#: Distinct terms of a query that are scored.
MAX_QUERY_TERMS = 64


class Weights(NamedTuple):
    """How much each field counts, and BM25's k1 and b (see docs/search.md)."""

    name: float = 3.0
    description: float = 2.0
    params: float = 1.0
    toolset: float = 0.5
    k1: float = 1.2
    b: float = 0.75


DEFAULT_WEIGHTS = Weights()
#: A search whose best hit scores below this finds nothing (docs/search.md: the curve).
DEFAULT_MIN_SCORE = 0.7
#: Once the best hit reaches the threshold, hits down to this share of it come too.
RUNNER_UP_SHARE = 0.5
#: The default threshold per word the index knows, when that is lower: a one-word query's.
SHORT_QUERY_BAR = 0.5
#: Below this many tools, idf is computed as if there were this many (see ``_score``).
SMALL_CATALOG = 1_000
#: Added to a tool whose exact name the query holds: naming a tool finds it first.
EXACT_NAME_BOOST = 5.0

#: A tool's entry and options as the table holds them now; None when it has none.
Lookup = Callable[[str], "tuple[ToolEntry, ToolOptions] | None"]

# A token that could be a tool's name as written in a query (get_weather, mcp__a__b).
_NAME_LIKE = re.compile(r"[\w.\-]+")


class _Doc(NamedTuple):
    toolset: str
    #: Per field, term -> count.
    counts: tuple[dict[str, int], ...]
    lengths: tuple[int, ...]


class SearchIndex:
    """Ranked search over a table's tools; ``forget`` marks names, ``search`` catches up."""

    def __init__(self, lookup: Lookup, weights: Weights | None = None) -> None:
        self._lookup = lookup
        # Read when made, so benchmarks/bench_search.py --sweep can try others.
        weights = DEFAULT_WEIGHTS if weights is None else weights
        self._weights = weights
        self._field_weights = (weights.name, weights.description, weights.params, weights.toolset)
        self._docs: dict[str, _Doc] = {}
        #: term -> {name: saturated BM25F weight}.
        self._postings: dict[str, dict[str, float]] = {}
        #: lower-case name -> names, for the exact-name boost.
        self._by_name: dict[str, set[str]] = {}
        self._totals = [0, 0, 0, 0]
        #: The average field lengths the stored weights were computed with.
        self._averages: tuple[float, ...] = (1.0, 1.0, 1.0, 1.0)
        self._dirty: set[str] = set()
        self._dirty_lock = threading.Lock()  # held for a set operation, by writers too
        self._lock = threading.Lock()  # one search catches up and scores at a time

    def __len__(self) -> int:
        return len(self._docs)

    @property
    def term_count(self) -> int:
        """Distinct terms indexed (what the memory grows with)."""
        return len(self._postings)

    def forget(self, names: Iterable[str]) -> None:
        """Mark ``names`` as changed; the next search re-reads them. Cheap: writers call it."""
        with self._dirty_lock:
            self._dirty.update(names)

    # -- catching up ------------------------------------------------------------

    def _catch_up(self) -> None:
        with self._dirty_lock:
            if not self._dirty:
                return
            dirty, self._dirty = self._dirty, set()
        for name in dirty:
            self._remove(name)
            found = self._lookup(name)
            if found is not None and found[1].searchable:
                self._add(found[0])
        averages = self._current_averages()
        if any(_drifted(a, b) for a, b in zip(averages, self._averages, strict=True)):
            self._reweigh(averages)

    def _current_averages(self) -> tuple[float, ...]:
        count = len(self._docs) or 1
        return tuple(max(total / count, 1.0) for total in self._totals)

    def _add(self, entry: ToolEntry) -> None:
        fields = fields_of(entry)
        counts = tuple(_count(terms(text)) for text in _texts(fields))
        doc = _Doc(entry.toolset, counts, tuple(sum(c.values()) for c in counts))
        name = entry.name
        self._docs[name] = doc
        for i, length in enumerate(doc.lengths):
            self._totals[i] += length
        self._post(name, doc)
        self._by_name.setdefault(name.lower(), set()).add(name)

    def _post(self, name: str, doc: _Doc) -> None:
        for term, weight in self._weigh(doc).items():
            postings = self._postings.get(term)
            if postings is None:
                self._postings[term] = {name: weight}
            else:
                postings[name] = weight

    def _weigh(self, doc: _Doc) -> dict[str, float]:
        """Each term's saturated BM25F weight in ``doc``, with the stored averages."""
        b, k1 = self._weights.b, self._weights.k1
        combined: dict[str, float] = {}
        for counts, length, average, weight in zip(
            doc.counts, doc.lengths, self._averages, self._field_weights, strict=True
        ):
            if not counts or not weight:
                continue
            scale = weight / (1.0 - b + b * length / average)
            for term, count in counts.items():
                combined[term] = combined.get(term, 0.0) + count * scale
        return {term: tf / (k1 + tf) for term, tf in combined.items()}

    def _remove(self, name: str) -> None:
        doc = self._docs.pop(name, None)
        if doc is None:
            return
        for i, length in enumerate(doc.lengths):
            self._totals[i] -= length
        for term in {t for counts in doc.counts for t in counts}:
            postings = self._postings.get(term)
            if postings is not None:
                postings.pop(name, None)
                if not postings:
                    del self._postings[term]
        same = self._by_name.get(name.lower())
        if same is not None:
            same.discard(name)
            if not same:
                del self._by_name[name.lower()]

    def _reweigh(self, averages: tuple[float, ...]) -> None:
        # One pass over every document; rare, since it waits for a quarter's drift.
        self._averages = averages
        self._postings = {}
        for name, doc in self._docs.items():
            self._post(name, doc)

    # -- searching --------------------------------------------------------------

    def rank(
        self, query: str, min_score: float | None, toolsets: frozenset[str] | None
    ) -> tuple[list[tuple[float, str, str]], float]:
        """``(score, name, toolset)`` of every tool scoring at least half the bar, best first,
        and the bar: ``min_score``, or by default a short query's (see ``search``)."""
        query = query[:MAX_QUERY_CHARS]
        with self._lock:
            self._catch_up()
            scores, known = self._score(query)
            if min_score is None:
                bar = min(DEFAULT_MIN_SCORE, SHORT_QUERY_BAR * known)
            else:
                bar = min_score
            floor = bar * RUNNER_UP_SHARE
            docs = self._docs
            found = [
                (score, name, docs[name].toolset)
                for name, score in scores.items()
                if score >= floor and (toolsets is None or docs[name].toolset in toolsets)
            ]
        found.sort(key=lambda hit: (-hit[0], hit[1]))
        return found, bar

    def _score(self, query: str) -> tuple[dict[str, float], int]:
        """Each matching tool's score, and how many of the query's terms the index knows."""
        # A small registry is scored as if it were a thousand tools: there, a word two
        # of its five tools share still says which tools fit, as it would among many.
        count = max(len(self._docs), SMALL_CATALOG)
        scores: dict[str, float] = {}
        known = 0
        # idf over the idf of a word only one tool has: a score then counts distinctive
        # words matched, and one threshold means the same in catalogs of any size.
        unique = math.log(1.0 + (count - 0.5) / 1.5)
        # Each distinct term once: a question that repeats a word asks once.
        for term in list(dict.fromkeys(terms(query)))[:MAX_QUERY_TERMS]:
            postings = self._postings.get(term)
            if postings is None:
                continue  # a word no tool has only says nothing: the others still count
            known += 1
            df = len(postings)
            idf = math.log(1.0 + (count - df + 0.5) / (df + 0.5)) / unique
            get = scores.get
            for name, weight in postings.items():
                scores[name] = get(name, 0.0) + idf * weight
        for word in _NAME_LIKE.findall(query):
            for name in self._by_name.get(word.lower(), ()):
                scores[name] = scores.get(name, 0.0) + EXACT_NAME_BOOST
        return scores, known

    def search(
        self,
        query: str,
        *,
        limit: int,
        min_score: float | None,
        toolsets: frozenset[str] | None,
        available: Callable[[str], bool] | None,
    ) -> list[SearchHit]:
        """The best ``limit`` hits, or none when the best scores below the bar.

        The bar is ``min_score``; by default (None) ``DEFAULT_MIN_SCORE``, lowered
        to ``SHORT_QUERY_BAR`` per known word for a one-word query, which can only
        match so well. Once
        the best reaches the bar, runners-up down to half of it come along: the
        question has an answer, and a near miss is worth offering.
        ``available`` (when given) is asked of candidates, best first.
        """
        hits: list[SearchHit] = []
        found, bar = self.rank(query, min_score, toolsets)
        # Availability is asked outside the lock (a probe may be slow), and only of
        # candidates, best first, until there are enough.
        for score, name, toolset in found:
            if available is None or available(name):
                if not hits and score < bar:
                    return []  # the best available tool does not answer the question
                hits.append(SearchHit(name, toolset, round(score, 4)))
                if len(hits) >= limit:
                    break
        return hits


def _texts(fields: Fields) -> tuple[str, str, str, str]:
    return (fields.name, fields.description, fields.params, fields.toolset)


def _count(words: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for word in words:
        counts[word] = counts.get(word, 0) + 1
    return counts


def _drifted(now: float, used: float) -> bool:
    return abs(now - used) > 0.25 * used
