"""What is particular to the SQLite store: pragmas, the claim's index, errors, fork."""

from __future__ import annotations

import datetime
import multiprocessing
import os
import sqlite3
import stat
import zoneinfo

import attrs
import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.sqlite import SqliteStore
from jobtable.adapters.sqlite.connections import Connections
from jobtable.adapters.sqlite.engine import QUERIES
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
    with connections.reader() as reader:
        assert reader.execute("PRAGMA synchronous").fetchone()[0] == level
    connections.close()
    assert Connections(str(db_path)).synchronous == "full"


def test_a_store_opened_with_no_durability_setting_syncs_fully(db_path):
    store = SqliteStore.open(db_path, now=NOW)
    try:
        with store._db.writer() as conn:
            assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    finally:
        store.close()


def test_an_unknown_synchronous_mode_is_refused(db_path):
    with pytest.raises(ValueError, match="full, normal"):
        Connections(str(db_path), synchronous="off")


@pytest.mark.parametrize("queues", [None, '["mail", "reports"]'])
def test_the_claim_probes_each_kind_in_the_index_of_due_jobs(store, db_path, queues):
    """Per kind one search in claim order: rows of other kinds and scheduled rows are never
    read, so the claim costs the same at any depth (bench/claim_depth.py measures it)."""
    conn = sqlite3.connect(db_path)
    parameters = {
        "now": "x",
        "runner_id": "r",
        "kinds": '["count", "noop"]',
        "queues": queues,
        "limit": 8,
    }
    plan = conn.execute("EXPLAIN QUERY PLAN " + QUERIES["claim_next_job"], parameters).fetchall()
    conn.close()
    details = [row[-1] for row in plan]
    assert "SEARCH jobs USING INDEX jobs_ready (kind=?)" in details, details
    assert not any(detail.startswith("SCAN jobs") for detail in details), details


def test_readers_are_apart_from_the_writer(db_path):
    connections = Connections(str(db_path))
    with connections.writer() as writer, connections.reader() as reader:
        assert reader is not writer
        assert reader.execute("PRAGMA query_only").fetchone()[0] == 1
    connections.close()


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_descriptors_stay_bounded_however_many_threads_read(store):
    """A thread-per-request server runs a new thread per request: readers are pooled, not kept."""
    import threading

    job = new_job()
    store.create(job, now=NOW)
    store.get(job.id)
    before = open_descriptors()
    failures: list[BaseException] = []
    for _ in range(3000):
        thread = threading.Thread(target=lambda: failures.append(store.get(job.id) is None))
        thread.start()
        thread.join()
    assert failures == [False] * 3000
    assert open_descriptors() <= before + 2


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


def _open_as(uid: int | None, path) -> str:
    """Open a store at ``path`` (as ``uid`` in a forked child when given); what happened."""
    if uid is None:
        try:
            SqliteStore.open(path, now=NOW).close()
        except StoreError as error:
            return error.category
        return "opened"
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: drop root, try, report, and leave at once
        os.close(read)
        outcome = "setuid failed"
        try:
            os.setgid(uid)
            os.setuid(uid)
            outcome = _open_as(None, path)
        finally:
            os.write(write, outcome.encode())
            os._exit(0)
    os.close(write)
    os.waitpid(child, 0)
    with os.fdopen(read) as reader:
        return reader.read()


def test_a_database_in_a_read_only_directory_is_unavailable(tmp_path):
    """As root (CI) no mode bit stops a write: the attempt runs as nobody in a forked child."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(
        stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH
    )
    tmp_path.chmod(stat.S_IRWXU | stat.S_IXOTH | stat.S_IXGRP)  # nobody may pass through
    try:
        uid = 65534 if os.geteuid() == 0 else None
        assert _open_as(uid, folder / "jobs.db") == "database unavailable"
    finally:
        folder.chmod(stat.S_IRWXU)


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
    from jobtable.core import LockState
    from tests.contract.test_store_contract import runner_info, sighting

    store = SqliteStore.open(tmp_path / "jobs.db", now=NOW)
    try:
        store.register_runner(runner_info("runner-a"), now=NOW)
        (tmp_path / "jobs.db.runners" / "runner-a.lock").unlink()
        assert sighting(store, "runner-a").lock is LockState.ABSENT
        assert store.confirm_liveness("runner-a", timeout=1) is False
        assert (tmp_path / "jobs.db.runners" / "runner-a.lock").exists()
        assert sighting(store, "runner-a").lock is LockState.HELD
    finally:
        store.close()


def test_ending_an_attempt_finds_its_row_by_id(store, db_path):
    """Not by status among every running job: the end of a job costs the same however many run."""
    conn = sqlite3.connect(db_path)
    params = {"id": "j", "runner_id": "r", "attempt": 1, "status": "succeeded"}
    plan = conn.execute(
        "EXPLAIN QUERY PLAN " + QUERIES["end_attempt"],
        {**params, "result": "{}", "code": None, "error_class": None, "now": "x"},
    ).fetchall()
    conn.close()
    assert [row[-1] for row in plan] == ["SEARCH jobs USING INDEX sqlite_autoindex_jobs_1 (id=?)"]


def test_the_two_instants_a_wall_time_names_as_a_clock_goes_back_are_stored_apart(store, db_path):
    """01:30 in New York on 2026-11-01 is two instants (fold 0 and 1), equal as datetimes
    by wall time: each run_at is stored as its own instant, whichever is stamped first."""
    zone = zoneinfo.ZoneInfo("America/New_York")
    first = datetime.datetime(2026, 11, 1, 1, 30, tzinfo=zone)
    second = first.replace(fold=1)
    ids = []
    for run_at in (first, second, first):
        job = attrs.evolve(new_job(), run_at=run_at)
        store.create(job, now=NOW)
        ids.append(job.id)
    conn = sqlite3.connect(db_path)
    try:
        stored = [
            conn.execute("SELECT run_at FROM jobs WHERE id = ?", (job_id,)).fetchone()[0]
            for job_id in ids
        ]
    finally:
        conn.close()
    early, late = "2026-11-01T05:30:00.000000+00:00", "2026-11-01T06:30:00.000000+00:00"
    assert stored == [early, late, early]
