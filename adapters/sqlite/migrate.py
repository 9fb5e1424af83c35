"""Apply ``migrations/sqlite/NNNN_name.sql`` in order, each in one transaction.

Applied versions are recorded in ``jobtable_migrations`` (named apart from
any ``schema_migrations`` an application already has). Each step re-checks
its record inside its own ``BEGIN IMMEDIATE``, so two processes opening one
new database at once apply every step exactly once.
"""

from __future__ import annotations

import datetime
import sqlite3

from jobtable.adapters.migration_files import REPAIRED, Migration, load_migrations, log_repaired


def split_statements(sql: str) -> list[str]:
    """Split a script into complete statements (executescript would commit our transaction)."""
    statements: list[str] = []
    pending = ""
    for line in sql.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            if pending.strip():
                statements.append(pending.strip())
            pending = ""
    if pending.strip() and not _only_comments(pending):
        raise ValueError("migration ends with an incomplete statement")
    return statements


def _only_comments(text: str) -> bool:
    return all(not line.strip() or line.strip().startswith("--") for line in text.splitlines())


def _up_to_date(conn: sqlite3.Connection, steps: list[Migration]) -> bool:
    """Whether every step is recorded, read without a write lock (an application's open
    transaction on the same file, Django's inside ``atomic()``, must not hold the open up)."""
    try:
        done = {row[0] for row in conn.execute("SELECT version FROM jobtable_migrations")}
    except sqlite3.OperationalError:  # no table yet, or the file is busy: migrate as always
        return False
    return all(step.version in done for step in steps)


def migrate(
    conn: sqlite3.Connection,
    *,
    now: datetime.datetime,
    migrations: list[Migration] | None = None,
) -> list[str]:
    """Bring the database up to date on ``conn`` (autocommit mode); return the versions applied."""
    steps = load_migrations("sqlite") if migrations is None else migrations
    if _up_to_date(conn, steps):
        return []  # a read only: opening never waits for another connection's write
    # In a BEGIN IMMEDIATE too: a bare write that starts as a read cannot wait for
    # the lock when another connection commits first (SQLITE_BUSY_SNAPSHOT).
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS jobtable_migrations ("
            " version TEXT NOT NULL PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    applied: list[str] = []
    for step in steps:
        conn.execute("BEGIN IMMEDIATE")
        try:
            done = conn.execute(
                "SELECT 1 FROM jobtable_migrations WHERE version = ?", (step.version,)
            ).fetchone()
            if done is None:
                repaired = []
                for statement in split_statements(step.sql):
                    cursor = conn.execute(statement)
                    if cursor.description and cursor.description[0][0] == REPAIRED:
                        repaired += [row[0] for row in cursor.fetchall()]
                conn.execute(
                    "INSERT INTO jobtable_migrations (version, applied_at) VALUES (?, ?)",
                    (step.version, now.isoformat(timespec="microseconds")),
                )
                applied.append(step.version)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        if done is None:
            log_repaired(step.version, repaired)
    return applied


def applied_versions(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute("SELECT version FROM jobtable_migrations ORDER BY version").fetchall()
    return [row[0] for row in rows]
