"""A limited claim's first statements on PostgreSQL: the look at the queues passed over and
its one limited kind's lock go in one statement (SqlEngine.look_then_lock). The lock is
taken whether or not a queue is passed over, and held until the transaction ends; the
look gives the queues passed over and nothing else."""

from __future__ import annotations

from typing import Any

import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.sql.queue_reads import remember
from jobtable.core.limits import QueueLimit
from tests.support.postgres import fresh_schema

KIND = "sync"
TRY_LOCK = (
    "SELECT pg_try_advisory_xact_lock("
    "hashtextextended('jobtable.limit:' || current_schema() || ':' || %s, 0))"
)


@pytest.mark.parametrize("passed_over", ["none", "paused", "limited"])
@pytest.mark.parametrize("kinds", [[KIND], ["export", KIND]], ids=["one kind", "two kinds"])
def test_the_look_takes_the_kinds_locks_whether_or_not_a_queue_is_passed_over(passed_over, kinds):
    import psycopg

    from jobtable.adapters.postgres import PostgresStore

    clock = FakeClock()
    with fresh_schema() as (url, schema):
        store = PostgresStore.open(url, now=clock.now(), schema=schema)
        try:
            if passed_over == "paused":
                store.set_queue_paused("bulk", paused=True, now=clock.now())
            elif passed_over == "limited":
                store.set_queue_limit("bulk", QueueLimit(running=2), now=clock.now())
            engine = store._engine
            with psycopg.connect(url, options=f"-c search_path={schema}") as other:

                def held_elsewhere(kind: str) -> bool:
                    free = other.execute(TRY_LOCK, (kind,)).fetchone()[0]
                    other.rollback()  # lets go of the lock it took, if it took it
                    return not free

                def look(conn: Any) -> tuple[list[Any], list[bool]]:
                    queues = remember(engine, engine.look_then_lock(conn, kinds).fetchall())
                    return queues, [held_elsewhere(kind) for kind in kinds]

                queues, held = engine.write(look)
                assert held == [True] * len(kinds)  # taken in the look's transaction
                assert [held_elsewhere(kind) for kind in kinds] == [False] * len(kinds)
        finally:
            store.close()
    expected = {
        "none": [],
        "paused": [("bulk", None, None, None)],
        "limited": [("bulk", 2, None, None)],
    }[passed_over]
    assert [tuple(row) for row in queues] == expected
