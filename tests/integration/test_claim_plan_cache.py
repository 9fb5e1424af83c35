"""On PostgreSQL a claim within a limit or a rate is planned once per session and text, not
each claim, once the jobs table has statistics (as autovacuum takes them).

PostgreSQL plans a prepared statement's text once, without its parameters' values, and
runs that plan, unless plans for the values (five tried) look cheaper. The claim's page, a
parameter, it guessed at a tenth of the table, and the branches its parameters choose
(what the claim counts) it kept: once the table was analyzed, that plan looked dearer, and
every claim was planned again (0.3 to 0.7 ms, more than it ran). The claim writes them in
its text (claim_within_limit.py). Counted by the server: pg_prepared_statements.
"""

from __future__ import annotations

from typing import Any

import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.core.batch import Batch
from jobtable.core.limits import RateLimit, RunningLimit
from jobtable.core.outcome import Succeed
from tests.support.postgres import fresh_schema

JOBS = 3_000
CLAIMS = 24
"""Batches each claiming 3: psycopg prepares a statement at its fifth run, and PostgreSQL
tries five plans for the values before it weighs its one plan against them."""

MODES: dict[str, dict[str, Any]] = {
    "limit": {"limits": {"work": RunningLimit(n=1000, keyed=False)}},
    "keyed": {"limits": {"work": RunningLimit(n=1000, keyed=True)}},
    "rate": {"rates": {"work": RateLimit(n=1_000_000, per=60.0, keyed=False)}},
    "keyed and rate": {
        "limits": {"work": RunningLimit(n=1000, keyed=True)},
        "rates": {"work": RateLimit(n=1_000_000, per=60.0, keyed=False)},
    },
}


@pytest.mark.parametrize("mode", list(MODES))
def test_postgres_plans_a_claim_within_a_limit_once_on_an_analyzed_table(mode):
    import psycopg

    from jobtable.adapters.postgres import PostgresStore

    clock = FakeClock()
    with fresh_schema() as (url, schema):
        store = PostgresStore.open(url, now=clock.now(), schema=schema, pool_size=1)
        try:
            with psycopg.connect(url, options=f"-c search_path={schema}", autocommit=True) as conn:
                with conn.cursor().copy(
                    "COPY jobs (id, kind, queue, status, limit_key, priority, run_at, payload,"
                    " created_at, updated_at) FROM STDIN"
                ) as copy:
                    for number in range(JOBS):
                        copy.write_row((f"job-{number:05}", "work", "default", "queued",
                                        f"t{number % 100}", 0, "2026-01-01Z", "{}",
                                        "2026-01-01Z", "2026-01-01Z"))  # fmt: skip
                conn.execute("ANALYZE")
            handed: list[Any] = []
            claimed = 0
            for _ in range(CLAIMS):
                clock.advance(0.001)
                batch = Batch(
                    outcomes=[(claim, Succeed(result="{}")) for claim in handed],
                    claim=3,
                    clock=clock.now,
                    durable=False,
                    **MODES[mode],
                )
                done = store.run_batch(batch, runner_id="r", now=clock.now(), kinds=["work"])
                handed = [job.claim for job in done.claimed]
                claimed += len(handed)
            assert claimed == 3 * CLAIMS

            def plans(conn: Any) -> list[tuple[int, int]]:
                listed = conn.execute(
                    "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
                    " WHERE statement LIKE %s",
                    ("%WITH due AS MATERIALIZED%",),
                )
                return [(int(generic), int(custom)) for generic, custom in listed.fetchall()]

            counted = store._engine.read(plans)
        finally:
            store.close()
    assert counted, "the claim within the limit was never prepared"
    for generic, custom in counted:
        assert custom <= 5, counted  # the five plans for values, then its one plan
        assert generic >= CLAIMS - 15, counted
