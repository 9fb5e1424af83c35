"""Several jobtable processes on one database (a SQLite file, PostgreSQL): no double runs,
a dead worker's jobs settled, a live one's left alone."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from jobtable.adapters.system_clock import SystemClock
from jobtable.core import Runner
from jobtable.entrypoints.wiring import open_store
from tests.e2e.conftest import JOBTABLE, REPO, wait_until
from tests.e2e.ledger_kinds import create_ledger, register
from tests.support.databases import query

pytestmark = pytest.mark.e2e
JOBS = int(os.environ.get("JOBTABLE_E2E_JOBS", "5000"))
"""Jobs the four-process run drains: at CI size by default, 20,000 or more by hand."""


def start_worker(database, tmp_path, name: str, workers: int = 2) -> subprocess.Popen:
    return subprocess.Popen(
        [JOBTABLE, "worker", "--workers", str(workers), "--kinds", "tests.e2e.ledger_kinds",
         "--sqlite-synchronous", "normal"],
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "JOBTABLE_DATABASE": str(database)},
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / f"{name}.log").open("w"),
    )  # fmt: skip


def wait_for_start(tmp_path, name: str) -> None:
    """Until the worker logged its start line: registered, first sweep taken, workers running."""
    wait_until(
        lambda: " worker: database=" in (tmp_path / f"{name}.log").read_text(),
        within=30,
        what=f"{name} starting",
    )


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        process.wait(30)


def enqueue_many(database, kind: str, count: int) -> list[str]:
    store = open_store(str(database), synchronous="normal", now=SystemClock().now())
    try:
        runner = Runner(store, SystemClock())
        register(runner.kinds)
        ids = [runner.enqueue(kind, {"n": n}) for n in range(count)]
    finally:
        store.close()
    create_ledger(str(database))
    return ids


def test_four_worker_processes_run_every_job_exactly_once(database, tmp_path):
    ids = enqueue_many(database, "ledger", JOBS)
    workers = [start_worker(database, tmp_path, f"w{n}") for n in range(4)]
    try:
        wait_until(
            lambda: (
                query(database, "SELECT COUNT(*) FROM jobs WHERE status = 'succeeded'")[0][0]
                == JOBS
            ),
            within=300,
            what="every job succeeding",
        )
    finally:
        for worker in workers:
            stop(worker)
    assert query(database, "SELECT COUNT(*) FROM jobs WHERE status != 'succeeded'") == [(0,)]
    runs = dict(query(database, "SELECT job_id, COUNT(*) FROM ledger GROUP BY job_id"))
    assert len(runs) == len(ids)
    assert set(runs.values()) == {1}
    assert len(dict(query(database, "SELECT pid, 1 FROM ledger GROUP BY pid"))) > 1


def test_a_killed_workers_jobs_are_settled_within_two_seconds_and_the_rest_drains(
    database, tmp_path
):
    enqueue_many(database, "hold", 2)
    enqueue_many(database, "hold_retry", 1)
    victim = start_worker(database, tmp_path, "victim", workers=3)
    survivor = None
    try:
        wait_until(
            lambda: (
                query(database, "SELECT COUNT(*) FROM jobs WHERE status = 'running'")[0][0] == 3
            ),
            within=30,
            what="the victim running its three jobs",
        )
        survivor = start_worker(database, tmp_path, "survivor")
        # The survivor is up and sweeping before the kill: what settles the dead
        # worker's jobs is its periodic sweep, not a sweep at its start.
        wait_for_start(tmp_path, "survivor")
        later = enqueue_many(database, "ledger", 50)
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)

        def settled() -> bool:
            rows = query(
                database, "SELECT status, error, attempt FROM jobs WHERE kind LIKE 'hold%'"
            )
            return all(status != "running" or attempt == 2 for status, _, attempt in rows)

        # The bound is 2 s (two sweeps half a second apart); the test
        # allows more so a loaded machine cannot make it flaky, and prints it.
        took = wait_until(settled, within=10, what="the dead worker's jobs being settled")
        print(f"kill -9 to settled: {took:.2f}s")
        failed = query(
            database,
            "SELECT COUNT(*) FROM jobs WHERE kind = 'hold' AND status = 'failed'"
            " AND error = 'interrupted by restart' AND result IS NOT NULL",
        )
        assert failed == [(2,)]
        retried = "SELECT status, attempt FROM jobs WHERE kind = 'hold_retry'"
        wait_until(  # queued again in its old place, and claimed by the survivor
            lambda: query(database, retried) in ([("running", 2)], [("succeeded", 2)]),
            within=30,
            what="the job with attempts left run again",
        )
        drained = "SELECT COUNT(*) FROM jobs WHERE kind = 'ledger' AND status = 'succeeded'"
        wait_until(
            lambda: query(database, drained)[0][0] == len(later),
            within=60,
            what="the rest of the queue draining",
        )
    finally:
        stop(victim)
        if survivor is not None:
            stop(survivor)


def test_long_jobs_spread_over_two_worker_processes_none_held_ahead(database, tmp_path):
    """A runner of long handlers claims only for its free workers: twelve half-second jobs
    over two processes of two workers each run about half in each, and none is ever held."""
    create_ledger(str(database))
    workers = [start_worker(database, tmp_path, f"w{n}") for n in range(2)]
    try:
        for n in range(2):
            wait_for_start(tmp_path, f"w{n}")
        enqueue_many(database, "long", 12)
        held_seen = 0

        def all_done() -> bool:
            nonlocal held_seen
            held_seen += query(database, "SELECT COUNT(*) FROM jobs WHERE held_by IS NOT NULL")[0][
                0
            ]
            done = query(database, "SELECT COUNT(*) FROM jobs WHERE status = 'succeeded'")
            return bool(done[0][0] == 12)

        wait_until(all_done, within=60, what="every long job succeeding")
    finally:
        for worker in workers:
            stop(worker)
    per_process = [
        count for _, count in query(database, "SELECT pid, COUNT(*) FROM ledger GROUP BY pid")
    ]
    assert len(per_process) == 2 and min(per_process) >= 3, per_process  # about six each
    assert sum(per_process) == 12
    assert held_seen == 0


def test_a_second_worker_leaves_a_busy_first_ones_jobs_alone(database, tmp_path):
    enqueue_many(database, "hold", 2)
    first = start_worker(database, tmp_path, "first")
    second = None
    try:
        wait_until(
            lambda: (
                query(database, "SELECT COUNT(*) FROM jobs WHERE status = 'running'")[0][0] == 2
            ),
            within=30,
            what="the first worker running both jobs",
        )
        second = start_worker(database, tmp_path, "second")
        wait_for_start(tmp_path, "second")
        time_to_look = time.monotonic() + 2.5  # five sweeps of the second worker
        while time.monotonic() < time_to_look:
            assert query(database, "SELECT COUNT(*) FROM jobs WHERE status = 'running'") == [(2,)]
            time.sleep(0.1)
    finally:
        for process in (first, second):
            if process is not None:
                stop(process)
