"""A SQLite store's kept fair round (adapters/sql/fair_round.py) holds the keys a claim
orders, not every key its kind ever had: with one steady tenant and a stream of tenants
that come and go (per customer, per order), the dry ones leave it, so the work each claim
does with it (under the one writer lock) stays that of the keys waiting."""

from __future__ import annotations

from jobtable.adapters.sql import fair_order, fair_round
from jobtable.adapters.sqlite import SqliteStore
from jobtable.core.batch import Batch
from jobtable.core.ids import JobIdGenerator
from jobtable.core.jobs import NewJob
from tests.contract.test_batch_contract import LATER, T0

FAIR = frozenset({"tenant"})


def test_tenants_that_came_and_went_leave_the_round_a_store_keeps(tmp_path, monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(fair_order, "_clock", lambda: clock[0])
    store = SqliteStore.open(tmp_path / "jobs.db", now=T0)
    ids, ms = JobIdGenerator(), iter(range(1, 10**6))

    def add(key: str) -> None:
        job = NewJob(id=ids.next_id(next(ms)), kind="tenant", payload="{}", fair_key=key)
        store.create(job, now=T0)

    try:
        for _ in range(400):
            add("steady")
        sizes = []
        for step in range(200):
            add(f"once-{step}-a")
            add(f"once-{step}-b")
            batch = Batch(claim=3, fair=FAIR)
            assert len(store.run_batch(batch, runner_id="r", now=LATER, kinds=FAIR).claimed) == 3
            clock[0] += fair_order.FAIR_KEYS_FRESH / 10  # the keys are listed again, now and then
            kept = fair_round._rounds.get(store._engine, {}).get("tenant")
            sizes.append(len(kept.turns.of_key) if kept is not None else 0)
        assert max(sizes[100:]) <= 2 * 10 + fair_round.ROUND_SLACK  # a few keys wait at a time
        assert min(sizes[100:]) > 0  # the claims went by a round
    finally:
        store.close()
