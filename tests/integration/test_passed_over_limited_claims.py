"""A limited, rate-limited or fair kind's own statements pass over its jobs in a paused,
limited or unserved queue, on both engines: each statement's form that reads each queue on
its own does the same work with 20,000 of the kind's jobs (of one key) ahead as with 100,
and a store switches to it from the claim after one saw a queue paused; the forms across
every queue seek a key's first jobs however deep its backlog. PostgreSQL's plans, generic
ones too, seek the served queue on statistics sampled while the paused queue held every
row. Work is counted, not timed (test_passed_over_backlog.py's helpers).
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

from jobtable.core.limits import QueueLimit
from tests.integration.test_passed_over_backlog import (
    CLOCK,
    DEEP,
    ENGINES,
    SHALLOW,
    _rows_read,
    backlog,
    backlogs,
    engine_store,
)
from tests.support.stores import _postgres_urls


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


def _limited_statements(engine: Any, queues: Any) -> dict[str, tuple[dict[str, Any], Any]]:
    """A limited or fair kind's own statements, each with its parameters and what it must
    read of ``behind`` (the served queue's jobs, in claim order): its ids, or a value."""
    of_kind = {"kind": "work", "queues": engine.names(queues)}
    claiming = {"runner_id": "runner-a", "now": engine.stamp(CLOCK.now())}
    statements = {
        "claim_within_limit_by_queue": (
            {**of_kind, **claiming, "n": 10, "limit": 3, "page": 3, "room_of": "limit",
             "rate_n": None, "kept": None, "latest": None, "since": None},
            slice(0, 3),
        ),
        "pick_limited_by_queue": (
            {**of_kind, "limit": 3, "after_priority": -1,
             "after_run_at": "1970-01-01T00:00:00+00:00", "after_id": "",
             "full": engine.names([]), "null_full": False, "only_null": False},
            slice(0, 3),
        ),
        "fair_priority_by_queue": ({**of_kind, "after": -1}, 0),
        "fair_heads_by_queue": (
            {**of_kind, "priority": 0, "fair_keys": engine.names(["k1"]), "limit": 3,
             "offset": 0},
            slice(0, 3),
        ),
        "claim_fair_heads_by_queue": (
            {**of_kind, **claiming, "priority": 0, "after": -1,
             "fair_keys": engine.names(["k1"]), "chunk": 8, "limit": 3},
            slice(0, 1),  # a key's head
        ),
        "limit_heads_by_queue": (
            {**of_kind, "limit_keys": engine.names(["k1"]), "limit": 3}, slice(0, 3)
        ),
        "fair_unkeyed_by_queue": (
            {**of_kind, "kind": "plain", "priority": 0, "limit": 3, "offset": 0},
            slice(0, 3),
        ),
    }  # fmt: skip
    if engine.reads_cost_no_round_trip:  # PostgreSQL's alone: SQLite counts first
        del statements["claim_within_limit_by_queue"]
    return statements


KINDS_KEYS = {"work": "k1", "plain": None}
"""A limited or fair kind's jobs, all of one key, and a kind's with none."""
_LIMITED = [
    "claim_within_limit_by_queue",
    "pick_limited_by_queue",
    "fair_priority_by_queue",
    "fair_heads_by_queue",
    "claim_fair_heads_by_queue",
    "limit_heads_by_queue",
    "fair_unkeyed_by_queue",
]


@pytest.mark.parametrize("passed_over", ["paused", "limited", "not served"])
@pytest.mark.parametrize("engine", ENGINES)
def test_a_passed_over_queues_backlog_costs_a_limited_or_fair_kinds_claims_nothing(
    engine, passed_over, tmp_path
):
    """A limited, rate-limited or fair kind's own statements (its claim under its lock, its
    pages, its keys' heads, its first priority, its jobs without a key) read each queue
    they serve on its own: with 20,000 of the kind's jobs, of the same key, in a paused,
    limited or unserved queue ahead, each does the work it does with 100, and reads the
    served queue's jobs."""
    work: dict[int, dict[str, int]] = {}
    for ahead in (SHALLOW, DEEP):
        with engine_store(engine, tmp_path / str(ahead)) as (store, run):
            behind, unkeyed = backlogs(
                store, ahead, ahead_in="bulk", behind_in="default", keys=KINDS_KEYS
            ).values()
            if passed_over == "paused":
                store.set_queue_paused("bulk", paused=True, now=CLOCK.now())
            elif passed_over == "limited":
                store.set_queue_limit("bulk", QueueLimit(running=1), now=CLOCK.now())
            queues = ["default"] if passed_over == "not served" else None
            work[ahead] = {}
            for name, (params, wanted) in _limited_statements(store._engine, queues).items():
                rows, work[ahead][name] = run(store._engine.sql(name), params)
                if isinstance(wanted, slice):
                    ids = unkeyed if name == "fair_unkeyed_by_queue" else behind
                    assert [row[0] for row in rows] == ids[wanted], name
                else:
                    assert rows == [(wanted,)], name
    grown = {  # not the 200x more rows ahead
        name: (work[SHALLOW][name], work[DEEP][name])
        for name in work[DEEP]
        if work[DEEP][name] > 2 * work[SHALLOW][name] + 10
    }
    assert not grown, grown


GENERIC = [("claim_next_job",), ("hold_next_jobs",), tuple(_LIMITED)]


@pytest.mark.parametrize("names", GENERIC)
@pytest.mark.parametrize("queues", [None, ["default"]])
@pytest.mark.parametrize("paused", [False, True])
def test_postgres_generic_plans_of_a_claim_read_no_whole_table(names, queues, paused, tmp_path):
    """A deployment may have PostgreSQL plan prepared statements generically: the claim's
    plan (a plain claim's, or a limited or fair kind's statements) must not join its picks
    to a scan of jobs (a generic plan cannot tell how few it picks), whichever way it
    reads the queues."""
    import psycopg

    with engine_store("postgres", tmp_path / "generic") as (store, _):
        backlogs(store, DEEP, ahead_in="bulk", behind_in="default", keys=KINDS_KEYS)
        if paused:
            store.set_queue_paused("bulk", paused=True, now=CLOCK.now())
        engine = store._engine
        url, schema = _postgres_urls[id(store)]
        options = f"-c search_path={schema} -c plan_cache_mode=force_generic_plan"
        with psycopg.connect(url, options=options, autocommit=True) as conn:
            conn.execute("ANALYZE jobs")
            for name in names:
                plan = _generic_plan(
                    conn, engine.sql(name), _claim_parameters(engine, name, queues)
                )
                assert "$1" in plan, (name, plan)  # a generic plan: by parameter
                assert "Seq Scan on jobs" not in plan, (name, plan)


def _claim_parameters(engine: Any, name: str, queues: Any) -> dict[str, Any]:
    if name in _LIMITED:
        return _limited_statements(engine, queues)[name][0]
    kinds = ["work"]
    return {
        "runner_id": "runner-a",
        "now": CLOCK.now(),
        "kinds": kinds,
        "queues": queues,
        "limit": 3,
    }


def _generic_plan(
    conn: Any, statement: str, params: dict[str, Any], *, analyze: bool = False
) -> Any:
    """The plan PostgreSQL makes of ``statement`` prepared, by parameter, not by value: its
    text, or with ``analyze`` the plan run (JSON), in a transaction rolled back."""
    import psycopg.sql

    sql, order = _prepared(statement)
    arrays = ("kinds", "queues", "fair_keys", "limit_keys", "full")
    conn.execute(f"PREPARE claim AS {sql}")
    try:
        args = psycopg.sql.SQL(", ").join(
            psycopg.sql.SQL("{}::text[]" if each in arrays else "{}").format(
                psycopg.sql.Literal(params[each])
            )
            for each in order
        )  # literals: EXECUTE takes no parameters of its own
        how = "(ANALYZE, FORMAT JSON)" if analyze else ""
        explain = psycopg.sql.SQL(f"EXPLAIN {how} EXECUTE claim({{}})").format(args)
        rows = conn.execute(explain).fetchall()
        return rows[0][0][0]["Plan"] if analyze else "\n".join(row[0] for row in rows)
    finally:
        conn.rollback()
        conn.execute("DEALLOCATE claim")
        conn.commit()


def test_postgres_generic_plans_read_only_the_served_queues_jobs(tmp_path):
    """Once psycopg prepares a statement, PostgreSQL may plan it for any value: the plan
    of a claim (plain, limited, fair, a limited queue's page) must still seek the served
    queue, not walk the kind's jobs past a paused queue's, on statistics sampled while
    the paused queue held every row."""
    import psycopg

    work: dict[int, dict[str, int]] = {}
    for ahead in (SHALLOW, DEEP):
        with engine_store("postgres", tmp_path / str(ahead)) as (store, _):
            backlogs(store, ahead, ahead_in="bulk", behind_in="default", keys=KINDS_KEYS)
            store.set_queue_paused("bulk", paused=True, now=CLOCK.now())
            engine = store._engine
            statements = {
                name: _claim_parameters(engine, name, None)
                for name in ("claim_next_job", "hold_next_jobs", *_LIMITED)
            }
            statements["pick_in_queue"] = {
                "kind": "work", "queue": "default", "limit": 3, "offset": 0
            }  # fmt: skip
            url, schema = _postgres_urls[id(store)]
            options = f"-c search_path={schema} -c plan_cache_mode=force_generic_plan"
            with psycopg.connect(url, options=options) as conn:
                work[ahead] = {
                    name: _rows_read(_generic_plan(conn, engine.sql(name), params, analyze=True))
                    for name, params in statements.items()
                }
    grown = {
        name: (work[SHALLOW][name], work[DEEP][name])
        for name in work[DEEP]
        if work[DEEP][name] > 2 * work[SHALLOW][name] + 10
    }
    assert not grown, grown


def test_a_stores_limited_claims_read_each_queue_once_one_saw_a_queue_paused(tmp_path):
    """A store's limited claims read across every queue while none is passed over (the
    cheapest way) and each queue on its own from the claim after one saw a queue paused:
    that claim does the work it does with a shallow backlog (SQLite's VM steps, counted on
    the store's own writer)."""
    from jobtable.adapters.sqlite import SqliteStore
    from jobtable.core.batch import Batch
    from jobtable.core.limits import RunningLimit

    batch = Batch(claim=1, limits={"work": RunningLimit(n=1000, keyed=False)})
    work = {}
    for ahead in (SHALLOW, DEEP):
        store = SqliteStore.open(tmp_path / f"{ahead}.db", now=CLOCK.now())
        try:
            behind = backlog(store, ahead, ahead_in="bulk", behind_in="default")
            first = _claim_one(store, batch)
            assert [job.queue for job in first] == ["bulk"]  # none passed over
            store.set_queue_paused("bulk", paused=True, now=CLOCK.now())
            assert [job.id for job in _claim_one(store, batch)] == behind[:1]  # sees the pause
            steps = itertools.count()
            with store._engine._db.writer() as writer:
                writer.set_progress_handler(lambda steps=steps: next(steps) and 0, 100)
            try:
                assert [job.id for job in _claim_one(store, batch)] == behind[1:2]
            finally:
                with store._engine._db.writer() as writer:
                    writer.set_progress_handler(None, 100)
            work[ahead] = next(steps)
        finally:
            store.close()
    assert work[DEEP] <= 2 * work[SHALLOW] + 10, work


def _claim_one(store: Any, batch: Any) -> list[Any]:
    return store.run_batch(batch, runner_id="r", now=CLOCK.now(), kinds=("work",)).claimed


@pytest.mark.parametrize("engine", ENGINES)
def test_the_across_queue_forms_read_a_keys_first_jobs_however_deep_its_backlog(engine, tmp_path):
    """With no queue passed over a store reads across every queue: its statements seek a
    key's first jobs in the key's index (jobs_fair, jobs_limit_keys; SQLite reads a keyed
    limit's per queue, in jobs_limit_keys_in_queue) and read what they do
    with 100 jobs of that key when it has 20,000, none sorted."""
    work: dict[int, dict[str, int]] = {}
    for ahead in (SHALLOW, DEEP):
        with engine_store(engine, tmp_path / str(ahead)) as (store, run):
            backlogs(store, ahead, ahead_in="default", behind_in="default", keys=KINDS_KEYS)
            work[ahead] = {}
            for name, (params, _) in _limited_statements(store._engine, None).items():
                plain = name.removesuffix("_by_queue")
                rows, work[ahead][plain] = run(store._engine.sql(plain), params)
                assert rows, plain
    grown = {
        name: (work[SHALLOW][name], work[DEEP][name])
        for name in work[DEEP]
        if work[DEEP][name] > 2 * work[SHALLOW][name] + 10
    }
    assert not grown, grown
