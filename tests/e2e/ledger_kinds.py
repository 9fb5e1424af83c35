"""Kinds for the many-process tests; every execution is written to a ledger table.

``ledger`` records each time its handler runs (job id, process id) in the
same database, through a connection of its own, so a test can count
executions per job across processes. ``hold`` publishes, then waits on the
stop signal for up to a minute: a job a test can kill a process under.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from typing import Any

import attrs

from jobtable.core import JobContext
from tests.support.databases import connect

_local = threading.local()


def create_ledger(database: str) -> None:
    """Made once by the test before any worker starts (concurrent DDL races on PostgreSQL)."""
    conn = connect(database)
    try:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS ledger (job_id TEXT NOT NULL, pid INTEGER NOT NULL)"
        )
    finally:
        conn.close()


def _record(job_id: str) -> None:
    conn = getattr(_local, "conn", None)
    if conn is None:
        conn = _local.conn = connect(os.environ["JOBTABLE_DATABASE"])
    marker = "?" if isinstance(conn, sqlite3.Connection) else "%s"
    conn.execute(f"INSERT INTO ledger VALUES ({marker}, {marker})", (job_id, os.getpid()))


@attrs.frozen
class Entry:
    n: int = 0


@attrs.frozen
class Done:
    pid: int

    def public(self) -> dict[str, Any]:
        return {"pid": self.pid}


def ledger(ctx: JobContext, payload: Entry) -> Done:
    _record(ctx.job_id)
    return Done(pid=os.getpid())


def hold(ctx: JobContext, payload: Entry) -> Done:
    ctx.publish(Done(pid=os.getpid()))
    ctx.wait(60)
    return Done(pid=os.getpid())


def long(ctx: JobContext, payload: Entry) -> Done:
    """A job that takes half a second (or until its stop): too long to hold ahead."""
    _record(ctx.job_id)
    ctx.wait(0.5)
    return Done(pid=os.getpid())


def register(kinds: Any) -> None:
    kinds.register("ledger", ledger, payload=Entry)
    kinds.register("hold", hold, payload=Entry)
    kinds.register("long", long, payload=Entry)
    kinds.register("hold_retry", hold, payload=Entry, max_attempts=2)
