"""A fair batch that fails has its store forget the key lists it kept: what its claims listed
or found dry in its transaction may not be so once it rolled back (a key whose only job it
took has that job queued again, and must keep its turn)."""

from __future__ import annotations

import pytest

from jobtable.adapters.sql import queue as sql_queue
from jobtable.adapters.sqlite import SqliteStore
from jobtable.core.batch import Batch
from jobtable.core.errors import StoreError
from jobtable.core.ids import JobIdGenerator
from jobtable.core.jobs import NewJob
from tests.contract.test_batch_contract import LATER, T0

FAIR = frozenset({"tenant"})


def claim(store, n: int) -> list[str]:
    done = store.run_batch(Batch(claim=n, fair=FAIR), runner_id="runner-a", now=LATER, kinds=FAIR)
    return [job.payload for job in done.claimed]


def test_a_failed_batch_forgets_the_keys_it_found_dry_so_their_jobs_keep_their_turns(
    tmp_path, monkeypatch
):
    store = SqliteStore.open(tmp_path / "jobs.db", now=T0)
    try:
        ids = JobIdGenerator()
        jobs = [("b", "b1"), ("b", "b2"), ("b", "b3"), ("c", "c1"), ("c", "c2"), ("x", "x1")]
        store.create_many(
            [
                NewJob(id=ids.next_id(n + 1), kind="tenant", payload=f'"{name}"', fair_key=key)
                for n, (key, name) in enumerate(jobs)
            ],
            now=T0,
        )
        assert claim(store, 1) == ['"b1"']  # the keys are listed: b, c, x
        original = sql_queue.SqlQueue._claim_limited

        def claims_then_fails(self, conn, *args, **kwargs):
            original(self, conn, *args, **kwargs)  # takes x's only job: x is found dry
            raise StoreError("the batch failed after its claim")

        monkeypatch.setattr(sql_queue.SqlQueue, "_claim_limited", claims_then_fails)
        with pytest.raises(StoreError):
            claim(store, 5)
        monkeypatch.setattr(sql_queue.SqlQueue, "_claim_limited", original)
        assert claim(store, 2) == ['"c1"', '"x1"']  # neither had a turn; b had the first
    finally:
        store.close()
