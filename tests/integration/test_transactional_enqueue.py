"""Transactional enqueue: a job written on the application's own connection exists only if
the application commits, and then runs (the reason a table-as-queue is chosen)."""

from __future__ import annotations

import sqlite3
from contextlib import ExitStack

import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.sqlite import SqliteStore
from jobtable.core import Status
from tests.support.harness import JobSystem
from tests.support.postgres import fresh_schema
from tests.unit.kinds_for_tests import CountPayload, count


def started_system(store) -> tuple[JobSystem, object]:
    """A runner embedded as the WSGI guide shows it: no watcher of the caller's own."""
    system = JobSystem(store)
    kind = system.kinds.register("count", count, payload=CountPayload)
    system.start()
    return system, kind


def runs_once_due(system: JobSystem, job_id: str, delay: float) -> None:
    """A job committed due later is seen (its due time read) and runs when the clock gets there."""
    system.clock.wait_for_sleeping(lambda sleeping: delay in sleeping)
    system.clock.advance(delay)
    assert system.wait_for(job_id).status is Status.SUCCEEDED


def test_on_sqlite_a_rolled_back_enqueue_leaves_no_job_and_a_committed_one_runs(tmp_path):
    path = tmp_path / "app.db"
    store = SqliteStore.open(path, now=FakeClock().now())
    system, kind = started_system(store)
    app = sqlite3.connect(path)  # the application's own connection, its own transaction
    try:
        app.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER)")
        app.commit()
        app.execute("INSERT INTO orders (total) VALUES (42)")
        dropped = kind.enqueue(CountPayload(steps=1), connection=app)
        app.rollback()
        assert system.store.get(dropped) is None
        app.execute("INSERT INTO orders (total) VALUES (43)")
        kept = kind.enqueue(CountPayload(steps=2), connection=app)
        assert system.store.get(kept) is None  # not before the application commits
        app.commit()
        assert system.wait_for(kept).status is Status.SUCCEEDED
        assert app.execute("SELECT total FROM orders").fetchall() == [(43,)]
        later = kind.enqueue(CountPayload(steps=3), connection=app, delay=5)
        app.commit()
        runs_once_due(system, later, 5.0)
    finally:
        app.close()
        system.stop()
        store.close()


def test_on_postgres_a_rolled_back_enqueue_leaves_no_job_and_a_committed_one_runs():
    import psycopg

    from jobtable.adapters.postgres import PostgresStore

    with ExitStack() as stack:
        url, schema = stack.enter_context(fresh_schema())
        store = PostgresStore.open(url, now=FakeClock().now(), schema=schema)
        stack.callback(store.close)
        system, kind = started_system(store)
        stack.callback(system.stop)
        app = stack.enter_context(psycopg.connect(url, options=f"-c search_path={schema}"))
        with app.transaction(force_rollback=True):
            dropped = kind.enqueue(CountPayload(steps=1), connection=app)
        assert system.store.get(dropped) is None
        with app.transaction():
            claims = system.store.claims
            kept = kind.enqueue(CountPayload(steps=2), connection=app)
            assert system.store.get(kept) is None  # not before the application commits
            # The enqueue woke a worker at once: its claim found nothing, before the commit.
            system.store.wait_until(lambda: system.store.claims > claims)
        assert system.wait_for(kept).status is Status.SUCCEEDED
        with app.transaction():
            later = kind.enqueue(CountPayload(steps=3), connection=app, delay=5)
        runs_once_due(system, later, 5.0)


def test_a_connection_of_another_kind_is_refused(tmp_path):
    store = SqliteStore.open(tmp_path / "jobs.db", now=FakeClock().now())
    system = JobSystem(store)
    kind = system.kinds.register("count", count, payload=CountPayload)
    with pytest.raises(TypeError, match=r"sqlite3\.Connection"):
        kind.enqueue(CountPayload(), connection=object())
    store.close()
