"""Apply ``migrations/postgres/NNNN_name.sql`` in order, each in one transaction.

An advisory transaction lock serializes migrators, so processes starting
together on a new database apply each step exactly once.
"""

from __future__ import annotations

import datetime
from typing import Any

import psycopg

from jobtable.adapters.migration_files import REPAIRED, Migration, load_migrations, log_repaired

MIGRATION_LOCK = 0x6A6F62746162  # "jobtab": one advisory lock id for every migrator


def migrate(
    conn: psycopg.Connection,
    *,
    now: datetime.datetime,
    migrations: list[Migration] | None = None,
) -> list[str]:
    """Bring the schema on ``conn``'s search_path up to date; return the versions applied."""
    steps = load_migrations("postgres") if migrations is None else migrations
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS jobtable_migrations ("
            " version text NOT NULL PRIMARY KEY, applied_at timestamptz NOT NULL)"
        )
    applied: list[str] = []
    for step in steps:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            done = conn.execute(
                "SELECT 1 FROM jobtable_migrations WHERE version = %s", (step.version,)
            ).fetchone()
            if done is None:
                # No parameters: several statements, each with a result of its own.
                cursor = conn.execute(step.sql.encode("utf-8"))
                repaired = _repaired(cursor)
                conn.execute(
                    "INSERT INTO jobtable_migrations (version, applied_at) VALUES (%s, %s)",
                    (step.version, now),
                )
                applied.append(step.version)
        if done is None:
            log_repaired(step.version, repaired)
    return applied


def _repaired(cursor: psycopg.Cursor[Any]) -> list[Any]:
    """The ids the step's repairing statements returned, across all its results."""
    ids: list[Any] = []
    while True:
        if cursor.description and cursor.description[0].name == REPAIRED:
            ids += [row[0] for row in cursor.fetchall()]
        if not cursor.nextset():
            return ids
