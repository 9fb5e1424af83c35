"""PostgreSQL migrations that change rows: times Python cannot hold made readable (0007), a
log grown by snoozes counted and trimmed (0008); an upgrade to 0010's indexes keeps lists,
counts and history."""

from __future__ import annotations

import datetime
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.migration_files import load_migrations
from jobtable.adapters.postgres import PostgresStore
from jobtable.adapters.postgres.migrate import migrate
from jobtable.core import Status
from jobtable.core.jobs import ATTEMPTS_KEPT, JobFilter
from tests.support.postgres import fresh_schema

NOW = FakeClock().now()
CREATED = datetime.datetime(2026, 3, 1, 12, 0, tzinfo=datetime.UTC)


@contextmanager
def schema_until(last: str) -> Iterator[tuple[str, str, psycopg.Connection]]:
    """A fresh schema whose migrations stop at ``last``, as an older version left it."""
    with fresh_schema() as (url, schema):
        options = f"-c search_path={schema}"
        with psycopg.connect(url, options=options, autocommit=True) as conn:
            steps = [step for step in load_migrations("postgres") if step.version <= last]
            migrate(conn, now=NOW, migrations=steps)
            yield url, schema, conn


def insert_job(conn: psycopg.Connection, job_id: str, *, status: str = "queued", **times) -> None:
    values = {"created_at": CREATED, "run_at": CREATED, "started_at": None, "finished_at": None}
    conn.execute(
        "INSERT INTO jobs (id, kind, status, payload, created_at, updated_at, run_at,"
        " started_at, finished_at) VALUES (%(id)s, 'count', %(status)s, '{}', %(created_at)s,"
        " %(created_at)s, %(run_at)s, %(started_at)s, %(finished_at)s)",
        {**values, **times, "id": job_id, "status": status},
    )


def test_times_python_cannot_hold_are_made_readable_and_counted(caplog):
    caplog.set_level(logging.WARNING, logger="jobtable.migrate")
    with schema_until("0006_batched_history") as (url, schema, conn):
        insert_job(conn, "ours")
        insert_job(conn, "long-ago", run_at="-infinity")
        insert_job(conn, "never", status="scheduled", run_at="infinity")
        insert_job(conn, "odd", status="failed", created_at="infinity", finished_at="infinity")
        insert_job(conn, "started", status="running", started_at="20000-01-01 00:00+00")

        store = PostgresStore.open(url, now=NOW, schema=schema)
        try:
            repaired = [r.getMessage() for r in caplog.records if r.name == "jobtable.migrate"]
            assert repaired == ["migration repaired rows version=0007_readable_times rows=4"]
            assert store.detail("ours").run_at == CREATED
            assert store.detail("long-ago").run_at == CREATED  # due since its creation
            never = store.detail("never")
            assert never.run_at.year == 9999  # put off for ever: it still waits
            odd = store.detail("odd")
            assert odd.created_at == odd.finished_at  # both the migration's time
            assert store.detail("started").started_at is None
            assert store.next_due() == never.run_at
            claimed = [store.claim_next(runner_id="r", now=NOW) for _ in range(3)]
            assert [job.id for job in claimed[:2]] == ["long-ago", "ours"]  # in id order
            assert claimed[2] is None
        finally:
            store.close()


def test_a_log_grown_by_snoozes_is_counted_and_trimmed_to_the_last_20():
    with schema_until("0007_readable_times") as (url, schema, conn):
        insert_job(conn, "snoozer")
        entries = [
            {"attempt": 1, "runner": "r", "started_at": None, "ended_at": None, "outcome": outcome}
            for outcome in ["snoozed"] * 30 + ["boom"]
        ]
        conn.execute("UPDATE jobs SET attempts_log = %s::jsonb", (json.dumps(entries),))

        store = PostgresStore.open(url, now=NOW, schema=schema)
        try:
            log = store.row("snoozer")["attempts_log"]
            assert [entry["outcome"] for entry in log] == ["snoozed"] * 19 + ["boom"]
            assert len(log) == ATTEMPTS_KEPT
            assert store.detail("snoozer").snoozes == 30
        finally:
            store.close()


def test_a_schema_upgraded_to_0010_keeps_its_lists_counts_and_history():
    """0010 rebuilds the list indexes without running jobs: what the old schema recorded
    still lists, counts and reads, and a change after it (an operator's plain UPDATE too)
    goes on numbering the same history."""
    with fresh_schema() as (url, schema):
        options = f"-c search_path={schema}"
        with psycopg.connect(url, options=options, autocommit=True) as conn:
            steps = [s for s in load_migrations("postgres") if s.version < "0010_cheap_rows"]
            migrate(conn, now=NOW, migrations=steps)  # as issue 19's release left it
            for job_id in ("a-done", "b-busy", "c-wait"):
                insert_job(conn, job_id)
            conn.execute("UPDATE jobs SET status = 'running' WHERE id IN ('a-done', 'b-busy')")
            conn.execute("UPDATE jobs SET status = 'succeeded', result = '1' WHERE id = 'a-done'")

        store = PostgresStore.open(url, now=NOW, schema=schema)
        try:
            assert store.applied_at_open == [
                "0010_cheap_rows",
                "0011_claimed_ahead",
                "0012_limits",
                "0013_queue_limits",
                "0014_error_class_and_trace",
                "0015_schedule_listing",
                "0016_failed_by_queue",
                "0017_minutes",
                "0018_limit_keys",
                "0019_ready_in_queue",
                "0020_keys_by_queue",
                "0021_one_limit_key_index",
                "0022_fair_turns_by_turn",
                "0023_history_by_index",
            ]
            listed = {
                status: [
                    j.id for j in store.list_jobs(JobFilter(status=status), limit=9, after=None)
                ]
                for status in Status
            }
            assert listed == {
                Status.QUEUED: ["c-wait"],
                Status.RUNNING: ["b-busy"],
                Status.SUCCEEDED: ["a-done"],
                Status.FAILED: [],
            }
            everything = store.list_jobs(JobFilter(kind="count"), limit=10, after=None)
            assert [job.id for job in everything] == ["c-wait", "b-busy", "a-done"]
            (queue,) = store.queues()
            counts = queue.counts
            assert (counts["queued"], counts["running"], counts["succeeded"]) == (1, 1, 1)
            assert sorted((c.status, c.count) for c in store.job_counts()) == [
                ("queued", 1),
                ("running", 1),
            ]
            history = store.events("a-done", after=0).events
            assert [(e.version, e.job.status) for e in history] == [
                (1, Status.RUNNING),
                (2, Status.SUCCEEDED),
            ]
            with psycopg.connect(url, autocommit=True) as operator:  # another search_path
                operator.execute(
                    f"UPDATE {schema}.jobs SET status = 'failed', error = 'by_hand'"
                    " WHERE id = 'b-busy'"
                )
            changes = store.events("b-busy", after=1).events
            assert [(e.version, e.job.status) for e in changes] == [(2, Status.FAILED)]
            failed = store.list_jobs(JobFilter(status=Status.FAILED), limit=10, after=None)
            assert [job.id for job in failed] == ["b-busy"]
        finally:
            store.close()
