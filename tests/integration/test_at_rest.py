"""Nothing to do costs nothing: an idle runner on SQLite writes nothing to its database files.

The runner's loops are driven on a fake clock (sweeps, lock checks, a retention
round), so "idle for a while" is a number of loop iterations the test watched
happen, not a time slept. The database file and its write-ahead log are
compared byte for byte before and after. (The ``-shm`` index is shared memory
that every read touches; it is left out.)
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from pathlib import Path

import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.sqlite import SqliteStore
from jobtable.core import Status
from jobtable.core.liveness import CHECK_INTERVAL, SWEEP_INTERVAL
from tests.support.harness import JobSystem
from tests.unit.kinds_for_tests import CountPayload, count
from tests.unit.test_liveness import sweep

IDLE_SWEEPS = 12


def files_state(database: Path) -> dict[str, tuple[int, int, str]]:
    """Each file's size, modification time and digest."""
    state = {}
    for path in (database, Path(f"{database}-wal")):
        if path.exists():
            stat = path.stat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            state[path.name] = (stat.st_size, stat.st_mtime_ns, digest)
    return state


def runner_rows(database: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT * FROM jobtable_runners ORDER BY id").fetchall()


@pytest.fixture
def system(tmp_path):
    clock = FakeClock()
    store = SqliteStore.open(tmp_path / "jobs.db", now=clock.now())
    made = JobSystem(
        store, clock=clock, sweep_interval=SWEEP_INTERVAL, check_interval=CHECK_INTERVAL
    )
    yield made
    made.stop()
    store.close()


def test_an_idle_runner_writes_nothing_to_the_database_files(system, tmp_path):
    database = tmp_path / "jobs.db"
    kind = system.kinds.register("count", count, payload=CountPayload)
    system.start()
    job_id = kind.enqueue(CountPayload(steps=1))  # it has worked: a finished job is kept
    assert system.wait_for(job_id).status is Status.SUCCEEDED
    for _ in range(2):
        sweep(system, sleepers=2)  # its check and sweep threads: settled, busy back to 0
    assert [row.busy for row in system.store.runners()] == [0]
    before, rows_before = files_state(database), runner_rows(database)
    sweeps_before = system.sweeps

    for _ in range(IDLE_SWEEPS):
        sweep(system, sleepers=2)
    assert system.runner.prune() == 0  # a retention round with nothing old enough

    assert system.sweeps - sweeps_before >= IDLE_SWEEPS
    assert files_state(database) == before
    assert runner_rows(database) == rows_before  # no beat, no busy, no last_seen written
    assert os.path.exists(f"{database}-wal")


def test_an_idle_runners_last_seen_is_when_a_reader_saw_its_lock_held(system):
    system.start()
    first = system.store.runners()[0].last_seen
    for _ in range(3):
        sweep(system, sleepers=2)
    assert system.store.runners()[0].last_seen > first  # seen alive, though nothing written


# -- PostgreSQL -------------------------------------------------------------------------


def postgres_connections(port: int) -> int:
    """The TCP connections this process holds open to ``port`` (the database server's)."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    count = 0
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        with open(table) as lines:
            next(lines)
            for line in lines:
                fields = line.split()
                remote_port = int(fields[2].rsplit(":", 1)[1], 16)
                if remote_port == port and fields[3] == "01" and fields[9] in inodes:
                    count += 1
    return count


def test_an_idle_worker_process_holds_three_postgres_connections_at_most(monkeypatch):
    """One pooled connection (more only while busy, closed once idle), its liveness lock's
    session and its LISTEN connection."""
    from urllib.parse import urlparse

    from jobtable.adapters.postgres import PostgresStore
    from jobtable.adapters.postgres import store as postgres_store
    from tests.support.postgres import fresh_schema

    monkeypatch.setattr(postgres_store, "POOL_MAX_IDLE", 0.2)  # shrink within the test
    with fresh_schema() as (url, schema):
        port = urlparse(url).port or 5432
        baseline = postgres_connections(port)
        clock = FakeClock()
        store = PostgresStore.open(url, now=clock.now(), schema=schema)
        system = JobSystem(
            store, clock=clock, workers=4, sweep_interval=SWEEP_INTERVAL,
            check_interval=CHECK_INTERVAL,
        )  # fmt: skip
        kind = system.kinds.register("count", count, payload=CountPayload)
        try:
            system.start()
            jobs = [kind.enqueue(CountPayload(steps=1)) for _ in range(20)]
            for job_id in jobs:  # busy: the pool may grow, up to its size
                assert system.wait_for(job_id).status is Status.SUCCEEDED
            held = postgres_connections(port) - baseline
            assert held <= postgres_store.DEFAULT_POOL_SIZE + 2
            deadline = time.monotonic() + 30  # idle: the pool shrinks back to one
            while postgres_connections(port) - baseline > 3:
                assert time.monotonic() < deadline, "the pool never shrank back"
                time.sleep(0.05)
            for _ in range(4):
                sweep(system, sleepers=3)  # check, deadline and sweep threads
                assert postgres_connections(port) - baseline <= 3
        finally:
            system.stop()
            store.close()


def test_postgres_sightings_say_whether_a_runner_holds_running_jobs():
    """What lets an idle runner skip its look for lost claims: one transaction a sweep."""
    import datetime

    from jobtable.adapters.postgres import PostgresStore
    from jobtable.core import NewJob, RunnerInfo
    from jobtable.core.outcome import Succeed
    from tests.support.postgres import fresh_schema

    with fresh_schema() as (url, schema):
        clock = FakeClock()
        store = PostgresStore.open(url, now=clock.now(), schema=schema)
        try:
            info = RunnerInfo(
                id="runner-a", host="here", pid=1, started_at=clock.now(),
                kinds=("count",), queues=None, workers=1,
            )  # fmt: skip
            store.register_runner(info, now=clock.now())

            def holds() -> bool | None:
                (own,) = [seen for seen in store.sight_runners() if seen.runner_id == "runner-a"]
                return own.holds_running

            assert holds() is False
            store.create(NewJob(id="j1", kind="count", payload="{}"), now=clock.now())
            claimed = store.claim_next(runner_id="runner-a", now=clock.now())
            assert claimed is not None
            assert holds() is True
            later = clock.now() + datetime.timedelta(seconds=1)
            assert store.record(claimed.claim, Succeed(result="1"), now=later)
            assert holds() is False
        finally:
            store.unregister_runner("runner-a")
            store.close()
