"""Limited and fair claims' statements read index ranges on both engines, on a backlog deep
enough that a planner would rather scan if it could, all but a few jobs of one tenant.

The table's statistics were taken while that one tenant held the whole backlog (as a sample
of a skewed table may find it): the plans must not trust them. The plans shown: a fair
kind's first priority (the first row in jobs_ready, not a MIN over the backlog), its keys
(a loose index scan of jobs_fair), the first jobs of some fair keys (one seek each; so too
the claim of their heads with the kind's lock), a page of a limited kind in claim
order from a position, passing over full keys (jobs_ready), a keyed limit's keys (a loose
index scan) and their first jobs (one seek each in jobs_limit_keys; SQLite, which keeps
only jobs_limit_keys_in_queue, one per key and queue), its running jobs per
key (jobs_running_limits) and the claim that counts them with the lock, and a limited
queue's page and running count. And a fair claim's reads of turns, however many keys the
kind ever had: its last (one seek in jobtable_fair_turns_by_turn), its listed keys' (one
seek each).
"""

from __future__ import annotations

import itertools
import re
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.sqlite import SqliteStore
from tests.support.postgres import fresh_schema

ROWS = 30_000
KEYS = [f"customer-{n}" for n in range(1000)]


def rows(*, spread: bool) -> Iterator[tuple[Any, ...]]:
    """A charge backlog all one tenant's; ``spread``: a job each of many other tenants, which
    the statistics never saw."""
    if spread:
        for number, key in enumerate(KEYS):
            yield f"f{number:07x}", "charge", "default", "queued", key, 0, "2026-01-01T01:00Z"
        return
    for number in range(ROWS):
        queue = "bulk" if number % 3 == 0 else "default"
        run_at = f"2026-01-01T00:{number // 600 % 60:02d}:{number % 60:02d}.000000+00:00"
        yield f"{number:08x}", "charge", queue, "queued", "big", 0, run_at


STATEMENTS: dict[str, dict[str, Any]] = {
    "fair_heads": {
        "kind": "charge",
        "priority": 0,
        "fair_keys": KEYS[:8],
        "limit": 3,
        "offset": 0,
        "queues": None,
    },
    "fair_priority": {"kind": "charge", "after": -1, "queues": None},
    "fair_keys": {"kind": "charge", "priority": 0},
    "pick_limited": {
        "kind": "charge",
        "limit": 200,
        "queues": None,
        "after_priority": 0,
        "after_run_at": "2026-01-01T00:10:00.000000+00:00",
        "after_id": "00000100",
        "full": ["big"],
        "null_full": False,
        "only_null": False,
    },
    "limit_keys": {"kind": "charge", "limit": 2001},
    "limit_heads": {"kind": "charge", "limit_keys": KEYS[:8], "limit": 2, "queues": None},
    "running_by_limit_key": {"kind": "charge"},
    "pick_in_queue": {"kind": "charge", "queue": "bulk", "limit": 200, "offset": 0},
    "running_in_queue": {"queue": "bulk"},
    "claim_fair_heads": {
        "kind": "charge",
        "priority": 0,
        "fair_keys": KEYS[:8],
        "chunk": 8,
        "after": -1,
        "limit": 2,
        "queues": None,
        "runner_id": "runner-a",
    },
    "claim_within_limit": {
        "kind": "charge",
        "n": 4,
        "limit": 2,
        "room_of": "keyed",
        "page": 10,
        "rate_n": None,
        "kept": None,
        "latest": None,
        "since": None,
        "queues": None,
        "runner_id": "runner-a",
    },
}
for _name in (  # each queue on its own
    "pick_limited",
    "claim_fair_heads",
    "claim_within_limit",
    "fair_priority",
    "fair_heads",
    "limit_heads",
):
    STATEMENTS[f"{_name}_by_queue"] = STATEMENTS[_name]
CLAIMS = (
    "claim_fair_heads",
    "claim_within_limit",
    "claim_fair_heads_by_queue",
    "claim_within_limit_by_queue",
)
"""Statements that write: each runs in a transaction rolled back."""
INDEXES = {
    "fair_heads": ("jobs_fair",),
    "fair_priority": ("jobs_ready",),
    "pick_limited_by_queue": ("jobs_ready_in_queue",),
    "claim_fair_heads_by_queue": ("jobs_fair_in_queue",),
    "claim_within_limit_by_queue": ("jobs_ready_in_queue",),
    "fair_priority_by_queue": ("jobs_ready_in_queue",),
    "fair_heads_by_queue": ("jobs_fair_in_queue",),
    "limit_heads_by_queue": ("jobs_limit_keys_in_queue",),
    "fair_keys": ("jobs_fair", "jobs_fair_in_queue"),  # a loose scan: either holds the keys
    "pick_limited": ("jobs_ready",),
    "limit_keys": ("jobs_limit_keys", "jobs_limit_keys_in_queue"),
    "limit_heads": ("jobs_limit_keys",),  # PostgreSQL's; SQLite's in SQLITE_INDEXES
    "running_by_limit_key": ("jobs_running_limits", "jobs_running"),  # running rows only
    "pick_in_queue": ("jobs_ready_in_queue",),
    "running_in_queue": ("jobs_running", "jobs_running_limits"),  # running rows only
    "claim_fair_heads": ("jobs_fair",),
    "claim_within_limit": ("jobs_ready",),
}
SQLITE_INDEXES = {
    **INDEXES,
    "limit_heads": ("jobs_limit_keys_in_queue",),  # its one keyed index (migration 0021)
}
INSERT = (
    "INSERT INTO jobs (id, kind, queue, status, fair_key, priority, run_at, payload,"
    " created_at, updated_at, limit_key) VALUES ({}, '{{}}', 'c', 'u', ?5)"
)


def _names(index: str, plan: str) -> bool:
    """Whether ``plan`` reads ``index`` (the whole name: jobs_ready is not jobs_ready_in_queue)."""
    return re.search(rf"\b{index}\b", plan) is not None


def parameters(engine: Any, name: str) -> dict[str, Any]:
    params = dict(STATEMENTS[name])
    for names in ("fair_keys", "queues", "limit_keys", "full"):
        if names in params:
            params[names] = engine.names(params[names])
    if name in CLAIMS:
        params["now"] = engine.stamp(FakeClock().now())
    return params


@pytest.fixture(scope="module")
def sqlite_store(tmp_path_factory) -> Iterator[tuple[SqliteStore, sqlite3.Connection]]:
    path = tmp_path_factory.mktemp("limit-plans") / "jobs.db"
    store = SqliteStore.open(path, now=FakeClock().now())
    conn = sqlite3.connect(path)
    conn.executemany(INSERT.format(", ".join("?" * 7)), rows(spread=False))
    conn.commit()
    conn.execute("ANALYZE")  # statistics that saw one key hold the backlog
    conn.executemany(INSERT.format(", ".join("?" * 7)), rows(spread=True))
    conn.commit()
    yield store, conn
    conn.close()
    store.close()


POSTGRES_ONLY = ("claim_within_limit", "claim_within_limit_by_queue")
"""Sent with a kind's lock to save round trips; SQLite counts the slots first instead."""


@pytest.mark.parametrize("name", [name for name in STATEMENTS if name not in POSTGRES_ONLY])
def test_sqlite_reads_index_ranges(sqlite_store, name):
    store, conn = sqlite_store
    engine = store._engine
    sql = engine.sql(name)
    params = parameters(engine, name)
    plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params)]
    reads = [step for step in plan if step.startswith(("SCAN", "SEARCH"))]
    on_jobs = [step for step in reads if step.split()[1] in ("jobs", "j")]
    assert on_jobs, plan
    assert not any(step.startswith("SCAN") and "INDEX" not in step for step in on_jobs), plan
    assert any(_names(index, step) for step in on_jobs for index in SQLITE_INDEXES[name]), plan
    conn.execute(sql, params).fetchall()  # it runs as planned
    conn.rollback()


@pytest.fixture(scope="module")
def postgres_store():
    import psycopg

    from jobtable.adapters.postgres import PostgresStore

    with fresh_schema() as (url, schema):
        store = PostgresStore.open(url, now=FakeClock().now(), schema=schema)
        with psycopg.connect(url, options=f"-c search_path={schema}", autocommit=True) as conn:
            columns = "id, kind, queue, status, fair_key, priority, run_at, payload, created_at,"
            for spread in (False, True):
                copying = f"COPY jobs ({columns} updated_at, limit_key) FROM STDIN"
                with conn.cursor().copy(copying) as copy:
                    for row in rows(spread=spread):  # the fair key is the limit key too
                        copy.write_row((*row, "{}", "2026-01-01Z", "2026-01-01Z", row[4]))
                if not spread:
                    conn.execute("ANALYZE jobs")  # statistics that saw one key hold the backlog
            try:
                yield store
            finally:
                store.close()


@pytest.mark.parametrize("name", list(STATEMENTS))
def test_postgres_reads_index_ranges(postgres_store, name):
    engine = postgres_store._engine
    sql = engine.sql(name)
    params = parameters(engine, name)

    def explain(conn: Any) -> str:
        return "\n".join(row[0] for row in conn.execute("EXPLAIN " + sql, params).fetchall())

    plan = engine.read(explain)
    assert "Seq Scan on jobs" not in plan, plan
    assert any(_names(index, plan) for index in INDEXES[name]), plan


@pytest.mark.parametrize("each_queue", [False, True], ids=["across queues", "each queue"])
@pytest.mark.parametrize(
    ("room_of", "rated"), [("limit", False), ("keyed", False), (None, True), ("keyed", True)]
)
def test_postgres_claims_within_a_limit_read_index_ranges_in_the_plan_kept_for_their_text(
    postgres_store, room_of, rated, each_queue
):
    """The claim as the store writes it (its page and branches in the text), planned once
    without its values (the plan PostgreSQL keeps for a text and runs claim after claim):
    it reads jobs_ready's range (each queue: jobs_ready_in_queue's), never all of jobs.
    (That the server keeps that plan, test_claim_plan_cache.py shows.)"""
    import psycopg

    from jobtable.adapters.sql.claim_within_limit import claim_text

    engine = postgres_store._engine
    query, page = claim_text(
        engine, 2, room_of, rated=rated, every_queue=True, each_queue=each_queue
    )
    stamp = engine.stamp(FakeClock().now())
    params = {
        **parameters(engine, "claim_within_limit"),
        "room_of": room_of,
        "page": page,
        **({"rate_n": 1000, "kept": 0, "latest": stamp, "since": stamp} if rated else {}),
    }
    names = list(dict.fromkeys(re.findall(r"%\((\w+)\)s", query)))
    numbered = re.sub(r"%\((\w+)\)s", lambda found: f"${names.index(found[1]) + 1}", query)

    def explain(conn: Any) -> str:
        conn.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        conn.execute("PREPARE kept_claim AS " + numbered)
        try:
            arguments = ", ".join(f"%({name})s" for name in names)
            explained = psycopg.ClientCursor(conn).execute(
                f"EXPLAIN EXECUTE kept_claim({arguments})", params
            )
            return "\n".join(row[0] for row in explained.fetchall())
        finally:
            conn.rollback()  # a failed EXPLAIN leaves the transaction unable to deallocate
            conn.execute("DEALLOCATE kept_claim")  # outlives the transaction, on a pooled session

    plan = engine.read(explain)
    name = "claim_within_limit_by_queue" if each_queue else "claim_within_limit"
    assert "Seq Scan on jobs" not in plan, plan
    assert any(_names(index, plan) for index in INDEXES[name]), plan


TURNS = 20_000
"""Keys a fair kind had turns for over its life (jobtable_fair_turns keeps each one's row)."""

TURN_READS = {
    "claim_fair_heads": "jobtable_fair_turns_by_turn",  # its kind's last turn
    "claim_fair_heads_by_queue": "jobtable_fair_turns_by_turn",
    "fair_last_turn": "jobtable_fair_turns_by_turn",
    "fair_turns": "fair_key",  # the listed keys' turns: a seek each (kind and key)
}


def _turn_parameters(engine: Any, name: str) -> dict[str, Any]:
    if name in STATEMENTS:
        return parameters(engine, name)
    return {"kind": "charge", "fair_keys": engine.names(KEYS[:8])}


def _turn_rows() -> Iterator[tuple[str, str, int]]:
    return (("charge", f"tenant-{number}", number + 1) for number in range(TURNS))


@pytest.mark.parametrize("name", list(TURN_READS))
def test_sqlite_fair_turns_are_read_by_seeks_however_many_keys_the_kind_had(tmp_path, name):
    """A fair claim numbers its turns on from the kind's last, read from the end of
    jobtable_fair_turns_by_turn (migration 0022), and orders the keys it listed by their
    turns, a seek each: never through every key the kind ever had."""
    store = SqliteStore.open(tmp_path / "jobs.db", now=FakeClock().now())
    conn = sqlite3.connect(tmp_path / "jobs.db")
    try:
        conn.executemany("INSERT INTO jobtable_fair_turns VALUES (?, ?, ?)", _turn_rows())
        conn.commit()
        engine = store._engine
        for analyzed in (False, True):  # with no statistics yet, then with them
            if analyzed:
                conn.execute("ANALYZE")
            explained = conn.execute(
                "EXPLAIN QUERY PLAN " + engine.sql(name), _turn_parameters(engine, name)
            )
            plan = [row[3] for row in explained]
            turns = [step for step in plan if re.search(r"jobtable_fair_turns\b|\bt USING", step)]
            assert turns, plan
            assert any(TURN_READS[name] in step for step in turns), (analyzed, plan)
    finally:
        conn.close()
        store.close()


def _turns_read_by_key(plan: str) -> bool:
    """Whether each read of jobtable_fair_turns in ``plan`` seeks a key (its condition names
    fair_key), but the kind's last turn (read backwards from the end of its index)."""
    lines = plan.splitlines()
    for number, line in enumerate(lines):
        if "on jobtable_fair_turns" not in line or "Backward" in line:
            continue
        if "Seq Scan" in line:
            return False
        conditions = itertools.takewhile(lambda text: "->" not in text, lines[number + 1 :])
        if not any("Cond:" in text and "fair_key" in text for text in conditions):
            return False
    return True


def test_postgres_fair_turns_are_read_by_seeks_however_many_keys_the_kind_had():
    """Before and after the turns' statistics, a few keys looked up: never a read (a scan,
    a hash) of every key the kind ever had. (Thousands of keys looked up, the planner may
    hash the kind's turns instead, and that was faster: 10,000 keys waiting, a claim took
    13 ms that way against 207 ms with a seek per key forced; bench/README.md.)"""
    keys = 8
    import psycopg

    from jobtable.adapters.postgres import PostgresStore

    listed = [f"tenant-{number}" for number in range(0, 2 * keys, 2)]
    with fresh_schema() as (url, schema):
        store = PostgresStore.open(url, now=FakeClock().now(), schema=schema)
        try:
            with psycopg.connect(url, options=f"-c search_path={schema}", autocommit=True) as conn:
                with conn.cursor().copy("COPY jobtable_fair_turns FROM STDIN") as copy:
                    for row in _turn_rows():
                        copy.write_row(row)
                engine = store._engine
                for analyzed in (False, True):
                    if analyzed:
                        conn.execute("ANALYZE jobtable_fair_turns")
                    for name, read in TURN_READS.items():
                        params = {**_turn_parameters(engine, name), "fair_keys": listed}
                        explained = conn.execute("EXPLAIN " + engine.sql(name), params)
                        plan = "\n".join(row[0] for row in explained.fetchall())
                        assert _turns_read_by_key(plan), (analyzed, name, plan)
                        if read != "fair_key":
                            assert read in plan, (analyzed, name, plan)
        finally:
            store.close()


@pytest.mark.parametrize("name", ["claim_fair_heads", "claim_fair_heads_by_queue"])
def test_postgres_fair_claims_mark_their_rows_by_id_on_a_table_younger_than_its_statistics(
    name,
):
    """On a table filled since its last ANALYZE (a burst of jobs, a fresh database), the fair
    claim's update found its few rows through jobtable's partial index of queued jobs, read
    whole (6,000 queued jobs: 1.3 ms a claim, not 0.4): it goes by primary key."""
    import psycopg

    from jobtable.adapters.postgres import PostgresStore

    with fresh_schema() as (url, schema):
        store = PostgresStore.open(url, now=FakeClock().now(), schema=schema)
        try:
            with psycopg.connect(url, options=f"-c search_path={schema}", autocommit=True) as conn:
                columns = "id, kind, queue, status, fair_key, priority, run_at, payload"
                with conn.cursor().copy(
                    f"COPY jobs ({columns}, created_at, updated_at) FROM STDIN"
                ) as copy:
                    for number in range(6_000):
                        copy.write_row((f"job-{number:05}", "charge", "c", "queued", f"t{number % 100}",
                                        0, "2026-01-01Z", "{}", "2026-01-01Z", "2026-01-01Z"))  # fmt: skip
                engine = store._engine
                params = {**parameters(engine, name), "fair_keys": [f"t{n}" for n in range(100)]}
                for mode in ("auto", "force_generic_plan"):
                    conn.execute(f"SET plan_cache_mode = {mode}")
                    explained = conn.execute("EXPLAIN " + engine.sql(name), params)
                    plan = "\n".join(row[0] for row in explained.fetchall())
                    marked = plan[plan.rindex(" on jobs  (") :]  # the update's way to its rows
                    assert "Index Cond: (id = ANY" in marked, (mode, plan)
                    assert "jobs_ready" not in marked, (mode, plan)
        finally:
            store.close()
