"""Read-only SQLite access: connection setup, and the three queries behind the tools.

Writes are refused by SQLite itself, not by inspecting the SQL text: the file
is opened with ``mode=ro`` (the OS-level open is read-only, so no statement
can change it, and a missing file is never created) and ``PRAGMA query_only``
is switched on as a second lock. ATTACH is refused by an authorizer, because it
would let a query read database files outside the workspace.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

#: Seconds one call may run before SQLite is told to interrupt it.
QUERY_TIMEOUT = 10.0
#: Bytes of a BLOB shown (as hex) in results; the rest is summarised.
BLOB_PREVIEW_BYTES = 64

Scalar = str | int | float | bytes | None


def readonly_uri(path: Path) -> str:
    """The ``file:`` URI that opens ``path`` read-only.

    Percent-encoding matters: a literal ``?`` or ``#`` in a file name would
    otherwise start the query string and could smuggle in ``mode=rw``.
    """
    posix = path.as_posix()
    if not posix.startswith("/"):
        posix = "/" + posix  # Windows drive paths: file:/C:/...
    return f"file:{quote(posix)}?mode=ro"


def _authorize(action: int, *_: Any) -> int:
    # ATTACH takes an arbitrary filename (even a computed one), so it is the one
    # way a query could reach outside the workspace; refuse it outright. This also
    # stops VACUUM (it attaches a scratch database), and so VACUUM INTO 'file'.
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


@contextlib.contextmanager
def connect_readonly(path: Path, timeout: float = QUERY_TIMEOUT) -> Iterator[sqlite3.Connection]:
    """Open ``path`` read-only for one call, and always close it."""
    # isolation_level=None: no implicit BEGIN around statements; nothing to commit.
    conn = sqlite3.connect(readonly_uri(path), uri=True, isolation_level=None)
    try:
        conn.execute("PRAGMA query_only = ON")
        conn.set_authorizer(_authorize)
        deadline = time.monotonic() + timeout
        # A non-zero return interrupts the statement ("interrupted"), so a runaway
        # recursive CTE cannot hold the call forever.
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        yield conn
    finally:
        conn.close()


def _cell(value: Any) -> Any:
    if isinstance(value, bytes):
        preview = value[:BLOB_PREVIEW_BYTES].hex()
        more = "…" if len(value) > BLOB_PREVIEW_BYTES else ""
        return f"<blob {len(value)} bytes: {preview}{more}>"
    return value


def list_tables(conn: sqlite3.Connection) -> list[dict[str, str]]:
    """The user tables and views, sorted by name."""
    rows = conn.execute(
        "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') "
        "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
    ).fetchall()
    return [{"name": name, "type": kind} for name, kind in rows]


def describe_table(conn: sqlite3.Connection, table: str) -> dict[str, Any] | None:
    """Columns, indexes and CREATE statement of a table or view; None if there is none."""
    found = conn.execute(
        "SELECT name, type, sql FROM sqlite_master "
        "WHERE type IN ('table', 'view') AND name = ? COLLATE NOCASE",
        (table,),
    ).fetchone()
    if found is None:
        return None
    name, kind, sql = found
    columns = [
        {
            "name": col_name,
            "type": col_type,
            "notnull": bool(notnull),
            "default": default,
            "primary_key": pk,  # 0, or the column's position in the primary key
        }
        for col_name, col_type, notnull, default, pk in conn.execute(
            'SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY cid',
            (name,),
        )
    ]
    indexes = []
    for index_name, unique in conn.execute(
        'SELECT name, "unique" FROM pragma_index_list(?) ORDER BY name', (name,)
    ).fetchall():
        index_columns = conn.execute(
            "SELECT name FROM pragma_index_info(?) ORDER BY seqno", (index_name,)
        ).fetchall()
        indexes.append(
            {"name": index_name, "unique": bool(unique), "columns": [c for (c,) in index_columns]}
        )
    return {"name": name, "type": kind, "columns": columns, "indexes": indexes, "sql": sql}


def run_query(
    conn: sqlite3.Connection, sql: str, params: Sequence[Scalar], limit: int
) -> dict[str, Any]:
    """Run one statement; return at most ``limit`` rows and whether more were left."""
    cursor = conn.execute(sql, tuple(params))
    if cursor.description is None:  # not a query (e.g. a PRAGMA that sets something)
        return {"columns": [], "rows": [], "truncated": False}
    columns = [d[0] for d in cursor.description]
    # One extra row answers "was there more?" without counting the whole result.
    rows = cursor.fetchmany(limit + 1)
    truncated = len(rows) > limit
    return {
        "columns": columns,
        "rows": [[_cell(v) for v in row] for row in rows[:limit]],
        "truncated": truncated,
    }
