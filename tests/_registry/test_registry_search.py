"""ToolRegistry.search: what it finds as the table changes, what it hides, what it costs."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

import toolreg
from toolreg import SearchHit, ToolEntry, ToolRegistry


def _schema(name: str, description: str, **params: str) -> dict[str, Any]:
    properties = {p: {"type": "string", "description": d} for p, d in params.items()}
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": properties},
    }


def add(reg: ToolRegistry, name: str, description: str, toolset: str = "t", **kw: Any) -> None:
    reg.register(
        name, toolset, _schema(name, description), lambda a: "", description=description, **kw
    )


@pytest.fixture
def weather(reg: ToolRegistry) -> ToolRegistry:
    add(reg, "get_weather", "Current weather conditions for a city.")
    add(reg, "send_email", "Send an email message to a recipient.")
    add(reg, "read_file", "Read a text file from the workspace.")
    return reg


def found(reg: ToolRegistry, query: str, **kw: Any) -> list[str]:
    return [hit.name for hit in reg.search(query, **kw)]


def test_search_returns_read_only_hits_best_first(weather):
    hits = weather.search("What's the weather in Rome?")
    assert [h.name for h in hits] == ["get_weather"]
    hit = hits[0]
    assert isinstance(hit, SearchHit) and hit.toolset == "t" and hit.score > 0
    with pytest.raises(AttributeError):
        hit.score = 0.0  # type: ignore[misc]
    assert toolreg.SearchHit is SearchHit and "SearchHit" in toolreg.__all__


def test_a_question_nothing_answers_finds_nothing(weather):
    assert weather.search("How do I bake bread?") == []


def test_registrations_are_reflected(weather):
    assert found(weather, "translate a sentence") == []
    add(weather, "translate_text", "Translate text into another language.")
    assert found(weather, "translate a sentence") == ["translate_text"]


def test_deregistration_is_reflected(weather):
    assert found(weather, "email") == ["send_email"]
    assert weather.deregister("send_email")
    assert found(weather, "email") == []


def test_re_registering_with_a_new_description_is_reflected(weather):
    assert found(weather, "recipient") == ["send_email"]
    add(weather, "send_email", "Post a message to a chat channel.")
    assert found(weather, "recipient") == []
    assert found(weather, "chat channel") == ["send_email"]


def test_replace_toolset_is_reflected(weather):
    add(weather, "old_tide", "Tide tables for a harbour.", toolset="sea")
    assert found(weather, "tide") == ["old_tide"]
    schema = _schema("wave_height", "Wave height at a beach.")
    new = ToolEntry("wave_height", "sea", schema, lambda a: "", description="Wave height.")
    weather.replace_toolset("sea", [new])
    assert found(weather, "tide") == []
    assert found(weather, "wave height") == ["wave_height"]


def test_unavailable_tools_are_left_out_unless_asked(weather, monkeypatch):
    monkeypatch.delenv("TOOLREG_TEST_SEARCH_KEY", raising=False)
    add(weather, "weather_alerts", "Weather alerts.", requires_env=["TOOLREG_TEST_SEARCH_KEY"])
    add(weather, "weather_radar", "Weather radar.", check_fn=lambda: False)
    assert found(weather, "weather") == ["get_weather"]
    everything = found(weather, "weather", include_unavailable=True)
    assert set(everything) == {"get_weather", "weather_alerts", "weather_radar"}
    monkeypatch.setenv("TOOLREG_TEST_SEARCH_KEY", "1")
    assert set(found(weather, "weather")) == {"get_weather", "weather_alerts"}


def test_toolsets_filter_with_aliases(weather):
    add(weather, "weather_alerts", "Weather alerts for a region.", toolset="mcp-alerts")
    weather.register_toolset_alias("alerts", "mcp-alerts")
    assert set(found(weather, "weather")) == {"get_weather", "weather_alerts"}
    assert found(weather, "weather", toolsets=["alerts"]) == ["weather_alerts"]
    assert found(weather, "weather", toolsets="t") == ["get_weather"]
    assert found(weather, "weather", toolsets=[]) == []


def test_searchable_false_hides_a_tool_from_search_only(weather):
    add(weather, "secret_weather", "Weather for admins.", searchable=False)
    assert "secret_weather" not in found(weather, "weather admins")
    assert weather.get_options("secret_weather").searchable is False
    assert weather.get_definitions(["secret_weather"])  # still offered, still callable
    add(weather, "secret_weather", "Weather for admins.")  # registered again, searchable
    assert found(weather, "weather admins")[0] == "secret_weather"


def test_the_decorator_takes_searchable(reg):
    @reg.tool(searchable=False)
    def hidden_forecast(city: str) -> str:
        """The forecast for a city."""
        return city

    @reg.tool
    def open_forecast(city: str) -> str:
        """The forecast for a city."""
        return city

    assert found(reg, "forecast city") == ["open_forecast"]


def test_limit_and_min_score(weather):
    add(weather, "weather_alerts", "Weather alerts for a region.")
    assert len(weather.search("weather", limit=1)) == 1
    assert weather.search("weather", min_score=1e9) == []
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="limit"):
            weather.search("weather", limit=bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        weather.search(None)  # type: ignore[arg-type]


def test_a_registry_that_never_searches_builds_no_index(reg):
    for i in range(50):
        add(reg, f"tool_{i}", "Something.")
    assert reg._search.made is None
    reg.search("something")
    assert reg._search.made is not None


def test_a_write_after_the_first_search_only_marks_its_name(weather):
    weather.search("weather")
    index = weather._search.made
    assert index is not None and len(index) == 3
    for i in range(100):
        add(weather, f"extra_{i}", "Extra.")
    assert len(index) == 3 and len(index._dirty) == 100  # nothing re-read yet
    weather.search("extra")
    assert len(index) == 103 and not index._dirty


def test_registering_and_importing_toolreg_load_no_search_code():
    code = (
        "import sys, toolreg\n"
        "r = toolreg.ToolRegistry()\n"
        "r.register('t', 's', {'name': 't', 'parameters': {'type': 'object'}}, lambda a: '')\n"
        "r.get_definitions()\n"
        "print(sorted(m for m in sys.modules if m.startswith(('toolreg._search', 'snowball'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_hostile_sizes_stay_bounded(reg):
    add(reg, "huge", " ".join(f"w{i}x" for i in range(800_000)))  # a 5 MB description
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"]
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    node = schema
    for word in words:  # nested deeper than the index reads
        child: dict[str, Any] = {"type": "object", "description": word, "properties": {}}
        node["properties"][f"p_{word}"] = child
        node = child
    reg.register("nested", "t", {"name": "nested", "parameters": schema}, lambda a: "")
    assert len(reg.get_entry("huge").description) > 5_000_000
    assert reg.search("bravo " + "z" * 100_000, min_score=0)[0].name == "nested"
    assert reg.search("india", min_score=0) == []
    index = reg._search.made
    assert index is not None and index.term_count < 1_000
    assert "alpha" in index._postings and "india" not in index._postings


def test_searches_and_writes_from_many_threads(reg):
    import threading

    for i in range(50):
        add(reg, f"steady_{i}", f"Steady tool number {i} for harbour tides.")
    failures: list[BaseException] = []
    stop = threading.Event()

    def write() -> None:
        try:
            i = 0
            while not stop.is_set():
                add(reg, f"churn_{i % 20}", "Churning harbour tool.")
                reg.deregister(f"churn_{(i + 10) % 20}")
                i += 1
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    def read() -> None:
        try:
            for _ in range(200):
                hits = reg.search("harbour tides", limit=50, min_score=0)
                assert sum(h.name.startswith("steady_") for h in hits) == 50
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    writers = [threading.Thread(target=write) for _ in range(2)]
    readers = [threading.Thread(target=read) for _ in range(3)]
    for t in writers + readers:
        t.start()
    for t in readers:
        t.join()
    stop.set()
    for t in writers:
        t.join()
    assert not failures, failures
    # Once the writes stop, the index agrees with the table exactly.
    churn = {n for n in reg.get_all_tool_names() if n.startswith("churn_")}
    found = {
        h.name
        for h in reg.search("churning harbour", limit=100, min_score=0)
        if h.name.startswith("churn_")
    }
    assert found == churn
