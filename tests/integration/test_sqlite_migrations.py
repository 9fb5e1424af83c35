"""Migrations on SQLite, including the reference's TestMigrateJobsStatusMapsLegacyRows."""

from __future__ import annotations

import datetime
import json
import logging
import sqlite3
import threading

import attrs
import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.migration_files import Migration, load_migrations
from jobtable.adapters.sqlite import SqliteStore
from jobtable.adapters.sqlite.connections import Connections
from jobtable.adapters.sqlite.migrate import applied_versions, migrate
from jobtable.core import NewJob, Status
from jobtable.core.jobs import ATTEMPTS_KEPT, JobFilter
from tests.support.harness import as_datetime

NOW = FakeClock().now()
ALL_VERSIONS = [
    "0001_jobs",
    "0002_jobs_status",
    "0003_runners",
    "0004_lifecycle",
    "0005_observe",
    "0006_batched_history",
    "0007_readable_times",
    "0008_snooze_count",
    "0009_unique_while_unfinished",
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

LEGACY_SCHEMA = """
CREATE TABLE jobs (
    id          TEXT NOT NULL PRIMARY KEY,
    kind        TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done', 'failed')),
    payload     TEXT NOT NULL,
    result      TEXT,
    error       TEXT,
    started_at  TEXT,
    finished_at TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
)
"""


def schema(path) -> list[tuple[str, str]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT name, sql FROM sqlite_master ORDER BY name").fetchall()
    finally:
        conn.close()


def versions(path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return applied_versions(conn)
    finally:
        conn.close()


def test_migration_files_share_numbers_and_names_in_order():
    assert [m.version for m in load_migrations("sqlite")] == ALL_VERSIONS


def test_a_new_database_gets_every_migration_once(tmp_path):
    path = tmp_path / "jobs.db"
    SqliteStore.open(path, now=NOW).close()
    assert versions(path) == ALL_VERSIONS
    before = schema(path)

    store = SqliteStore.open(path, now=NOW)
    assert store.migrate(now=NOW) == []  # re-applying changes nothing
    store.close()
    assert schema(path) == before
    assert versions(path) == ALL_VERSIONS


def test_a_keyed_limits_waiting_jobs_are_in_one_index_by_key_and_queue(tmp_path):
    """0021: SQLite writes a page of every key index for each keyed job a claim takes, so it
    keeps one (by kind, key and queue); a key's first jobs are read per key and queue."""
    path = tmp_path / "jobs.db"
    store = SqliteStore.open(path, now=NOW)
    try:
        assert "INDEXED BY jobs_limit_keys_in_queue" in store._engine.sql("limit_heads")
    finally:
        store.close()
    indexes = {name for name, _ in schema(path)}
    assert "jobs_limit_keys_in_queue" in indexes
    assert "jobs_limit_keys" not in indexes


def test_migrating_legacy_jobs_maps_statuses_and_keeps_every_column(tmp_path):
    path = tmp_path / "legacy.db"
    conn = sqlite3.connect(path)
    conn.execute(LEGACY_SCHEMA)
    legacy = {"pending": "queued", "running": "running", "done": "succeeded", "failed": "failed"}
    for old in legacy:
        conn.execute(
            "INSERT INTO jobs VALUES (?, 'suggest', ?, '{\"n\":1}', '{\"r\":2}', 'boom',"
            " 's', 'f', 'c', 'u')",
            (f"job-{old}", old),
        )
    conn.commit()
    conn.close()

    store = SqliteStore.open(path, now=NOW)
    for old, new in legacy.items():
        row = store.row(f"job-{old}")
        assert row["status"] == new, old
        kept = [row[c] for c in ("kind", "payload", "result", "error", "updated_at")]
        assert kept == ["suggest", '{"n":1}', '{"r":2}', "boom", "u"], old
        # Its times, which no reader could parse, are given readable ones (0007).
        assert row["started_at"] is None
        assert row["run_at"] == row["created_at"] == row["finished_at"]
        as_datetime(row["created_at"])
        assert store.get(f"job-{old}").status == Status(new)
        # Every row the reference started counts as the one attempt it was.
        assert (row["attempt"], row["max_attempts"]) == (0 if old == "pending" else 1, 1), old
    store.close()
    names = [name for name, _ in schema(path)]
    assert "jobs_new" not in names
    assert versions(path) == ALL_VERSIONS


@pytest.mark.parametrize("status", ["bogus", "pending", "done", ""])
def test_a_status_outside_the_four_is_refused_by_the_schema(tmp_path, status):
    path = tmp_path / "jobs.db"
    SqliteStore.open(path, now=NOW).close()
    conn = sqlite3.connect(path)
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO jobs (id, kind, status, payload, created_at, updated_at)"
            " VALUES ('x', 'k', ?, '{}', 'c', 'u')",
            (status,),
        )
    conn.close()


def test_a_failing_migration_is_rolled_back_whole(tmp_path):
    path = tmp_path / "jobs.db"
    steps = [
        Migration(version="0001_good", sql="CREATE TABLE good (x INTEGER);"),
        Migration(
            version="0002_bad",
            sql="CREATE TABLE half (x INTEGER);\nINSERT INTO missing VALUES (1);",
        ),
    ]
    connections = Connections(str(path))
    with connections.writer() as conn:
        with pytest.raises(sqlite3.OperationalError):
            migrate(conn, now=NOW, migrations=steps)
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        assert "good" in names
        assert "half" not in names
        assert applied_versions(conn) == ["0001_good"]
    connections.close()


def test_two_openers_of_a_new_database_apply_each_migration_once(tmp_path):
    path = tmp_path / "jobs.db"
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def open_it() -> None:
        barrier.wait()
        try:
            SqliteStore.open(path, now=NOW).close()
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert versions(path) == ALL_VERSIONS


def test_a_job_the_reference_left_running_is_settled_not_run_again(tmp_path):
    """Its owner is unknown (no claimed_by) and its one attempt was used: it fails."""
    from jobtable.core import INTERRUPTED, JobContext, Runner
    from tests.unit.kinds_for_tests import CountPayload, CountResult

    path = tmp_path / "legacy.db"
    conn = sqlite3.connect(path)
    conn.execute(LEGACY_SCHEMA)
    conn.execute(
        "INSERT INTO jobs VALUES ('job-left', 'suggest', 'running', '{}', '{\"done\":1}',"
        " NULL, 's', NULL, 'c', 'u')"
    )
    conn.commit()
    conn.close()
    ran: list[str] = []

    def suggest(ctx: JobContext, payload: CountPayload) -> CountResult:
        ran.append(ctx.job_id)
        return CountResult(done=2)

    store = SqliteStore.open(path, now=NOW)
    clock = FakeClock()
    runner = Runner(store, clock, workers=1, check_interval=None)
    runner.kinds.register(
        "suggest", suggest, payload=CountPayload, result=CountResult, max_attempts=3
    )
    runner.start()
    try:
        for _ in range(2):  # dead on the second sweep that sees it
            clock.wait_for_sleepers(1)
            clock.advance(0.5)
        clock.wait_for_sleepers(1)
        job = store.get("job-left")
        assert (job.status, job.error, job.result) == (Status.FAILED, INTERRUPTED, {"done": 1})
        assert ran == []
    finally:
        runner.stop()
        runner.join(timeout=None)
        store.close()


def migrated_until(path, last: str) -> None:
    """A database whose schema stops at migration ``last``, as an older version left it."""
    steps = [step for step in load_migrations("sqlite") if step.version <= last]
    connections = Connections(str(path))
    with connections.writer() as conn:
        migrate(conn, now=NOW, migrations=steps)
    connections.close()


def insert_job(path, job_id: str, *, status: str = "queued", **times) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(
            "INSERT INTO jobs (id, kind, status, payload, created_at, updated_at, run_at,"
            " started_at, finished_at) VALUES (:id, 'count', :status, '{}', :created_at,"
            " :created_at, :run_at, :started_at, :finished_at)",
            {"id": job_id, "status": status, "started_at": None, "finished_at": None, **times},
        )
    conn.close()


def repairs(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "jobtable.migrate"]


def test_times_no_reader_can_parse_are_made_readable_and_counted(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="jobtable.migrate")
    path = tmp_path / "jobs.db"
    migrated_until(path, "0006_batched_history")
    ours = "2026-03-01T12:00:00.123456+00:00"
    insert_job(path, "ours", created_at=ours, run_at=ours)
    insert_job(
        path,
        "reference",  # Go's RFC 3339 with nanoseconds
        created_at="2025-06-01T10:00:00.123456789Z",
        run_at="2025-06-01T10:00:00.123456789Z",
        started_at="2025-06-01 10:00:01",  # no offset: UTC
    )
    insert_job(path, "unreadable", created_at="c", run_at="c", started_at="s")
    insert_job(path, "finished", status="failed", created_at=ours, run_at=ours, finished_at="f")

    store = SqliteStore.open(path, now=NOW)
    try:
        assert repairs(caplog) == ["migration repaired rows version=0007_readable_times rows=3"]
        assert store.row("ours")["created_at"] == ours  # already readable: untouched
        reference = store.detail("reference")
        assert reference.created_at == datetime.datetime(
            2025, 6, 1, 10, 0, 0, 123000, tzinfo=datetime.UTC
        )  # to the millisecond SQLite reads
        assert reference.started_at == datetime.datetime(2025, 6, 1, 10, 0, 1, tzinfo=datetime.UTC)
        unreadable = store.detail("unreadable")
        assert unreadable.run_at == unreadable.created_at  # the migration's time
        assert unreadable.started_at is None
        assert store.detail("finished").finished_at is not None
        claimed = [store.claim_next(runner_id="r", now=NOW).id for _ in range(3)]
        assert sorted(claimed) == ["ours", "reference", "unreadable"]  # every one runs
    finally:
        store.close()
    again = SqliteStore.open(path, now=NOW)  # nothing left to repair, nothing logged again
    again.close()
    assert len(repairs(caplog)) == 1


def test_a_log_grown_by_snoozes_is_counted_and_trimmed_to_the_last_20(tmp_path):
    path = tmp_path / "jobs.db"
    migrated_until(path, "0007_readable_times")
    stamp = "2026-03-01T12:00:00.000000+00:00"
    insert_job(path, "snoozer", created_at=stamp, run_at=stamp)
    entries = [
        {"attempt": 1, "runner": "r", "started_at": stamp, "ended_at": stamp, "outcome": outcome}
        for outcome in ["snoozed"] * 30 + ["boom"]
    ]
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE jobs SET attempts_log = ?", (json.dumps(entries),))
    conn.close()

    store = SqliteStore.open(path, now=NOW)
    try:
        log = json.loads(store.row("snoozer")["attempts_log"])
        assert [entry["outcome"] for entry in log] == ["snoozed"] * 19 + ["boom"]
        assert len(log) == ATTEMPTS_KEPT
        assert store.detail("snoozer").snoozes == 30
    finally:
        store.close()


def test_keys_held_before_0009_stay_held_and_keys_let_go_stay_free(tmp_path):
    """Before 0009 a finished job's key held while active was cleared; after it the index
    holds only unfinished jobs' keys (and keys kept for good), whatever rows it finds."""
    path = tmp_path / "jobs.db"
    migrated_until(path, "0008_snooze_count")
    stamp = "2026-03-01T12:00:00.000000+00:00"
    insert_job(path, "holder", status="running", created_at=stamp, run_at=stamp)
    insert_job(path, "let-go", status="failed", created_at=stamp, run_at=stamp)
    insert_job(path, "tick", status="succeeded", created_at=stamp, run_at=stamp)
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE jobs SET unique_key = 'user-7' WHERE id = 'holder'")
        conn.execute(
            "UPDATE jobs SET unique_key = 'tick@1', unique_while_active = 0 WHERE id = 'tick'"
        )
    conn.close()

    store = SqliteStore.open(path, now=NOW)
    try:
        later = NOW + datetime.timedelta(seconds=1)
        for key, holder in (("user-7", "holder"), ("tick@1", "tick")):
            job = NewJob(id=f"again-{key}", kind="count", payload="{}", unique_key=key)
            again = store.create(attrs.evolve(job, unique_while_active=key == "user-7"), now=later)
            assert (again, again.duplicate) == (holder, True)
        fresh = store.create(
            NewJob(id="fresh", kind="count", payload="{}", unique_key="k"), now=later
        )
        assert not fresh.duplicate
    finally:
        store.close()


def test_a_database_upgraded_to_0010_keeps_its_lists_counts_and_history(tmp_path):
    """0010 rebuilds the list indexes without running jobs and the history trigger without
    its second search: what the old schema recorded still lists, counts and reads, and a
    change after it (an operator's plain UPDATE too) goes on numbering the same history."""
    path = tmp_path / "jobs.db"
    migrated_until_all_but(path, "0010_cheap_rows")  # as issue 19's release left it
    stamp = "2026-03-01T12:00:00.000000+00:00"
    for job_id, status in (("a-done", "queued"), ("b-busy", "queued"), ("c-wait", "queued")):
        insert_job(path, job_id, status=status, created_at=stamp, run_at=stamp)
    conn = sqlite3.connect(path)
    with conn:  # the old trigger writes their history
        conn.execute("UPDATE jobs SET status = 'running' WHERE id IN ('a-done', 'b-busy')")
        conn.execute("UPDATE jobs SET status = 'succeeded', result = '1' WHERE id = 'a-done'")
    conn.close()

    store = SqliteStore.open(path, now=NOW)
    try:
        assert versions(path) == ALL_VERSIONS
        listed = {
            status: [
                job.id for job in store.list_jobs(JobFilter(status=status), limit=10, after=None)
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
        assert (queue.counts["queued"], queue.counts["running"], queue.counts["succeeded"]) == (
            1,
            1,
            1,
        )
        assert sorted((c.status, c.count) for c in store.job_counts()) == [
            ("queued", 1),
            ("running", 1),
        ]
        history = store.events("a-done", after=0).events
        assert [(e.version, e.job.status) for e in history] == [
            (1, Status.RUNNING),
            (2, Status.SUCCEEDED),
        ]
        conn = sqlite3.connect(path)
        with conn:  # an operator's hand-written UPDATE, after the upgrade
            conn.execute("UPDATE jobs SET status = 'failed', error = 'by_hand' WHERE id = 'b-busy'")
        conn.close()
        changes = store.events("b-busy", after=1).events
        assert [(e.version, e.job.status) for e in changes] == [(2, Status.FAILED)]
        failed = store.list_jobs(JobFilter(status=Status.FAILED), limit=10, after=None)
        assert [job.id for job in failed] == ["b-busy"]
    finally:
        store.close()


def migrated_until_all_but(path, left_out: str) -> None:
    """A database with every migration before ``left_out``, as a release before it left it."""
    steps = [step for step in load_migrations("sqlite") if step.version < left_out]
    connections = Connections(str(path))
    with connections.writer() as conn:
        migrate(conn, now=NOW, migrations=steps)
    connections.close()


def test_the_writer_keeps_temporary_tables_in_memory_but_migrations_in_files(tmp_path, monkeypatch):
    """A claim's small temporary tables stay in memory on the writer (each opened a file);
    a migration, which may build an index over every row, keeps them in files."""
    from jobtable.adapters.sqlite import store as sqlite_store

    seen: list[int] = []
    applying = sqlite_store.migrate

    def watched(conn, **kwargs):
        seen.append(conn.execute("PRAGMA temp_store").fetchone()[0])
        return applying(conn, **kwargs)

    monkeypatch.setattr(sqlite_store, "migrate", watched)
    store = SqliteStore.open(tmp_path / "jobs.db", now=FakeClock().now())
    try:
        with store._engine._db.writer() as writer:
            after = writer.execute("PRAGMA temp_store").fetchone()[0]
    finally:
        store.close()
    assert seen == [1]  # FILE while migrating
    assert after == 2  # MEMORY for the claims
