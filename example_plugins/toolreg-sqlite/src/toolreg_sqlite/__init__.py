"""toolreg-sqlite: read-only SQL over SQLite database files in the workspace (toolset ``sqlite``).

Importing this module registers three tools with ``toolreg.registry``:
``sqlite_list_tables``, ``sqlite_describe_table`` and ``sqlite_query``. Each
call opens the database read-only, runs, and closes it again; nothing a query
says can change the file (see ``_db``).
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from typing import Any

from toolreg import registry, tool_error, tool_result

from ._db import QUERY_TIMEOUT, Scalar, connect_readonly, describe_table, list_tables, run_query
from ._workspace import WorkspaceError, resolve_database

__all__ = ["sqlite_describe_table", "sqlite_list_tables", "sqlite_query"]

TOOLSET = "sqlite"
DEFAULT_LIMIT = 200
MAX_LIMIT = 1000
#: Result strings longer than this are cut by the registry at dispatch.
MAX_RESULT_CHARS = 100_000

Handler = Callable[..., str]


class ArgError(ValueError):
    """An argument that is missing or of the wrong type."""


def _guarded(handler: Handler) -> Handler:
    """Turn bad arguments, workspace refusals and SQLite errors into tool_error JSON."""

    @functools.wraps(handler)
    def wrapper(args: dict[str, Any] | None = None, **kwargs: Any) -> str:
        if args is None:
            args = {}
        if not isinstance(args, dict):
            return tool_error(f"arguments must be a JSON object, got {type(args).__name__}")
        try:
            return handler(args, **kwargs)
        except (ArgError, WorkspaceError) as exc:
            return tool_error(str(exc))
        # sqlite3.Warning is not an sqlite3.Error; Python < 3.12 raises it for
        # "You can only execute one statement at a time." OverflowError: an
        # integer param too large for SQLite's 64 bits.
        except (sqlite3.Error, sqlite3.Warning, OverflowError) as exc:
            message = f"SQL error: {type(exc).__name__}: {exc}"
            if str(exc) in ("not authorized", "authorization denied"):
                # VACUUM attaches a scratch database internally, so it lands here too.
                message += (
                    " (ATTACH, DETACH and VACUUM are refused: a call reads only its own database)"
                )
            elif str(exc) == "interrupted":
                message += f" (the statement ran longer than {QUERY_TIMEOUT:g} s)"
            return tool_error(message)

    return wrapper


def _str_arg(args: dict[str, Any], name: str) -> str:
    value = args.get(name)
    if value is None:
        raise ArgError(f"missing required argument {name!r}")
    if not isinstance(value, str):
        raise ArgError(f"argument {name!r} must be a string, got {type(value).__name__}")
    return value


def _params_arg(args: dict[str, Any]) -> list[Scalar]:
    params = args.get("params")
    if params is None:
        return []
    if not isinstance(params, list):
        raise ArgError(f"argument 'params' must be an array, got {type(params).__name__}")
    for index, value in enumerate(params):
        if value is not None and not isinstance(value, (str, int, float)):
            raise ArgError(
                f"params[{index}] must be a string, number, boolean or null, "
                f"got {type(value).__name__}"
            )
    return params


def _limit_arg(args: dict[str, Any]) -> int:
    value = args.get("limit")
    if value is None:
        return DEFAULT_LIMIT
    # Models sometimes send numbers as strings; a bool is almost surely a mistake.
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ArgError(f"argument 'limit' must be an integer, got {value!r}")
    try:
        limit = int(value)
    except ValueError:
        raise ArgError(f"argument 'limit' must be an integer, got {value!r}") from None
    if not 1 <= limit <= MAX_LIMIT:
        raise ArgError(f"argument 'limit' must be between 1 and {MAX_LIMIT}, got {limit}")
    return limit


@_guarded
def sqlite_list_tables(args: dict[str, Any], **_: Any) -> str:
    """List the tables and views of a database."""
    path = resolve_database(_str_arg(args, "database"))
    with connect_readonly(path) as conn:
        return tool_result(tables=list_tables(conn))


@_guarded
def sqlite_describe_table(args: dict[str, Any], **_: Any) -> str:
    """Describe one table or view: columns, indexes, CREATE statement."""
    path = resolve_database(_str_arg(args, "database"))
    table = _str_arg(args, "table")
    with connect_readonly(path) as conn:
        description = describe_table(conn, table)
    if description is None:
        return tool_error(f"no such table or view: {table!r}")
    return tool_result(description)


@_guarded
def sqlite_query(args: dict[str, Any], **_: Any) -> str:
    """Run one read-only SQL statement and return its rows."""
    path = resolve_database(_str_arg(args, "database"))
    sql = _str_arg(args, "sql")
    if not sql.strip():
        raise ArgError("argument 'sql' must not be empty")
    params = _params_arg(args)
    limit = _limit_arg(args)
    with connect_readonly(path) as conn:
        return tool_result(run_query(conn, sql, params, limit))


_DATABASE = {
    "type": "string",
    "description": "Path of the SQLite file, relative to the workspace root.",
}


def _schema(
    name: str, description: str, properties: dict[str, Any], required: tuple[str, ...] = ()
) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "parameters": {
            "type": "object",
            "properties": {"database": _DATABASE, **properties},
            "required": ["database", *required],
            "additionalProperties": False,
        },
    }


# MCP's hints: all three only read, and only databases in the workspace.
_READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}

registry.register(
    name="sqlite_list_tables",
    toolset=TOOLSET,
    schema=_schema(
        "sqlite_list_tables",
        "List the tables and views in a SQLite database in the workspace. "
        'Returns JSON `{"tables": [{"name", "type"}]}`.',
        {},
    ),
    handler=sqlite_list_tables,
    description="List the tables and views of a SQLite database.",
    emoji="🗄️",
    annotations={"title": "List SQLite tables", **_READ_ONLY},
    # Its JSON result, described for MCP clients (toolreg serve sends it as structuredContent).
    output_schema={
        "type": "object",
        "properties": {
            "tables": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "type": {"type": "string"}},
                    "required": ["name", "type"],
                },
            }
        },
        "required": ["tables"],
    },
)

registry.register(
    name="sqlite_describe_table",
    toolset=TOOLSET,
    schema=_schema(
        "sqlite_describe_table",
        "Describe a table or view of a SQLite database in the workspace: its columns "
        "(name, type, notnull, default, primary_key), indexes and CREATE statement.",
        {"table": {"type": "string", "description": "Table or view name."}},
        required=("table",),
    ),
    handler=sqlite_describe_table,
    description="Describe a SQLite table: columns, indexes, CREATE statement.",
    emoji="🗄️",
    annotations={"title": "Describe SQLite table", **_READ_ONLY},
)

registry.register(
    name="sqlite_query",
    toolset=TOOLSET,
    schema=_schema(
        "sqlite_query",
        "Run one SQL statement against a SQLite database in the workspace, read-only: "
        "INSERT, UPDATE, DELETE, DDL and ATTACH fail. Returns JSON `{columns, rows, "
        "truncated}`; rows are arrays in column order, BLOBs are shown as a hex preview, "
        f"and truncated is true when more than `limit` rows matched. Statements running "
        f"longer than {QUERY_TIMEOUT:g} s are interrupted. Use ? placeholders and `params` "
        "for values.",
        {
            "sql": {"type": "string", "description": "One SQL statement, e.g. a SELECT."},
            "params": {
                "type": "array",
                "items": {"type": ["string", "number", "boolean", "null"]},
                "default": [],
                "description": "Values for the statement's ? placeholders, in order.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_LIMIT,
                "default": DEFAULT_LIMIT,
                "description": f"Most rows to return (max {MAX_LIMIT}).",
            },
        },
        required=("sql",),
    ),
    handler=sqlite_query,
    description="Run a read-only SQL query on a SQLite database in the workspace.",
    emoji="🗄️",
    max_result_size_chars=MAX_RESULT_CHARS,
    annotations={"title": "Query SQLite", **_READ_ONLY},
)
