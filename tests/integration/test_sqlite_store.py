"""What is particular to the SQLite store: pragmas, the claim's index, errors, fork."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import stat

import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.sqlite import SqliteStore
from jobtable.adapters.sqlite.connections import Connections
from jobtable.adapters.sqlite.store import _CLAIM
from jobtable.core import NewJob, Status, StoreError, StoreUnavailableError
from jobtable.core.ids import JobIdGenerator

NOW = FakeClock().now()
IDS = JobIdGenerator()


def new_job(kind: str = "count") -> NewJob:
    return NewJob(id=IDS.next_id(1_772_366_400_000), kind=kind, payload="{}")


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "jobs.db"


@pytest.fixture
def store(db_path):
    opened = SqliteStore.open(db_path, now=NOW)
    yield opened
    opened.close()


def pragma(path, name: str):
    conn = sqlite3.connect(path)
    try:
        return conn.execute(f"PRAGMA {name}").fetchone()[0]
    finally:
        conn.close()


def test_the_database_is_in_wal_mode(store, db_path):
    store.create(new_job(), now=NOW)
    assert pragma(db_path, "journal_mode") == "wal"


@pytest.mark.parametrize(("mode", "level"), [("full", 2), ("normal", 1)])
def test_synchronous_is_full_by_default_and_normal_is_selectable(db_path, mode, level):
    connections = Connections(str(db_path), synchronous=mode)
    with connections.writer() as conn:
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == level
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
    assert connections.reader().execute("PRAGMA synchronous").fetchone()[0] == level
    connections.close()
    assert Connections(str(db_path)).synchronous == "full"


def test_an_unknown_synchronous_mode_is_refused(db_path):
    with pytest.raises(ValueError, match="full, normal"):
        Connections(str(db_path), synchronous="off")


def test_the_claim_reads_the_partial_index_on_queued_jobs(store, db_path):
    conn = sqlite3.connect(db_path)
    plan = conn.execute("EXPLAIN QUERY PLAN " + _CLAIM, {"now": "x", "runner_id": "r"}).fetchall()
    conn.close()
    details = [row[-1] for row in plan]
    assert "SCAN jobs USING INDEX jobs_queued" in details, details
    assert "SCAN jobs" not in details, details  # never the whole table


def test_readers_are_apart_from_the_writer(db_path):
    connections = Connections(str(db_path))
    with connections.writer() as writer:
        reader = connections.reader()
        assert reader is not writer
        assert reader.execute("PRAGMA query_only").fetchone()[0] == 1
    connections.close()


def test_a_write_waits_for_the_lock_then_reports_it_locked(db_path):
    store = SqliteStore.open(db_path, now=NOW, busy_timeout_ms=100)
    other = sqlite3.connect(db_path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreUnavailableError) as raised:
            store.create(new_job(), now=NOW)
        assert raised.value.category == "database locked"
    finally:
        other.execute("ROLLBACK")
        other.close()
    job = new_job()
    store.create(job, now=NOW)  # the lock is free again: nothing was half-written
    assert store.get(job.id).status is Status.QUEUED
    store.close()


def test_a_database_that_cannot_be_opened_is_unavailable(tmp_path):
    with pytest.raises(StoreError) as raised:
        SqliteStore.open(tmp_path / "missing-dir" / "jobs.db", now=NOW)
    assert raised.value.category == "database unavailable"


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write a read-only directory")
def test_a_database_in_a_read_only_directory_is_unavailable(tmp_path):
    tmp_path.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        with pytest.raises(StoreError):
            SqliteStore.open(tmp_path / "jobs.db", now=NOW)
    finally:
        tmp_path.chmod(stat.S_IRWXU)


def test_a_file_that_is_not_a_database_is_unavailable(tmp_path):
    path = tmp_path / "jobs.db"
    path.write_bytes(b"this is not an sqlite database" * 100)
    with pytest.raises(StoreError) as raised:
        SqliteStore.open(path, now=NOW)
    assert raised.value.category == "database unavailable"


def _child_enqueues(store: SqliteStore, job: NewJob, parent_writer_id: int, out) -> None:
    try:
        store.create(job, now=NOW)
        with store._db.writer() as conn:
            out.put(("ok", id(conn) != parent_writer_id))
    except Exception as error:  # report to the parent, which fails the test
        out.put(("error", type(error).__name__))


def test_no_connection_is_carried_across_fork(store):
    store.create(new_job(), now=NOW)
    with store._db.writer() as conn:
        parent_writer = id(conn)
    context = multiprocessing.get_context("fork")
    out = context.Queue()
    job = new_job()
    child = context.Process(target=_child_enqueues, args=(store, job, parent_writer, out))
    child.start()
    child.join(30)
    assert out.get(timeout=5) == ("ok", True)
    assert store.get(job.id).status is Status.QUEUED  # the parent's connections still work
    later = new_job()
    store.create(later, now=NOW)
    assert store.get(later.id) is not None


def test_closed_store_refuses_use(db_path):
    store = SqliteStore.open(db_path, now=NOW)
    store.close()
    with pytest.raises(StoreError):
        store.create(new_job(), now=NOW)
    store.close()  # idempotent


def test_a_removed_liveness_file_is_locked_again_when_the_runner_confirms_it(tmp_path):
    from jobtable.core import NewJob, Status

    store = SqliteStore.open(tmp_path / "jobs.db", now=FakeClock().now())
    try:
        store.hold_liveness("runner-a")
        store.create(NewJob(id="job-a", kind="noop", payload="{}"), now=FakeClock().now())
        store.claim_next(runner_id="runner-a", now=FakeClock().now())
        (tmp_path / "jobs.db.runners" / "runner-a.lock").unlink()
        store.hold_liveness("runner-a")
        assert (tmp_path / "jobs.db.runners" / "runner-a.lock").exists()
        assert store.recover_orphans(code="x", max_attempts={}, now=FakeClock().now()).failed == 0
        assert store.get("job-a").status is Status.RUNNING
    finally:
        store.close()
