"""A limited batch that fails has its store forget the rate windows it kept: what its claim
read (its own starts among them, read again after an unreadable row) rolled back, and a
window ahead of the table would miss starts another runner stamps below it."""

from __future__ import annotations

import datetime

import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.sql import queue as sql_queue
from jobtable.adapters.sqlite import SqliteStore
from jobtable.core.batch import Batch
from jobtable.core.errors import StoreError
from jobtable.core.ids import JobIdGenerator
from jobtable.core.jobs import NewJob
from jobtable.core.limits import RateLimit

RATES = {"sync": RateLimit(n=3, per=60.0, keyed=False)}
NOW = FakeClock().now()


def claim(store, seconds: float, n: int, runner_id: str = "runner-a") -> int:
    now = NOW + datetime.timedelta(seconds=seconds)
    batch = Batch(claim=n, rates=RATES)
    return len(store.run_batch(batch, runner_id=runner_id, now=now, kinds=("sync",)).claimed)


def test_a_failed_batch_forgets_the_windows_so_a_lagging_runners_starts_count(
    tmp_path, monkeypatch
):
    ours = SqliteStore.open(tmp_path / "jobs.db", now=NOW)
    theirs = SqliteStore.open(tmp_path / "jobs.db", now=NOW)  # another process, its clock behind
    try:
        ids = JobIdGenerator()
        ours.create_many(
            [NewJob(id=ids.next_id(n + 1), kind="sync", payload="{}") for n in range(6)], now=NOW
        )
        assert claim(ours, 0, 0) == 0 and claim(ours, 1, 1) == 1  # a window is kept
        assert claim(ours, 2, 0) == 0
        original = sql_queue.SqlQueue._claim_limited

        def claims_then_fails(self, conn, *args, **kwargs):
            original(self, conn, *args, **kwargs)
            original(self, conn, *args, **kwargs)  # as after an unreadable row: reads its own
            raise StoreError("the batch failed after its claim")

        monkeypatch.setattr(sql_queue.SqlQueue, "_claim_limited", claims_then_fails)
        with pytest.raises(StoreError):
            claim(ours, 10, 1)  # rolled back, with what it read of its own starts
        monkeypatch.setattr(sql_queue.SqlQueue, "_claim_limited", original)
        assert claim(theirs, 5, 2, "runner-b") == 2  # stamped 5 s, below the rolled-back 10
        assert claim(ours, 11, 2) == 0  # at 1 s and twice at 5 s: the rate's 3 are spent
    finally:
        ours.close()
        theirs.close()
