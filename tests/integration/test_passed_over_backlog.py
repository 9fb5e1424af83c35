"""A paused or limited queue's backlog, or one of a queue the runner does not serve, costs
the other queues' claims nothing, on both engines: the work a claim does (SQLite's virtual machine steps, PostgreSQL's rows read)
is the same with 20,000 jobs of the passed-over queue ahead as with 100, and what it
claims is the other queue's jobs, in claim order. A limited queue's own page of a kind
reads only that queue's jobs, however deep the other queues' backlog ahead of it.

Work is counted, not timed: the count does not depend on the machine's load.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.core.ids import JobIdGenerator
from jobtable.core.jobs import NewJob
from jobtable.core.limits import QueueLimit
from tests.support.stores import _postgres_urls, open_store

SHALLOW, DEEP = 100, 20_000
CLOCK = FakeClock()


def backlogs(
    store: Any, ahead: int, *, ahead_in: str, behind_in: str, keys: dict[str, Any]
) -> dict[str, list[str]]:
    """For each kind in ``keys``: ``ahead`` jobs in ``ahead_in`` first, then 5 in
    ``behind_in``, all of one priority and the kind's key (as limit key and fair key); the
    ids of ``behind_in``'s, in claim order. PostgreSQL's statistics are taken in between,
    as a sample may find a table: every row in ``ahead_in`` (a planner must not trust it)."""
    ids, made = JobIdGenerator(), itertools.count()

    def jobs_in(queue: str, count: int) -> dict[str, list[NewJob]]:
        return {
            kind: [
                NewJob(
                    id=ids.next_id(1_772_366_400_000 + next(made)), kind=kind, payload="{}",
                    queue=queue, limit_key=key, fair_key=key,
                )
                for _ in range(count)
            ]
            for kind, key in keys.items()
        }  # fmt: skip

    first, then = jobs_in(ahead_in, ahead), jobs_in(behind_in, 5)
    store.create_many([job for jobs in first.values() for job in jobs], now=CLOCK.now())
    if id(store) in _postgres_urls:
        import psycopg

        url, schema = _postgres_urls[id(store)]
        with psycopg.connect(url, options=f"-c search_path={schema}", autocommit=True) as conn:
            conn.execute("ANALYZE jobs")
    store.create_many([job for jobs in then.values() for job in jobs], now=CLOCK.now())
    return {kind: [job.id for job in jobs] for kind, jobs in then.items()}


def backlog(store: Any, ahead: int, *, ahead_in: str, behind_in: str) -> list[str]:
    """``backlogs`` of one kind, ``work``, with no key."""
    return backlogs(store, ahead, ahead_in=ahead_in, behind_in=behind_in, keys={"work": None})[
        "work"
    ]


@contextmanager
def counting_sqlite(store: Any, path: Any) -> Iterator[Callable[[str, dict[str, Any]], Any]]:
    """Run a statement in a transaction rolled back: its rows and its VM steps (in 100s)."""
    conn = sqlite3.connect(path)

    def run(sql: str, params: dict[str, Any]) -> Any:
        steps = [0]

        def tick() -> int:
            steps[0] += 1
            return 0

        conn.set_progress_handler(tick, 100)
        try:
            conn.execute("BEGIN")
            rows = conn.execute(sql, params).fetchall()
        finally:
            conn.set_progress_handler(None, 100)
            conn.execute("ROLLBACK")
        return rows, steps[0]

    try:
        yield run
    finally:
        conn.close()


def _rows_read(plan: dict[str, Any]) -> int:
    own = plan.get("Actual Rows", 0) * plan.get("Actual Loops", 1)
    own += plan.get("Rows Removed by Filter", 0) * plan.get("Actual Loops", 1)
    return int(own + sum(_rows_read(child) for child in plan.get("Plans", [])))


@contextmanager
def counting_postgres(store: Any) -> Iterator[Callable[[str, dict[str, Any]], Any]]:
    """Run a statement in a transaction rolled back: its rows and the rows its plan read."""
    import psycopg

    url, schema = _postgres_urls[id(store)]
    with psycopg.connect(url, options=f"-c search_path={schema}") as conn:
        conn.execute("ANALYZE jobs")
        conn.commit()

        def run(sql: str, params: dict[str, Any]) -> Any:
            try:
                explained = conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
                plan = explained.fetchone()[0][0]["Plan"]
            finally:
                conn.rollback()
            try:
                rows = conn.execute(sql, params).fetchall()
            finally:
                conn.rollback()
            return rows, _rows_read(plan)

        yield run


@contextmanager
def engine_store(engine: str, tmp_path: Any) -> Iterator[tuple[Any, Any]]:
    tmp_path.mkdir()
    with ExitStack() as stack:
        store = open_store(engine, tmp_path, stack)
        stack.callback(store.close)
        counting = (
            counting_sqlite(store, tmp_path / "jobs.db")
            if engine == "sqlite"
            else counting_postgres(store)
        )
        yield store, stack.enter_context(counting)


def claim_work(store: Any, run: Any, passed_over: str, ahead: int) -> tuple[list[str], int]:
    """What a plain claim of 3 takes with ``ahead`` jobs of a queue ``passed_over`` ahead
    (paused, limited, or not among the queues the runner serves), and the work it did."""
    behind = backlog(store, ahead, ahead_in="bulk", behind_in="default")
    if passed_over == "paused":
        store.set_queue_paused("bulk", paused=True, now=CLOCK.now())
    elif passed_over == "limited":
        store.set_queue_limit("bulk", QueueLimit(running=1), now=CLOCK.now())
    engine = store._engine
    params = {
        "runner_id": "runner-a",
        "now": engine.stamp(CLOCK.now()),
        "kinds": engine.names(["work"]),
        "queues": engine.names(["default"] if passed_over == "not served" else None),
        "limit": 3,
    }
    rows, work = run(engine.sql("claim_next_job"), params)
    assert [row[0] for row in rows] == behind[:3]  # the other queue's, in claim order
    return [row[10] for row in rows], work


ENGINES = ["sqlite", "postgres"]


@pytest.mark.parametrize("passed_over", ["paused", "limited", "not served"])
@pytest.mark.parametrize("engine", ENGINES)
def test_a_passed_over_queues_backlog_costs_other_queues_claims_nothing(
    engine, passed_over, tmp_path
):
    work = {}
    for ahead in (SHALLOW, DEEP):
        with engine_store(engine, tmp_path / str(ahead)) as (store, run):
            queues, work[ahead] = claim_work(store, run, passed_over, ahead)
            assert queues == ["default"] * 3
    assert work[DEEP] <= 2 * work[SHALLOW] + 10, work  # not the 200x more rows ahead


@pytest.mark.parametrize("engine", ENGINES)
def test_a_limited_queues_page_reads_only_its_own_jobs(engine, tmp_path):
    work = {}
    for ahead in (SHALLOW, DEEP):
        with engine_store(engine, tmp_path / str(ahead)) as (store, run):
            mine = backlog(store, ahead, ahead_in="default", behind_in="bulk")
            params = {"kind": "work", "queue": "bulk", "limit": 200, "offset": 0}
            rows, work[ahead] = run(store._engine.sql("pick_in_queue"), params)
            assert [row[0] for row in rows] == mine
    assert work[DEEP] <= 2 * work[SHALLOW] + 10, work


@pytest.mark.parametrize("engine", ENGINES)
def test_a_paused_queue_without_a_kinds_jobs_leaves_its_claims_as_they_were(engine, tmp_path):
    """Only a kind with due jobs in a passed-over queue is read queue by queue: pausing an
    empty queue, or one holding only other kinds' jobs, costs a claim of 50 queues' jobs
    nothing more."""
    with engine_store(engine, tmp_path / "queues") as (store, run):
        ids = JobIdGenerator()
        queues = [f"q{n:02d}" for n in range(50)]
        store.create_many(
            [
                NewJob(id=ids.next_id(1_772_366_400_000 + n), kind="work", payload="{}",
                       queue=queues[n % 50])
                for n in range(1000)
            ] + [NewJob(id=ids.next_id(1_772_366_500_000), kind="other", payload="{}",
                        queue="elsewhere")],
            now=CLOCK.now(),
        )  # fmt: skip
        engine_ = store._engine
        params = {
            "runner_id": "runner-a",
            "now": engine_.stamp(CLOCK.now()),
            "kinds": engine_.names(["work"]),
            "queues": None,
            "limit": 10,
        }
        work = {}
        for paused in ("", "empty", "elsewhere"):
            if paused:
                store.set_queue_paused(paused, paused=True, now=CLOCK.now())
            rows, work[paused or "none"] = run(engine_.sql("claim_next_job"), params)
            assert len(rows) == 10
    assert max(work.values()) <= 1.5 * work["none"] + 10, work
