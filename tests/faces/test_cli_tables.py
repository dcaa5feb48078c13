"""Tables and doctor fit the terminal: free text wraps between words; names, JSON never cut."""

from __future__ import annotations

import json

import pytest

from pack_cli import run
from toolreg.cli._render import doctor_report, table

LONG_ENV = "TOOLREG_CLI_TEST_" + "VERY_LONG_UNSET_VARIABLE_" * 4


@pytest.fixture
def long_reason_tool(host_tool):
    host_tool("cli_long_reason", lambda args: "ok", requires_env=[LONG_ENV])


@pytest.mark.parametrize("columns", [60, 80])
def test_list_table_fits_and_wraps_the_reason_between_words(
    capsys, monkeypatch, long_reason_tool, columns
):
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, _ = run(capsys, "list")
    assert code == 0
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= columns
    at = next(i for i, line in enumerate(lines) if line.startswith("cli_long_reason "))
    row = lines[at]
    assert row.split()[1:3] == ["cli-test", "no"]
    start = lines[0].index("REASON")
    reason = [row[start:]]
    reason += [line[start:] for line in lines[at + 1 :] if line[:start].strip() == ""]
    assert len(reason) > 1  # continued on the next lines, under REASON
    assert reason[0].split()[0] == "missing"  # the first word whole
    # Broken between words: a word longer than the column alone is cut, with an ellipsis.
    assert reason[-1].endswith("\u2026") and LONG_ENV not in out
    assert all(not part.endswith("\u2026") for part in reason[:-1])


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
    text = table(("NAME", "TOOLS", "REASON"), rows, width=50, cut={"TOOLS", "REASON"})
    _, row = text.splitlines()
    # The 30-character column gives up characters (down to its floor, 12) until the
    # line fits; the name and the short column keep all theirs.
    assert row == "a_tool_with_a_long_name  " + "x" * 12 + "\u2026  " + "y" * 10


def test_columns_that_cannot_fit_become_one_block_per_row():
    rows = [("a_tool_with_a_long_name", "x" * 30, "-", "missing " + "z" * 50)]
    headers = ("NAME", "TOOLS", "HOOKS", "REASON")
    text = table(headers, rows, width=40, cut={"TOOLS", "HOOKS", "REASON"})
    lines = text.splitlines()
    assert max(map(len, lines)) <= 40
    assert lines[0] == "a_tool_with_a_long_name"  # the name whole, on a line of its own
    assert lines[1] == "  tools: " + "x" * 30
    assert "  hooks:" not in text  # nothing to say
    assert lines[2] == "  reason: missing"  # broken between words, the first one whole
    assert lines[3].startswith("      zzz") and lines[3].endswith("\u2026")


def test_a_table_that_fits_is_untouched():
    rows = [("n", "short")]
    assert table(("NAME", "REASON"), rows, width=80, cut={"REASON"}) == table(
        ("NAME", "REASON"), rows
    )


def test_a_long_cell_wraps_at_word_boundaries():
    rows = [("n", "alpha beta gamma delta epsilon")]
    text = table(("NAME", "REASON"), rows, width=20, cut={"REASON"})
    assert text.splitlines() == [
        "NAME  REASON",
        "n     alpha beta",
        "      gamma delta",
        "      epsilon",
    ]


@pytest.mark.parametrize("columns", [60, 80])
def test_doctor_lines_wrap_between_words(columns):
    error = "ModuleNotFoundError: No module named 'a_missing_dependency' " * 3
    report = {
        "summary": {"tools": 1, "available": 1},
        "import_failures": [{"module": "builtin_tools.some_module", "error": error.strip()}],
        "unavailable": [],
        "rejected": [],
    }
    lines = doctor_report(report, columns).splitlines()
    section = lines[lines.index("Modules that failed to import (1):") + 1 :]
    assert max(len(line) for line in section) <= columns
    assert len(section) > 1 and all(line.startswith("      ") for line in section[1:])
    assert (
        " ".join(line.strip() for line in section) == f"builtin_tools.some_module: {error.strip()}"
    )
    assert doctor_report(report, None).count("\n") < len(lines) - 1  # a pipe: one line each


@pytest.mark.parametrize("columns", [60, 80])
def test_plugins_table_fits_and_keeps_a_refusals_first_word(pack_venv, columns):
    """The example packs' report: toolreg-sandbox is refused with a long reason."""
    from pack_cli import EXAMPLES

    done = pack_venv.run("plugins", TOOLREG_PLUGINS=EXAMPLES, COLUMNS=str(columns))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= columns, done.stdout
    # Long pack ids leave no room for the columns: one block per pack.
    at = lines.index("toolreg-sandbox")
    block = lines[at + 1 : next(i for i in range(at + 1, len(lines)) if lines[i][0] != " ")]
    assert "  status: refused" in block, done.stdout
    reason = next(line for line in block if line.startswith("  reason: "))
    assert reason.split()[1:3] == ["PermissionError:", "plugin"], done.stdout
    # Broken between words: the config key the operator needs comes out whole.
    assert "plugins.entries.toolreg-sandbox.allow_tool_override" in done.stdout
