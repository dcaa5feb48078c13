"""toolreg-sqlite: the handlers called directly, then the pack loaded by the real loader."""

from __future__ import annotations

import hashlib
import importlib
import json
import sqlite3
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import toolreg
from toolreg import ToolRegistry, unload_plugin
from toolreg.testing import (
    assert_dispatches,
    assert_no_override_without_consent,
    assert_valid_schema,
)

PACK = "toolreg_sqlite"
PLUGIN_ID = "toolreg-sqlite"
TOOLS = ["sqlite_describe_table", "sqlite_list_tables", "sqlite_query"]


def import_isolated(name: str) -> ModuleType:
    """Import a pack with ``toolreg.registry`` swapped for a scratch one, as the loader does."""
    previous, toolreg.registry = toolreg.registry, ToolRegistry()
    try:
        return importlib.import_module(name)
    finally:
        toolreg.registry = previous


# The pack registers at import; this keeps its tools out of the process-wide registry.
sqlite_pack = import_isolated(PACK)
sqlite_list_tables = sqlite_pack.sqlite_list_tables
sqlite_describe_table = sqlite_pack.sqlite_describe_table
sqlite_query = sqlite_pack.sqlite_query
connect_readonly = sqlite_pack._db.connect_readonly
readonly_uri = sqlite_pack._db.readonly_uri
resolve_database = sqlite_pack._workspace.resolve_database


def make_db(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL, data BLOB);
        CREATE UNIQUE INDEX items_name ON items (name);
        CREATE VIEW cheap AS SELECT name FROM items WHERE price < 2;
        INSERT INTO items (name, price, data) VALUES
            ('apple', 1.5, x'00ff'), ('pear', 2.5, NULL), ('plum', 0.5, NULL);
        """
    )
    conn.close()
    return path


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    monkeypatch.setenv("TOOLREG_WORKSPACE", str(root))
    make_db(root / "shop.db")
    return root.resolve()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def ok(result: str) -> Any:
    data = json.loads(result)
    assert "error" not in data, data
    return data


def error(result: str) -> str:
    data = json.loads(result)
    assert set(data) == {"error"}, data
    return data["error"]


def query(sql: str, **extra: Any) -> str:
    return sqlite_query({"database": "shop.db", "sql": sql, **extra})


# -- reading ---------------------------------------------------------------------------


def test_list_tables(workspace: Path) -> None:
    assert ok(sqlite_list_tables({"database": "shop.db"})) == {
        "tables": [{"name": "cheap", "type": "view"}, {"name": "items", "type": "table"}]
    }


def test_describe_table(workspace: Path) -> None:
    data = ok(sqlite_describe_table({"database": "shop.db", "table": "ITEMS"}))
    assert data["name"] == "items" and data["type"] == "table"
    assert [c["name"] for c in data["columns"]] == ["id", "name", "price", "data"]
    assert data["columns"][0]["primary_key"] == 1
    assert data["columns"][1] == {
        "name": "name",
        "type": "TEXT",
        "notnull": True,
        "default": None,
        "primary_key": 0,
    }
    assert data["indexes"] == [{"name": "items_name", "unique": True, "columns": ["name"]}]
    assert data["sql"].startswith("CREATE TABLE items")
    assert "no such table" in error(sqlite_describe_table({"database": "shop.db", "table": "x"}))


def test_query_with_params_and_blob(workspace: Path) -> None:
    data = ok(query("SELECT name, price, data FROM items WHERE price < ? ORDER BY id", params=[2]))
    assert data == {
        "columns": ["name", "price", "data"],
        "rows": [["apple", 1.5, "<blob 2 bytes: 00ff>"], ["plum", 0.5, None]],
        "truncated": False,
    }


def test_limit_truncates(workspace: Path) -> None:
    data = ok(query("SELECT id FROM items ORDER BY id", limit=2))
    assert data["rows"] == [[1], [2]] and data["truncated"] is True
    assert ok(query("SELECT id FROM items", limit=3))["truncated"] is False


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"sql": "SELECT 1", "limit": 0}, "between 1 and"),
        ({"sql": "SELECT 1", "limit": True}, "must be an integer"),
        ({"sql": "SELECT ?", "params": "x"}, "must be an array"),
        ({"sql": "SELECT ?", "params": [{"a": 1}]}, "params[0]"),
        ({"sql": "SELECT ?", "params": [2**64]}, "OverflowError"),
        ({"sql": "   "}, "must not be empty"),
        ({}, "missing required argument 'sql'"),
    ],
)
def test_bad_arguments(workspace: Path, args: dict[str, Any], message: str) -> None:
    assert message in error(sqlite_query({"database": "shop.db", **args}))


def test_sql_errors_are_named(workspace: Path) -> None:
    assert error(query("SELECT nope FROM items")) == (
        "SQL error: OperationalError: no such column: nope"
    )
    assert "one statement at a time" in error(query("SELECT 1; SELECT 2"))


def test_not_a_database(workspace: Path) -> None:
    (workspace / "notes.txt").write_text("hello " * 100)
    result = sqlite_query({"database": "notes.txt", "sql": "SELECT 1 FROM sqlite_master"})
    assert "file is not a database" in error(result)


# -- writes are refused by SQLite, and the file does not change --------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO items (name) VALUES ('fig')",
        "UPDATE items SET price = 0",
        "DELETE FROM items",
        "DROP TABLE items",
        "CREATE TABLE t (x)",
        "PRAGMA user_version = 7",
        "PRAGMA journal_mode = WAL",
    ],
)
def test_writes_fail(workspace: Path, sql: str) -> None:
    before = digest(workspace / "shop.db")
    assert "attempt to write a readonly database" in error(query(sql))
    assert digest(workspace / "shop.db") == before
    assert ok(query("SELECT count(*) FROM items"))["rows"] == [[3]]


def test_attach_and_vacuum_into_are_refused(workspace: Path) -> None:
    before = digest(workspace / "shop.db")
    assert "not authorized" in error(query("ATTACH DATABASE 'other.db' AS other"))
    assert "ATTACH, DETACH and VACUUM are refused" in error(query("VACUUM INTO 'copy.db'"))
    assert not (workspace / "other.db").exists() and not (workspace / "copy.db").exists()
    assert digest(workspace / "shop.db") == before


def test_read_only_without_query_only(workspace: Path) -> None:
    # Switching the second lock off leaves the first: the file is open read-only.
    path = resolve_database("shop.db")
    with connect_readonly(path) as conn:
        conn.execute("PRAGMA query_only = OFF")
        with pytest.raises(sqlite3.OperationalError, match="readonly database"):
            conn.execute("INSERT INTO items (name) VALUES ('fig')")
    conn = sqlite3.connect(readonly_uri(path), uri=True)  # mode=ro alone
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly database"):
            conn.execute("DELETE FROM items")
    finally:
        conn.close()


def test_file_name_cannot_smuggle_uri_parameters(workspace: Path) -> None:
    # Unquoted, "?mode=rwc" in the name would become the URI's query string.
    weird = workspace / "we ird#1%20.db?mode=rwc"
    make_db(weird)
    before = digest(weird)
    result = sqlite_query({"database": weird.name, "sql": "DELETE FROM items"})
    assert "readonly database" in error(result)
    assert digest(weird) == before
    assert ok(sqlite_query({"database": weird.name, "sql": "SELECT count(*) FROM items"}))[
        "rows"
    ] == [[3]]


def test_runaway_query_is_interrupted(workspace: Path) -> None:
    endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c"
    with (
        connect_readonly(resolve_database("shop.db"), timeout=0.2) as conn,
        pytest.raises(sqlite3.OperationalError, match="interrupted"),
    ):
        conn.execute(endless).fetchall()


# -- the workspace fence -------------------------------------------------------------------


def test_missing_database_is_not_created(workspace: Path) -> None:
    message = error(sqlite_query({"database": "new.db", "sql": "SELECT 1"}))
    assert message == "path 'new.db' does not exist"
    assert not (workspace / "new.db").exists()


def test_paths_outside_the_workspace_are_refused(workspace: Path) -> None:
    outside = make_db(workspace.parent / "outside.db")
    (workspace / "link.db").symlink_to(outside)
    for path in ("../outside.db", str(outside), "link.db"):
        message = error(sqlite_list_tables({"database": path}))
        assert "outside the workspace root" in message, path


def test_subdirectory_and_directory(workspace: Path) -> None:
    (workspace / "data").mkdir()
    make_db(workspace / "data" / "more.db")
    assert ok(sqlite_list_tables({"database": "data/more.db"}))["tables"][1]["name"] == "items"
    assert "is a directory, not a file" in error(sqlite_list_tables({"database": "data"}))


# -- end to end: the real loader (toolreg's pytest plugin: tool_registry, load_pack) -------


def test_loaded_by_the_loader(workspace: Path, tool_registry: ToolRegistry, load_pack) -> None:
    outcome = load_pack(PLUGIN_ID)[PLUGIN_ID]
    assert (outcome.status, outcome.reason) == ("loaded", "")
    assert outcome.tools_added == TOOLS and outcome.tools_overridden == []
    assert tool_registry.get_tool_names_for_toolset("sqlite") == TOOLS
    assert all(tool_registry.get_owner(name) == PLUGIN_ID for name in TOOLS)
    assert sys.modules[PACK] is not sqlite_pack  # imported afresh by the loader
    for name in TOOLS:
        assert_valid_schema(tool_registry, name)

    count = {"database": "shop.db", "sql": "SELECT count(*) FROM items"}
    assert json.loads(assert_dispatches(tool_registry, "sqlite_query", count))["rows"] == [[3]]
    delete = {"database": "shop.db", "sql": "DELETE FROM items"}
    result = tool_registry.dispatch("sqlite_query", delete)
    assert "attempt to write a readonly database" in json.loads(result)["error"]

    assert unload_plugin(PLUGIN_ID, registry=tool_registry)
    assert tool_registry.get_tool_names_for_toolset("sqlite") == []


def test_disabled_by_the_operator(tool_registry: ToolRegistry, load_pack) -> None:
    outcome = load_pack(PLUGIN_ID, config=f'[plugins]\ndisabled = ["{PLUGIN_ID}"]\n')[PLUGIN_ID]
    assert (outcome.status, outcome.reason) == ("disabled", "listed in plugins.disabled")
    assert tool_registry.get_all_tool_names() == []


def test_overrides_nothing_without_consent() -> None:
    assert assert_no_override_without_consent(PLUGIN_ID)[PLUGIN_ID].status == "loaded"
