"""Kinds with concurrency limits for the many-process limits test.

Each handler writes its start and its end (wall-clock nanoseconds, its process id and
its limit key) to a ``limit_ledger`` table through a connection of its own, outside the
store, so the test can replay how many ran at once per kind and per key.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from typing import Any

import attrs

from jobtable.core import JobContext, Limit, Rate
from tests.e2e.ledger_kinds import Done
from tests.support.databases import connect

_local = threading.local()
EXPORTS_AT_ONCE = 2
SYNCS_PER_WINDOW = 5
SYNC_WINDOW = 2.0
REPORTS_QUEUE = "reports"
REPORTS_AT_ONCE = 2


def create_limit_ledger(database: str) -> None:
    conn = connect(database)
    try:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS limit_ledger (job_id TEXT NOT NULL, slot TEXT NOT NULL,"
            " event TEXT NOT NULL, at_ns BIGINT NOT NULL, pid INTEGER NOT NULL)"
        )
    finally:
        conn.close()


def _mark(job_id: str, slot: str, event: str) -> None:
    conn = getattr(_local, "conn", None)
    if conn is None:
        conn = _local.conn = connect(os.environ["JOBTABLE_DATABASE"])
    marker = "?" if isinstance(conn, sqlite3.Connection) else "%s"
    conn.execute(
        f"INSERT INTO limit_ledger VALUES ({', '.join([marker] * 5)})",
        (job_id, slot, event, time.time_ns(), os.getpid()),
    )


@attrs.frozen
class Export:
    n: int = 0


@attrs.frozen
class Charge:
    customer: str
    n: int = 0


def export(ctx: JobContext, payload: Export) -> Done:
    _mark(ctx.job_id, "export", "start")
    ctx.wait(0.03)
    _mark(ctx.job_id, "export", "end")
    return Done(pid=os.getpid())


def charge(ctx: JobContext, payload: Charge) -> Done:
    _mark(ctx.job_id, f"charge:{payload.customer}", "start")
    ctx.wait(0.03)
    _mark(ctx.job_id, f"charge:{payload.customer}", "end")
    return Done(pid=os.getpid())


def report(ctx: JobContext, payload: Export) -> Done:
    """A kind with no limit of its own, in a queue an operator limits at run time."""
    _mark(ctx.job_id, f"queue:{REPORTS_QUEUE}", "start")
    ctx.wait(0.03)
    _mark(ctx.job_id, f"queue:{REPORTS_QUEUE}", "end")
    return Done(pid=os.getpid())


def sync(ctx: JobContext, payload: Export) -> Done:
    return Done(pid=os.getpid())


def register(kinds: Any) -> None:
    kinds.register("export", export, payload=Export, limit=Limit(EXPORTS_AT_ONCE), max_attempts=3)
    kinds.register("charge", charge, payload=Charge, limit=Limit(1, key="customer"), max_attempts=3)
    kinds.register("sync", sync, payload=Export, rate=Rate(SYNCS_PER_WINDOW, per=SYNC_WINDOW))
    kinds.register("report", report, payload=Export, queue=REPORTS_QUEUE)
