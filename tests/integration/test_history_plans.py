"""PostgreSQL's history trigger numbers a job's change by a seek in job_events' primary key,
however small job_events was when the session planned it.

The trigger (migration 0006) reads the job's last version, max(version) of its rows. A
plan made while the table was small (analyzed so, as autovacuum does on a young database)
scanned the whole table, and the session kept that plan as the table grew: each start and
outcome read every job's history. The plan is read where it runs, inside the trigger,
through auto_explain's notices.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from jobtable.adapters.fake_clock import FakeClock
from tests.support.postgres import fresh_schema

JOBS = 40
GROWN = 20_000
"""History rows added after the session planned the trigger (other jobs' changes)."""


def _trigger_plans(conn: Any, notices: list[str], job_id: str) -> list[str]:
    """The plans of the history trigger's statement as one status change of ``job_id`` ran
    it (a row changed to running, then put back: the trigger fires for each)."""
    notices.clear()
    conn.execute("UPDATE jobs SET status = 'running' WHERE id = %s", (job_id,))
    conn.execute("UPDATE jobs SET status = 'queued' WHERE id = %s", (job_id,))
    return [notice for notice in notices if "Insert on job_events" in notice]


def test_postgres_history_numbers_a_change_by_a_seek_after_job_events_was_analyzed_small():
    import psycopg

    from jobtable.adapters.postgres import PostgresStore

    with fresh_schema() as (url, schema):
        store = PostgresStore.open(url, now=FakeClock().now(), schema=schema)
        try:
            with psycopg.connect(url, options=f"-c search_path={schema}", autocommit=True) as conn:
                try:
                    conn.execute("LOAD 'auto_explain'")
                except psycopg.Error:
                    pytest.skip("auto_explain (PostgreSQL's contrib) cannot be loaded here")
                notices: list[str] = []
                conn.add_notice_handler(lambda notice: notices.append(notice.message_primary))
                for setting, value in {
                    "log_min_duration": "0",
                    "log_nested_statements": "on",
                    "log_level": "notice",
                }.items():
                    conn.execute(f"SET auto_explain.{setting} = {value}")
                with conn.cursor().copy(
                    "COPY jobs (id, kind, queue, status, priority, run_at, payload, created_at,"
                    " updated_at) FROM STDIN"
                ) as copy:
                    for number in range(JOBS):
                        copy.write_row((f"job-{number:03}", "charge", "default", "queued", 0,
                                        "2026-01-01Z", "{}", "2026-01-01Z", "2026-01-01Z"))  # fmt: skip
                for number in range(JOBS // 2):  # a small history, analyzed so
                    _trigger_plans(conn, notices, f"job-{number:03}")
                conn.execute("ANALYZE job_events")
                young = []
                for number in range(8):  # planned, and kept, while small
                    young += _trigger_plans(conn, notices, f"job-{JOBS // 2 + number:03}")
                conn.execute(
                    "INSERT INTO job_events (job_id, version, status)"
                    " SELECT 'other-' || (n / 4), n %% 4 + 1, 'queued'"
                    " FROM generate_series(0, %s) AS n",
                    (GROWN - 1,),
                )
                grown = _trigger_plans(conn, notices, f"job-{JOBS - 1:03}")
                assert young and grown, notices
                for plan in young + grown:
                    reads = re.findall(r"(\w[\w ]*Scan[\w ]*) on job_events", plan)
                    assert reads, plan
                    assert not any(read.startswith("Seq Scan") for read in reads), plan
                history = conn.execute(
                    "SELECT version, status FROM job_events WHERE job_id = %s ORDER BY version",
                    (f"job-{JOBS - 1:03}",),
                ).fetchall()
                assert history == [(1, "running"), (2, "queued")]
        finally:
            store.close()
