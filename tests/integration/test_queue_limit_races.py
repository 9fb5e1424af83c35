"""Queue limits on PostgreSQL, where claims run side by side under READ COMMITTED: a limit set
while a plain claim is in flight still counts that claim's jobs, and the outcome that frees
a limited queue's slot wakes the other runners even when its writer never learnt the queue
is limited (it claimed before the limit was set)."""

from __future__ import annotations

import datetime
import threading
from collections.abc import Iterator

import pytest

from jobtable.core.batch import Batch
from jobtable.core.ids import JobIdGenerator
from jobtable.core.jobs import NewJob
from jobtable.core.limits import QueueLimit, RateLimit, RunningLimit
from jobtable.core.outcome import Succeed
from tests.e2e.conftest import wait_until
from tests.support.postgres import fresh_schema

T0 = datetime.datetime(2026, 3, 1, 12, 0, tzinfo=datetime.UTC)
_ids = JobIdGenerator()


@pytest.fixture
def postgres() -> Iterator[tuple[object, str, str]]:
    from jobtable.adapters.postgres import PostgresStore

    with fresh_schema() as (url, schema):
        store = PostgresStore.open(url, now=T0, schema=schema)
        try:
            yield store, url, schema
        finally:
            store.close()


def add(store, queue: str, kind: str = "noop") -> str:
    job_id = _ids.next_id(1_872_366_400_000)
    store.create(NewJob(id=job_id, kind=kind, payload="{}", queue=queue), now=T0)
    return job_id


def running_in(store, queue: str) -> int:
    return sum(state.counts["running"] for state in store.queues() if state.name == queue)


def test_a_limit_set_while_a_plain_claim_is_in_flight_counts_that_claims_jobs(postgres):
    import psycopg

    store, url, schema = postgres
    for _ in range(3):
        add(store, "slow", "other")
    for _ in range(3):
        add(store, "slow")
    in_flight = psycopg.connect(url, options=f"-c search_path={schema}")
    params = {"runner_id": "r1", "now": T0, "kinds": ["other"], "queues": None, "limit": 3}
    setting = threading.Thread(
        target=store.set_queue_limit, args=("slow", QueueLimit(running=2)), kwargs={"now": T0}
    )
    watcher = psycopg.connect(url, autocommit=True)
    try:
        taken = in_flight.execute(store._engine.sql("claim_next_job"), params).fetchall()
        assert len(taken) == 3  # claimed as unlimited, not yet committed
        setting.start()
        wait_until(
            lambda: (
                watcher.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    " AND query LIKE %s",
                    ["%LOCK TABLE jobtable_queues%"],
                ).fetchone()[0]
                == 1
            ),
            within=10,
            what="the limit waiting for the claim in flight",
        )
    finally:
        watcher.close()
        in_flight.commit()  # never left holding the queues: the limit and teardown go on
        in_flight.close()
    setting.join(10)
    assert not setting.is_alive()
    limited = Batch(claim=5, limited_queues=frozenset({"slow"}))
    done = store.run_batch(limited, runner_id="r2", now=T0, kinds=("noop", "other"))
    assert done.claimed == []  # three run already, past the limit of two
    assert running_in(store, "slow") == 3


def test_an_outcome_that_frees_a_limited_queues_slot_is_announced_by_a_runner_unaware(postgres):
    import psycopg

    store, url, _schema = postgres
    add(store, "slow")
    (claimed,) = store.run_batch(Batch(claim=1), runner_id="a", now=T0, kinds=("noop",)).claimed
    store.set_queue_limit("slow", QueueLimit(running=1), now=T0)
    listener = psycopg.connect(url, autocommit=True)
    try:
        listener.execute(f"LISTEN {store._engine.channel}")
        outcome = Batch(outcomes=[(claimed.claim, Succeed(result="{}"))])  # knows no limit
        store.run_batch(outcome, runner_id="a", now=T0, kinds=("noop",))
        heard = list(listener.notifies(timeout=5, stop_after=1))
    finally:
        listener.close()
    assert len(heard) == 1


@pytest.mark.parametrize(
    "rules",
    [
        {"limits": {"noop": RunningLimit(n=1, keyed=False)}},
        {"rates": {"noop": RateLimit(n=5, per=60.0, keyed=False)}},
    ],
    ids=["limit", "rate"],
)
def test_an_outcome_of_a_limited_or_rated_kind_is_announced(postgres, rules):
    """A limited kind's job that ends frees its slot: other runners are told to look again.
    So too a rated kind's: in a rolling deploy another runner may hold it by a limit this
    runner does not know yet (a rate alone needs no wake: its window opens with time)."""
    import psycopg

    store, url, _schema = postgres
    add(store, "default")
    first = Batch(claim=1, **rules)
    (claimed,) = store.run_batch(first, runner_id="a", now=T0, kinds=("noop",)).claimed
    channel = store._engine.channel
    listener = psycopg.connect(url, autocommit=True)
    try:
        listener.execute(f"LISTEN {channel}")
        outcome = Batch(outcomes=[(claimed.claim, Succeed(result="{}"))], **rules)
        store.run_batch(outcome, runner_id="a", now=T0, kinds=("noop",))
        listener.execute("SELECT pg_notify(%s, 'after')", [channel])  # delivered after it
        heard = []
        for notice in listener.notifies(timeout=10):
            heard.append(notice.payload)
            if notice.payload == "after":
                break
    finally:
        listener.close()
    assert heard == ["", "after"]
