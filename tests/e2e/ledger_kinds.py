"""Kinds for the many-process tests; every execution is written to a ledger table.

``ledger`` records each time its handler runs (job id, process id) in the
same SQLite file, through a connection of its own, so a test can count
executions per job across processes. ``hold`` publishes, then waits on the
stop signal for up to a minute: a job a test can kill a process under.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from typing import Any

import attrs

from core import JobContext

_local = threading.local()


def _ledger() -> sqlite3.Connection:
    conn = getattr(_local, "conn", None)
    if conn is None:
        conn = sqlite3.connect(os.environ["JOBTABLE_DATABASE"], timeout=30, isolation_level=None)
        conn.execute("PRAGMA busy_timeout = 30000")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS ledger (job_id TEXT NOT NULL, pid INTEGER NOT NULL)"
        )
        _local.conn = conn
    return conn


@attrs.frozen
class Entry:
    n: int = 0


@attrs.frozen
class Done:
    pid: int

    def public(self) -> dict[str, Any]:
        return {"pid": self.pid}


def ledger(ctx: JobContext, payload: Entry) -> Done:
    _ledger().execute("INSERT INTO ledger VALUES (?, ?)", (ctx.job_id, os.getpid()))
    return Done(pid=os.getpid())


def hold(ctx: JobContext, payload: Entry) -> Done:
    ctx.publish(Done(pid=os.getpid()))
    ctx.wait(60)
    return Done(pid=os.getpid())


def register(kinds: Any) -> None:
    kinds.register("ledger", ledger, payload=Entry)
    kinds.register("hold", hold, payload=Entry)
    kinds.register("hold_retry", hold, payload=Entry, max_attempts=2)
