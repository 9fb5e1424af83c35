"""Enqueue paths the other contract modules do not take, on every store: inside the
application's own transaction, and a schedule's first sighting (what cron ticks count from)."""

from __future__ import annotations

from contextlib import ExitStack

import pytest

from jobtable.core import NewJob, Status
from jobtable.core.ids import JobIdGenerator
from jobtable.core.schedules import StoredSchedule
from tests.contract.test_lifecycle_contract import T0, later
from tests.support.stores import application_connection

_ids = JobIdGenerator()


def new_job(**fields) -> NewJob:
    return NewJob(id=_ids.next_id(int(T0.timestamp() * 1000)), kind="count", payload="{}", **fields)


def stored(name: str, **fields) -> StoredSchedule:
    given = {"kind": "count", "expression": "0 3 * * *", "timezone": "UTC", "queue": "default"}
    return StoredSchedule(name=name, **{**given, **fields})


def test_a_schedule_is_first_seen_once_and_that_time_is_kept(store):
    assert store.record_schedule(stored("nightly"), now=T0) == T0
    assert store.record_schedule(stored("nightly"), now=later(3600)) == T0  # a restart: the first
    assert store.record_schedule(stored("hourly"), now=later(60)) == later(60)  # each its own


def test_schedules_are_listed_as_last_recorded_with_their_queues_pause_and_last_tick(store):
    store.record_schedule(stored("nightly", expression="0 2 * * *"), now=T0)
    store.record_schedule(
        stored("nightly", expression="0 3 * * *", timezone="Europe/Berlin", queue="reports"),
        now=later(60),
    )  # a later deploy changed it
    store.record_schedule(stored("beat", kind="ping", expression="every 30s"), now=T0)
    store.set_queue_paused("reports", paused=True, now=T0)
    for tick in (later(3600), later(7200)):  # two ticks' jobs (the second retried: due later)
        key = f"schedule:nightly@{tick.isoformat()}"
        due = tick if tick == later(3600) else later(9000)
        store.create(new_job(unique_key=key, run_at=due, unique_while_active=False), now=T0)
    store.record_schedule(stored("nightly@eu"), now=T0)  # a name that starts with nightly@
    eu_key = f"schedule:nightly@eu@{later(8000).isoformat()}"
    store.create(new_job(unique_key=eu_key, run_at=later(8000)), now=T0)
    store.create(new_job(unique_key=f"schedule:nightlyx@{later(9999).isoformat()}"), now=T0)
    assert store.schedules() == [
        stored("beat", kind="ping", expression="every 30s"),
        stored(
            "nightly",
            expression="0 3 * * *",
            timezone="Europe/Berlin",
            queue="reports",
            queue_paused=True,
            last_tick=later(7200),  # the tick its key names, not the retry's due time
        ),
        stored("nightly@eu", last_tick=later(8000)),
    ]


def test_an_enqueue_in_the_applications_transaction_exists_once_it_commits_never_on_rollback(
    store, engine
):
    if engine == "memory":
        # The memory store has no database an application could hold a transaction in.
        with pytest.raises(TypeError, match="no database connection"):
            store.create_in(object(), new_job(), now=T0)
        return
    with ExitStack() as stack:
        app = application_connection(store, engine, stack)
        dropped = new_job()
        assert not store.create_in(app, dropped, now=T0).duplicate
        assert store.get(dropped.id) is None  # not before the application commits
        app.rollback()
        assert store.get(dropped.id) is None
        kept = new_job(unique_key="order-7")
        assert store.create_in(app, kept, now=T0) == kept.id
        again = store.create_in(app, new_job(unique_key="order-7"), now=later(1))
        assert (again, again.duplicate) == (kept.id, True)  # its own uncommitted key holds
        app.commit()
        assert store.get(kept.id).status is Status.QUEUED
        scheduled = new_job(run_at=later(60))
        store.create_in(app, scheduled, now=T0)
        app.commit()
        assert store.next_due() == later(60)


def test_an_enqueue_on_another_engines_connection_is_refused_and_stores_nothing(store, engine):
    if engine == "memory":
        return  # every connection is another engine's: the test above
    with pytest.raises(TypeError, match="connection must be a"):
        store.create_in(object(), new_job(), now=T0)
