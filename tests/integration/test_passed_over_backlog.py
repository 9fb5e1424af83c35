"""A paused or limited queue's backlog, or one of a queue the runner does not serve, costs
the other queues' claims nothing, on both engines: the work a claim does (SQLite's virtual machine steps, PostgreSQL's rows read)
is the same with 20,000 jobs of the passed-over queue ahead as with 100, and what it
claims is the other queue's jobs, in claim order. A limited queue's own page of a kind
reads only that queue's jobs, however deep the other queues' backlog ahead of it.

Work is counted, not timed: the count does not depend on the machine's load.
"""

from __future__ import annotations

import re
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


def backlog(store: Any, ahead: int, *, ahead_in: str, behind_in: str) -> list[str]:
    """``ahead`` jobs of ``ahead_in`` first, then 5 of ``behind_in``, all of one kind and
    priority; the ids of ``behind_in``'s, in claim order."""
    ids = JobIdGenerator()
    jobs = [
        NewJob(id=ids.next_id(1_772_366_400_000 + n), kind="work", payload="{}", queue=queue)
        for n, queue in enumerate([ahead_in] * ahead + [behind_in] * 5)
    ]
    store.create_many(jobs, now=CLOCK.now())
    return [job.id for job in jobs[ahead:]]


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


def _prepared(sql: str) -> tuple[str, list[str]]:
    """``sql`` (psycopg's named placeholders) with $1, $2, ... for PREPARE, its comments
    left out, and the names in their order."""
    order: list[str] = []

    def number(match: re.Match[str]) -> str:
        if match.group(1) not in order:
            order.append(match.group(1))
        return f"${order.index(match.group(1)) + 1}"

    code = re.sub(r"--[^\n]*", "", sql)  # the comments name parameters too
    return re.sub(r"%\((\w+)\)s", number, code).replace("%%", "%"), order


@pytest.mark.parametrize("name", ["claim_next_job", "hold_next_jobs"])
@pytest.mark.parametrize("queues", [None, ["default"]])
@pytest.mark.parametrize("paused", [False, True])
def test_postgres_generic_plans_of_a_claim_read_no_whole_table(name, queues, paused, tmp_path):
    """A deployment may have PostgreSQL plan prepared statements generically: the claim's
    plan must not join its picks to a scan of jobs (a generic plan cannot tell how few it
    picks), whichever way it reads the queues."""
    import psycopg.sql

    with engine_store("postgres", tmp_path / "generic") as (store, _):
        backlog(store, DEEP, ahead_in="bulk", behind_in="default")
        if paused:
            store.set_queue_paused("bulk", paused=True, now=CLOCK.now())
        engine = store._engine
        sql, order = _prepared(engine.sql(name))
        params = {
            "runner_id": "runner-a",
            "now": CLOCK.now(),
            "kinds": ["work"],
            "queues": queues,
            "limit": 3,
        }
        url, schema = _postgres_urls[id(store)]
        with psycopg.connect(url, options=f"-c search_path={schema}") as conn:
            conn.execute("ANALYZE jobs")
            conn.execute("SET plan_cache_mode = force_generic_plan")
            conn.execute(f"PREPARE claim AS {sql}")
            args = psycopg.sql.SQL(", ").join(
                psycopg.sql.SQL("{}::text[]" if each in ("kinds", "queues") else "{}").format(
                    psycopg.sql.Literal(params[each])
                )
                for each in order
            )  # literals: EXECUTE takes no parameters of its own
            explain = psycopg.sql.SQL("EXPLAIN EXECUTE claim({})").format(args)
            plan = "\n".join(row[0] for row in conn.execute(explain))
            conn.rollback()
        assert "$1" in plan, plan  # a generic plan: by parameter
        assert "Seq Scan on jobs" not in plan, plan


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
