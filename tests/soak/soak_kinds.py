"""The crash soak's kind: ``soak`` waits a short random time, writing each execution to a ledger.

Every start of a handler is a row in ``executions`` (job id, attempt, pid),
written through a connection of the process's own before the work begins,
so a run that a kill cuts short still shows. Completions are recorded by a
trigger on ``jobs`` in the same transaction as the outcome (see
``crash_soak.create_ledger``), so the two ledgers together show every run
and every recorded end. ``max_attempts=2``: a job killed once runs again.
``soak_retry`` fails its first attempt with a retryable code (three attempts).
"""

from __future__ import annotations

import os
import threading
from typing import Any

import attrs

from jobtable.core import Failure, JobContext
from tests.support.databases import connect

_local = threading.local()


@attrs.frozen
class Nap:
    milliseconds: int


@attrs.frozen
class Woke:
    pid: int

    def public(self) -> dict[str, Any]:
        return {"pid": self.pid}


class StoppedError(RuntimeError):
    """The worker is stopping: leave the job running for the next start to settle."""


def _record_execution(job_id: str, attempt: int) -> None:
    conn = getattr(_local, "conn", None)
    if conn is None:
        conn = _local.conn = connect(os.environ["JOBTABLE_DATABASE"])
    marker = "%s" if type(conn).__module__.startswith("psycopg") else "?"
    conn.execute(
        f"INSERT INTO executions VALUES ({marker}, {marker}, {marker})",
        (job_id, attempt, os.getpid()),
    )


def nap(ctx: JobContext, payload: Nap) -> Woke:
    _record_execution(ctx.job_id, ctx.attempt)
    if ctx.wait(payload.milliseconds / 1000):
        raise StoppedError("stopping")
    return Woke(pid=os.getpid())


@attrs.frozen
class FlakyNap:
    milliseconds: int


def flaky_nap(ctx: JobContext, payload: FlakyNap) -> Woke:
    """Fails ``flaky`` on its first attempt, then naps like ``soak``: retries in the mix."""
    _record_execution(ctx.job_id, ctx.attempt)
    if ctx.attempt == 1:
        raise Failure("flaky")
    if ctx.wait(payload.milliseconds / 1000):
        raise StoppedError("stopping")
    return Woke(pid=os.getpid())


def register(kinds: Any) -> None:
    kinds.register("soak", nap, payload=Nap, max_attempts=2)
    kinds.register(
        "soak_retry", flaky_nap, payload=FlakyNap, failure_codes=["flaky"], retry_on=["flaky"],
        max_attempts=3, backoff=(0.05, 0.5),
    )  # fmt: skip
