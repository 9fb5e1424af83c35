"""A database of either engine for tests that run real processes: open it, query it, make one.

A database is named the way the CLI takes it: a SQLite path, or a
``postgresql://`` URL whose search_path is a fresh schema.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.postgres import fresh_schema

ENGINES = ["sqlite", "postgres"]


def connect(database: str) -> Any:
    """An autocommit connection; SQLite waits up to 30 s for a lock."""
    if database.startswith("postgresql://"):
        import psycopg

        return psycopg.connect(database, autocommit=True)
    conn = sqlite3.connect(database, timeout=30, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 30000")
    return conn


def query(database: str, sql: str, parameters: tuple = ()) -> list[tuple]:
    """Rows as tuples; write ``%s`` for parameters on either engine."""
    conn = connect(str(database))
    try:
        if not str(database).startswith("postgresql://"):
            sql = sql.replace("%s", "?")
        # Without parameters, a literal % (as in LIKE 'x%') must reach PostgreSQL as is.
        cursor = conn.execute(sql, parameters) if parameters else conn.execute(sql)
        return [tuple(row) for row in cursor.fetchall()]
    finally:
        conn.close()


@contextmanager
def database_for(engine: str, folder: Path) -> Iterator[str]:
    """A new, empty database: ``jobs.db`` in ``folder``, or a fresh PostgreSQL schema."""
    if engine == "sqlite":
        yield str(folder / "jobs.db")
        return
    with fresh_schema() as (url, schema):
        separator = "&" if "?" in url else "?"
        yield f"{url}{separator}options=-csearch_path%3D{schema}"
