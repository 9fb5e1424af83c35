"""Kinds for the trust tests: every handler start and end written to a ledger outside the store.

The ledger is a file (``JOBTABLE_TEST_LEDGER``), one line per event, written
with O_APPEND by whichever process runs the handler: it shows what handlers
did even when the database says otherwise, so a test can compare the two.
Lines: ``<event> <job id> <attempt> <pid> <monotonic seconds>``.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from typing import Any

import attrs

from jobtable.core import JobContext


def record(event: str, ctx: JobContext) -> None:
    path = os.environ["JOBTABLE_TEST_LEDGER"]
    line = f"{event} {ctx.job_id} {ctx.attempt} {os.getpid()} {time.monotonic():.6f}\n"
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(descriptor, line.encode())
    finally:
        os.close(descriptor)


def read_ledger(path: Any) -> list[tuple[str, str, int, int, float]]:
    try:
        text = open(path, encoding="utf-8").read()  # noqa: SIM115 - read whole, closed by GC
    except FileNotFoundError:
        return []
    rows = []
    for line in text.splitlines():
        event, job_id, attempt, pid, at = line.split()
        rows.append((event, job_id, int(attempt), int(pid), float(at)))
    return rows


@attrs.frozen
class Work:
    ms: int = 100


@attrs.frozen
class Done:
    pid: int

    def public(self) -> dict[str, Any]:
        return {"pid": self.pid}


class Stopped(RuntimeError):
    """The handler was told to stop and gave up its job."""


def ledgered(ctx: JobContext, payload: Work) -> Done:
    """Works ``ms`` milliseconds; records its start, its end, and a stop if told."""
    record("start", ctx)
    if ctx.wait(payload.ms / 1000):
        record("stopped", ctx)
        raise Stopped("told to stop")
    record("end", ctx)
    return Done(pid=os.getpid())


def _linger(seconds: float) -> None:
    time.sleep(seconds)


def forks(ctx: JobContext, payload: Work) -> Done:
    """Forks a child that lingers (as a handler using multiprocessing does), then works."""
    child = multiprocessing.get_context("fork").Process(target=_linger, args=(120,), daemon=False)
    child.start()
    record(f"forked:{child.pid}", ctx)
    return ledgered(ctx, payload)


def register(kinds: Any) -> None:
    kinds.register("ledgered", ledgered, payload=Work)
    kinds.register("ledgered_retry", ledgered, payload=Work, max_attempts=3)
    kinds.register("forks", forks, payload=Work)
