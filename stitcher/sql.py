"""Run a user's SQL on a read-only database connection and hand back its first column.

Seed 002 answers "arts and culture of the most populous city" by asking SQL first and searching
second. stitcher does the same without an LLM: `--sql` picks the rows, `--join FIELD` turns the
first column's values into a filter. The connection is opened read-only at the SQLite level
(`mode=ro`) *and* with `query_only`, so no statement — DROP, UPDATE, ATTACH tricks — can change
the file.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from stitcher.errors import SqlError as SqlError  # it lives in stitcher.errors
from stitcher.errors import UsageError, setting

#: More values than this make a filter nobody meant to write.
MAX_JOIN_VALUES = 1000


@dataclass(frozen=True)
class SqlResult:
    """The query, its column names and rows (as JSON-friendly lists)."""

    sql: str
    columns: list[str]
    rows: list[list[Any]]

    def first_column(self) -> list[str]:
        """Distinct non-null values of the first column, in row order, as strings."""
        seen: dict[str, None] = {}
        for row in self.rows:
            if row and row[0] is not None:
                seen.setdefault(str(row[0]), None)
        return list(seen)


_ALLOWED_ACTIONS = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    getattr(sqlite3, "SQLITE_RECURSIVE", 33),
}


def _read_only_authorizer(action: int, *_args: object) -> int:
    return sqlite3.SQLITE_OK if action in _ALLOWED_ACTIONS else sqlite3.SQLITE_DENY


def run_readonly(db: str | Path, sql: str) -> SqlResult:
    """Run `sql` against the SQLite file `db`, read-only.

    Raises:
        UsageError: the file does not exist or the SQL is empty.
        SqlError: SQLite refused the statement (including any attempt to write).
    """
    path = Path(db)
    if not sql.strip():
        raise UsageError(f"{setting('sql')} is empty")
    if not path.is_file():
        raise UsageError(f"{setting('db', db)}: no such SQLite file")
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as error:
        raise SqlError(f"{db}: cannot open read-only: {error}") from None
    try:
        connection.execute("PRAGMA query_only = ON")
        # query_only still lets ATTACH create a new empty file; allow reading, nothing else.
        connection.set_authorizer(_read_only_authorizer)
        cursor = connection.execute(sql)
        columns = [d[0] for d in cursor.description or ()]
        rows = [list(row) for row in cursor.fetchmany(MAX_JOIN_VALUES + 1)]
    except sqlite3.Error as error:
        raise SqlError(f"SQL failed on {db} (connections are read-only): {error}") from None
    finally:
        connection.close()
    if not columns:
        raise SqlError(
            "the SQL returned no columns: use a SELECT whose first column holds the values"
        )
    if len(rows) > MAX_JOIN_VALUES:
        raise SqlError(f"the SQL returned more than {MAX_JOIN_VALUES} rows; narrow it (LIMIT ...)")
    return SqlResult(sql=sql, columns=columns, rows=rows)
