"""Queue rows on the SQL engines: a row an earlier version's resume left behind (paused
false) is neither listed nor a pause; claims go by as if it were not there."""

from __future__ import annotations

import datetime
from contextlib import ExitStack

import pytest

from jobtable.core import NewJob
from tests.support.stores import open_store

T0 = datetime.datetime(2026, 3, 1, 12, 0, tzinfo=datetime.UTC)


def leave_a_resumed_row(store, engine: str) -> None:
    """What ``resume`` wrote before it deleted the row: the row, paused false."""
    store.set_queue_paused("legacy", paused=True, now=T0)
    sql = "UPDATE jobtable_queues SET paused = {} WHERE name = 'legacy'"
    if engine == "sqlite":
        store._db.write(lambda conn: conn.execute(sql.format(0)))
    else:
        with store._pool.connection() as conn:
            conn.execute(sql.format("false"))


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_a_queue_row_an_earlier_resume_left_is_not_listed_and_does_not_pause(engine, tmp_path):
    with ExitStack() as stack:
        store = open_store(engine, tmp_path, stack)
        stack.callback(store.close)
        leave_a_resumed_row(store, engine)
        assert store.queues() == []
        assert store.paused_queues() == frozenset()
        store.create(NewJob(id="job-1", kind="count", payload="{}", queue="legacy"), now=T0)
        assert [state.name for state in store.queues()] == ["legacy"]
        claimed = store.claim_next(runner_id="r", now=T0, kinds={"count"}, queues=None)
        assert claimed is not None and claimed.id == "job-1"
