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
