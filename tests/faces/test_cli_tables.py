"""Tables fit the terminal: long free text is cut with an ellipsis, names and JSON never."""

from __future__ import annotations

import json

import pytest

from pack_cli import run
from toolreg.cli._render import table

LONG_ENV = "TOOLREG_CLI_TEST_" + "VERY_LONG_UNSET_VARIABLE_" * 4


@pytest.fixture
def long_reason_tool(host_tool):
    host_tool("cli_long_reason", lambda args: "ok", requires_env=[LONG_ENV])


def test_list_table_fits_columns_and_cuts_the_reason(capsys, monkeypatch, long_reason_tool):
    monkeypatch.setenv("COLUMNS", "60")
    code, out, _ = run(capsys, "list")
    assert code == 0
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 60
    row = next(line for line in lines if line.startswith("cli_long_reason "))
    assert row.endswith("\u2026") and LONG_ENV not in row
    assert row.split()[1:3] == ["cli-test", "no"]


def test_list_json_is_never_cut(capsys, monkeypatch, long_reason_tool):
    monkeypatch.setenv("COLUMNS", "40")
    code, out, _ = run(capsys, "list", "--json")
    assert code == 0
    tool = next(t for t in json.loads(out) if t["name"] == "cli_long_reason")
    assert LONG_ENV in tool["reason"]


def test_a_pipe_gets_the_whole_table(capsys, monkeypatch, long_reason_tool):
    monkeypatch.delenv("COLUMNS", raising=False)  # capsys's stdout is not a terminal
    code, out, _ = run(capsys, "list")
    assert code == 0
    assert LONG_ENV in out and "\u2026" not in out


def test_doctor_table_fits_too(capsys, monkeypatch, long_reason_tool):
    monkeypatch.setenv("COLUMNS", "50")
    code, out, _ = run(capsys, "doctor")
    assert code == 0
    section = out[out.index("Unavailable tools") :].split("\n\n")[0].splitlines()[1:]
    assert section and max(len(line) for line in section) <= 50
    assert any(line.endswith("\u2026") for line in section)


def test_names_are_never_cut_and_the_widest_free_column_gives_first():
    rows = [("a_tool_with_a_long_name", "x" * 30, "y" * 10)]
    text = table(("NAME", "TOOLS", "REASON"), rows, width=40, cut={"TOOLS", "REASON"})
    _, row = text.splitlines()
    # The 30-character column gives up characters down to its floor (12); the name and
    # the short column keep all theirs, so this line stays wider than asked.
    assert row == "a_tool_with_a_long_name  " + "x" * 11 + "\u2026  " + "y" * 10


def test_a_table_that_fits_is_untouched():
    rows = [("n", "short")]
    assert table(("NAME", "REASON"), rows, width=80, cut={"REASON"}) == table(
        ("NAME", "REASON"), rows
    )
