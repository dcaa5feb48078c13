"""The BM25F index: ranking, the threshold, the exact-name boost, updates by name, bounds."""

from __future__ import annotations

from typing import Any

import pytest

from toolreg import ToolEntry, ToolOptions
from toolreg._contract.entry import DEFAULT_OPTIONS
from toolreg._search.index import MAX_QUERY_TERMS, SearchIndex

CATALOG = {
    "getWeather": ("Current weather conditions for a city.", {"city": "City name"}),
    "send_email": ("Send an email message to a recipient.", {"to": "Address", "subject": ""}),
    "read_file": ("Read a text file from the workspace.", {"path": "File path"}),
    "list_files": ("List the files in a folder of the workspace.", {"path": "Folder"}),
    "search_flights": ("Find flights between two airports.", {"origin": "", "destination": ""}),
    "convert_currency": ("Convert an amount from one currency to another.", {"amount": ""}),
    "translate_text": ("Translate text into another language.", {"target_language": ""}),
    "create_calendar_event": ("Create an event in the calendar.", {"start": "", "title": ""}),
}


def _entry(name: str, description: str, params: dict[str, str], toolset: str = "t") -> ToolEntry:
    properties = {p: {"type": "string", "description": d} for p, d in params.items()}
    schema = {"name": name, "parameters": {"type": "object", "properties": properties}}
    return ToolEntry(name, toolset, schema, lambda a: "", description=description)


class Table:
    """A stand-in for the registry's table: name -> (entry, options)."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple[ToolEntry, ToolOptions]] = {}
        self.looked_up: list[str] = []

    def put(self, entry: ToolEntry, options: ToolOptions = DEFAULT_OPTIONS) -> None:
        self.rows[entry.name] = (entry, options)

    def lookup(self, name: str) -> tuple[ToolEntry, ToolOptions] | None:
        self.looked_up.append(name)
        return self.rows.get(name)


@pytest.fixture
def table() -> Table:
    table = Table()
    for name, (description, params) in CATALOG.items():
        table.put(_entry(name, description, params))
    return table


@pytest.fixture
def index(table: Table) -> SearchIndex:
    index = SearchIndex(table.lookup)
    index.forget(table.rows)
    return index


def names(index: SearchIndex, query: str, **options: Any) -> list[str]:
    options = {"limit": 5, "min_score": None, "toolsets": None, "available": None}
    return [hit.name for hit in index.search(query, **options)]


@pytest.mark.parametrize(
    ("question", "tool"),
    [
        ("What's the weather like in Paris today?", "getWeather"),
        ("Please email my landlord that the heating is broken", "send_email"),
        ("Show me which files are in the docs folder", "list_files"),
        ("I need flights from Boston to Denver next week", "search_flights"),
        ("How much is 100 dollars in euros? Convert it", "convert_currency"),
        ("Can you translate this sentence into German?", "translate_text"),
        ("Put a meeting on my calendar for Monday", "create_calendar_event"),
    ],
)
def test_a_natural_question_finds_the_right_tool_first(index, question, tool):
    assert names(index, question)[0] == tool


def test_get_weather_and_getweather_are_the_same_words(table):
    table.put(_entry("get_weather_forecast", "Forecast for the days ahead.", {}))
    index = SearchIndex(table.lookup)
    index.forget(table.rows)
    assert set(names(index, "get weather")[:2]) == {"getWeather", "get_weather_forecast"}


def test_stemming_matches_other_forms_of_a_word(index):
    assert names(index, "translating")[0] == "translate_text"
    assert names(index, "converted currencies")[0] == "convert_currency"


def test_a_tools_exact_name_puts_it_first(index):
    # "files" alone favours list_files; naming read_file wins over that.
    assert names(index, "files read_file")[0] == "read_file"
    assert names(index, "READ_FILE")[0] == "read_file"


def test_a_question_no_tool_answers_finds_nothing(index):
    assert names(index, "How do I bake sourdough bread?") == []
    assert names(index, "") == []
    assert names(index, "the of and please") == []


def test_one_unknown_word_does_not_drop_the_query(index):
    assert names(index, "weather zxqvw") == ["getWeather"]


def test_changes_are_read_at_the_next_search_not_at_the_write(table, index):
    names(index, "weather")
    table.looked_up.clear()
    table.put(_entry("getWeather", "Tide tables for a harbour.", {}))
    table.put(_entry("new_tool", "Weather radar images.", {}))
    index.forget(["getWeather", "new_tool"])
    assert table.looked_up == []  # forgetting reads nothing
    assert names(index, "current conditions in a city") == []  # the old description is gone
    assert names(index, "tide harbour") == ["getWeather"]
    assert names(index, "radar")[0] == "new_tool"
    assert sorted(table.looked_up) == ["getWeather", "new_tool"]  # only the changed names
    del table.rows["new_tool"]
    index.forget(["new_tool"])
    assert names(index, "radar images") == []
    assert "new_tool" not in index._docs


def test_an_unsearchable_tool_is_not_indexed(table, index):
    table.put(table.rows["read_file"][0], ToolOptions(searchable=False))
    index.forget(["read_file"])
    assert "read_file" not in names(index, "read a text file")


def test_toolsets_and_availability_filter_the_hits(table):
    table.put(_entry("weather_alerts", "Weather alerts for a region.", {}, toolset="alerts"))
    index = SearchIndex(table.lookup)
    index.forget(table.rows)
    assert set(names(index, "weather")) == {"getWeather", "weather_alerts"}
    options = {"limit": 5, "min_score": 0.0, "toolsets": frozenset({"alerts"}), "available": None}
    assert [h.name for h in index.search("weather", **options)] == ["weather_alerts"]
    asked: list[str] = []

    def available(name: str) -> bool:
        asked.append(name)
        return name != "getWeather"

    options = {"limit": 1, "min_score": 0.0, "toolsets": None, "available": available}
    assert [h.name for h in index.search("weather", **options)] == ["weather_alerts"]
    assert len(asked) <= 2  # only candidates, best first, until the limit is met


def test_limit_and_scores(index):
    hits = index.search(
        "file workspace folder", limit=1, min_score=0.0, toolsets=None, available=None
    )
    assert len(hits) == 1
    assert hits[0].toolset == "t" and hits[0].score > 0
    ranked, bar = index.rank("file workspace folder", 0.0, None)
    assert bar == 0.0
    assert [score for score, _, _ in ranked] == sorted((s for s, _, _ in ranked), reverse=True)


def test_averages_are_reweighed_once_they_drift(table, index):
    names(index, "weather")
    before = index._averages
    for i in range(40):
        table.put(_entry(f"long{i}", "word " * 300 + f"unique{i}", {}))
    index.forget(f"long{i}" for i in range(40))
    names(index, "weather")
    assert index._averages != before
    assert index._averages[1] > before[1]


def test_a_huge_query_is_read_to_a_bound(index, monkeypatch):
    from toolreg._search import index as module

    seen: list[int] = []
    real = module.terms

    def counting(text: str) -> list[str]:
        seen.append(len(text))
        return real(text)

    monkeypatch.setattr(module, "terms", counting)
    query = " ".join(f"word{i}x" for i in range(20_000))  # 100 KB and more
    assert len(query) > 100_000
    assert names(index, query) == []
    assert max(seen) <= module.MAX_QUERY_CHARS
    assert MAX_QUERY_TERMS <= 64


def test_a_huge_tool_indexes_a_bounded_number_of_terms():
    table = Table()
    description = " ".join(f"term{i}z" for i in range(1_000_000))  # many megabytes
    table.put(_entry("big", description, {}))
    index = SearchIndex(table.lookup)
    index.forget(["big"])
    names(index, "anything")
    assert len(description) > 5_000_000
    assert index.term_count < 500


def test_the_best_hit_must_reach_the_bar_and_runners_up_half_of_it(index):
    ranked, _ = index.rank("text file in the workspace folder", 0.0, None)
    scores = {name: score for score, name, _ in ranked}
    best = max(scores.values())
    options = {"limit": 10, "toolsets": None, "available": None}
    assert index.search("text file in the workspace folder", min_score=best + 0.01, **options) == []
    bar = best - 0.001
    hits = index.search("text file in the workspace folder", min_score=bar, **options)
    assert [h.name for h in hits] == [
        n for n, s in sorted(scores.items(), key=lambda kv: -kv[1]) if s >= bar / 2
    ]
    assert len(hits) > 1  # runners-up come along once the best answers


def test_a_one_word_query_has_a_lower_default_bar(index):
    ranked, bar = index.rank("recipient", None, None)
    assert bar == 0.5 and ranked  # one known word: half a point, not the default 0.7
    _, bar = index.rank("recipient message email address subject", None, None)
    assert bar == 0.7
