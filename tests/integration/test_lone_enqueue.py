"""A lone enqueue's own way to the database (one statement, its NOTIFY inside, on PostgreSQL):
a failed insert stores nothing, says nothing of the database's text, and leaves the pooled
connection as the store expects it."""

from __future__ import annotations

from contextlib import ExitStack

import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.core import NewJob, StoreError
from tests.integration.test_postgres_store import open_store
from tests.support.postgres import fresh_schema

NOW = FakeClock().now()


def test_a_failed_lone_enqueue_stores_nothing_and_the_next_one_commits():
    with ExitStack() as stack:
        url, schema = stack.enter_context(fresh_schema())
        store = open_store(url, schema)
        stack.callback(store.close)
        store.create(NewJob(id="taken", kind="noop", payload="{}"), now=NOW)
        with pytest.raises(StoreError) as refused:
            store.create(NewJob(id="taken", kind="noop", payload='{"second":1}'), now=NOW)
        assert "taken" not in str(refused.value) and "duplicate" not in str(refused.value)
        for n in range(3):  # every pooled connection is back out of autocommit, and usable
            store.create(NewJob(id=f"next-{n}", kind="noop", payload="{}"), now=NOW)
        assert store.get("taken").status.value == "queued"
        assert [store.get(f"next-{n}") is not None for n in range(3)] == [True] * 3
        with store._postgres._pool.connection() as conn:
            assert conn.autocommit is False
