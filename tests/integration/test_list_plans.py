"""A page of a job list comes from index ranges on both engines, whatever the filters: the
plans are shown here, on tables deep enough that a planner would rather scan if it could
(issue 11: "a filtered page from a table of 1,000,000 jobs answers in milliseconds")."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.sql.listing import list_statement
from jobtable.adapters.sqlite import SqliteStore
from jobtable.core import Status
from jobtable.core.jobs import JobFilter
from tests.support.postgres import fresh_schema

ROWS = 30_000
STATUSES = ("succeeded",) * 20 + ("failed", "queued", "scheduled", "running")
FILTERS = [
    JobFilter(),
    JobFilter(status=Status.FAILED),
    JobFilter(status=Status.QUEUED),
    JobFilter(kind="mail"),
    JobFilter(queue="bulk"),
    JobFilter(status=Status.SUCCEEDED, kind="mail"),
    JobFilter(status=Status.FAILED, queue="bulk"),
    JobFilter(status=Status.RUNNING, kind="mail", queue="bulk"),
]
AFTER = "5" * 8  # a cursor inside the table, as a second page has


KINDS = ("mail", "report", "resize", "sync", "bill")
QUEUES = ("default", "bulk", "default")


def rows() -> Iterator[tuple[str, str, str, str]]:
    for number in range(ROWS):
        status = STATUSES[number % len(STATUSES)]
        yield f"{number:08x}", KINDS[number % 5], QUEUES[number // 7 % 3], status


@pytest.fixture(scope="module")
def sqlite_jobs(tmp_path_factory) -> Iterator[sqlite3.Connection]:
    path = tmp_path_factory.mktemp("plans") / "jobs.db"
    SqliteStore.open(path, now=FakeClock().now()).close()
    conn = sqlite3.connect(path)
    conn.executemany(
        "INSERT INTO jobs (id, kind, queue, status, payload, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, '{}', 'c', 'u')",
        rows(),
    )
    conn.commit()
    conn.execute("ANALYZE")
    yield conn
    conn.close()


@pytest.mark.parametrize("which", FILTERS, ids=repr)
@pytest.mark.parametrize("after", [None, AFTER])
def test_sqlite_reads_a_page_from_index_ranges(sqlite_jobs, which, after):
    sql, params = list_statement(which, limit=51, after=after, placeholder=lambda n: f":{n}")
    plan = [row[3] for row in sqlite_jobs.execute("EXPLAIN QUERY PLAN " + sql, params)]
    reads = [step for step in plan if step.startswith(("SCAN", "SEARCH"))]
    assert reads, plan
    for step in reads:
        if step.startswith("SCAN jobs USING INDEX jobs_running"):
            # Running jobs are left out of the list indexes (migration 0010): their branch
            # walks jobs_running in id order; they are few, one per busy worker.
            assert which.status in (None, Status.RUNNING), plan
        elif step.startswith("SCAN jobs"):
            # Only the unfiltered list may walk the table, and only in id order (the
            # primary key's index), stopping after one page.
            assert which == JobFilter() and "INDEX" in step, plan
        elif step.startswith("SEARCH jobs"):
            by_index = (
                "USING INDEX jobs_by_",
                "USING INDEX jobs_running (",
                "sqlite_autoindex_jobs",
            )
            assert any(index in step for index in by_index), plan
    assert not any("TEMP B-TREE" in step and "branch" not in step for step in plan[:1]), plan
    found = sqlite_jobs.execute(sql, params).fetchall()
    assert 0 < len(found) <= 51


@pytest.fixture(scope="module")
def postgres_jobs():
    import psycopg

    with fresh_schema() as (url, schema):
        from jobtable.adapters.postgres import PostgresStore

        PostgresStore.open(url, now=FakeClock().now(), schema=schema).close()
        with psycopg.connect(url, options=f"-c search_path={schema}", autocommit=True) as conn:
            with conn.cursor().copy(
                "COPY jobs (id, kind, queue, status, payload, created_at, updated_at) FROM STDIN"
            ) as copy:
                for row in rows():
                    copy.write_row((*row, "{}", "2026-01-01Z", "2026-01-01Z"))
            conn.execute("ANALYZE jobs")
            yield conn


@pytest.mark.parametrize("which", FILTERS, ids=repr)
@pytest.mark.parametrize("after", [None, AFTER])
def test_postgres_reads_a_page_from_index_ranges(postgres_jobs, which, after):
    sql, params = list_statement(which, limit=51, after=after, placeholder=lambda n: f"%({n})s")
    plan = "\n".join(row[0] for row in postgres_jobs.execute(("EXPLAIN " + sql).encode(), params))
    assert "Seq Scan" not in plan, plan
    assert "Index" in plan, plan
    assert "Sort" not in plan or "Merge Append" in plan or "Limit" in plan.split("Sort")[0], plan
    found = postgres_jobs.execute(sql.encode(), params).fetchall()
    assert 0 < len(found) <= 51
