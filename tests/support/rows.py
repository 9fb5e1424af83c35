"""Change a stored job's columns behind its store's back, as a tool or an older version would."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from jobtable.adapters.memory import MemoryStore
from jobtable.adapters.sqlite import SqliteStore
from jobtable.core import Status


def write_row(store: Any, job_id: str, **columns: Any) -> None:
    """Set ``columns`` of the job's row to these values, unchecked.

    Memory: the row's fields (a status by its name). SQLite: its own
    connection to the file. PostgreSQL: a connection of the store's pool (the
    test's schema).
    """
    inner = getattr(store, "inner", store)
    if isinstance(inner, MemoryStore):
        row = inner._rows[job_id]
        for name, value in columns.items():
            setattr(row, name, Status(value) if name == "status" else value)
        return
    if isinstance(inner, SqliteStore):
        conn = sqlite3.connect(inner.path)
        try:
            with conn:
                conn.execute(_update(columns, lambda name: f":{name}"), {**columns, "id": job_id})
        finally:
            conn.close()
        return
    with inner._pool.connection() as conn:
        conn.execute(_update(columns, lambda name: f"%({name})s"), {**columns, "id": job_id})


def _update(columns: dict[str, Any], placeholder: Callable[[str], str]) -> str:
    assignments = ", ".join(f"{name} = {placeholder(name)}" for name in columns)
    return f"UPDATE jobs SET {assignments} WHERE id = {placeholder('id')}"
