"""``toolreg search``: a question in, the best tools out, as a table that fits or as JSON."""

from __future__ import annotations

import json

import pytest

from pack_cli import assert_one_line_error, run

LONG = "Sunny forecasts for the seaside towns of the northern coast " * 6


@pytest.fixture
def tools(host_tool):
    host_tool("cli_tide_table", lambda a: "ok", description="Tide tables for a harbour. " + LONG)
    host_tool("cli_wave_height", lambda a: "ok", description="Wave height at a harbour beach.")
    host_tool(
        "cli_hidden_tide",
        lambda a: "ok",
        description="Tide tables, hidden.",
        requires_env=["TOOLREG_CLI_SEARCH_UNSET"],
    )


def test_search_prints_the_best_tools_first(capsys, tools, monkeypatch):
    monkeypatch.delenv("TOOLREG_CLI_SEARCH_UNSET", raising=False)
    code, out, _ = run(capsys, "search", "When", "is", "high", "tide", "in", "the", "harbour?")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "TOOLSET", "SCORE", "DESCRIPTION"]
    assert lines[1].split()[:2] == ["cli_tide_table", "cli-test"]
    assert "cli_hidden_tide" not in out  # unavailable
    code, out, _ = run(capsys, "search", "high tide in the harbour", "--all")
    assert "cli_hidden_tide" in out


@pytest.mark.parametrize("columns", [60, 80])
def test_the_table_fits_the_terminal(capsys, tools, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, _ = run(capsys, "search", "tide harbour")
    assert code == 0
    assert max(len(line) for line in out.splitlines()) <= columns
    assert "cli_tide_table" in out  # names are never cut


def test_json_limit_and_toolset(capsys, tools):
    code, out, _ = run(capsys, "search", "harbour", "--json", "--limit", "1")
    assert code == 0
    hits = json.loads(out)
    assert len(hits) == 1
    assert set(hits[0]) == {"name", "toolset", "score", "available", "description"}
    assert hits[0]["available"] is True and hits[0]["score"] > 0
    code, out, _ = run(capsys, "search", "harbour", "--json", "--toolset", "nope")
    assert json.loads(out) == []


def test_nothing_fitting_is_said_and_is_no_error(capsys, tools):
    code, out, _ = run(capsys, "search", "bake sourdough bread")
    assert code == 0 and out.strip() == "no tool fits 'bake sourdough bread'"
    code, out, _ = run(capsys, "search", "bake sourdough bread", "--json")
    assert code == 0 and json.loads(out) == []


def test_a_limit_below_one_is_a_usage_error(capsys, tools):
    code, _, err = run(capsys, "search", "tide", "--limit", "0")
    assert code == 2
    assert_one_line_error(err, "--limit")
