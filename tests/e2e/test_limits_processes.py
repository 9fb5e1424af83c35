"""Concurrency limits across worker processes on one database (SQLite, PostgreSQL), while
one of them is killed with SIGKILL mid-run: at no instant more handlers ran than the
limit, per kind and per key, and every job finished."""

from __future__ import annotations

import collections
import datetime
import os
import signal
import subprocess
import time

import pytest

from jobtable.adapters.system_clock import SystemClock
from jobtable.core import Runner
from jobtable.entrypoints.wiring import open_store
from tests.e2e.conftest import JOBTABLE, REPO, wait_until
from tests.e2e.limit_kinds import (
    EXPORTS_AT_ONCE,
    REPORTS_AT_ONCE,
    REPORTS_QUEUE,
    SYNC_WINDOW,
    SYNCS_PER_WINDOW,
    create_limit_ledger,
    register,
)
from tests.support.databases import query

pytestmark = pytest.mark.e2e
EXPORTS = int(os.environ.get("JOBTABLE_E2E_LIMIT_JOBS", "60"))
CUSTOMERS = ("ada", "bob", "cy")


def start_worker(database, tmp_path, name: str) -> subprocess.Popen:
    return subprocess.Popen(
        [JOBTABLE, "worker", "--workers", "3", "--kinds", "tests.e2e.limit_kinds"],
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "JOBTABLE_DATABASE": str(database)},
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / f"{name}.log").open("w"),
    )  # fmt: skip


def most_at_once(database, killed: dict[int, int]) -> dict[str, int]:
    """Replay the ledger: the most handlers running at once per slot (kind, or kind:key).
    A handler whose process was killed ran until the kill."""
    rows = query(database, "SELECT job_id, slot, event, at_ns, pid FROM limit_ledger")
    starts = {
        (job_id, pid): (slot, at) for job_id, slot, event, at, pid in rows if event == "start"
    }
    ends = {(job_id, pid): at for job_id, _, event, at, pid in rows if event == "end"}
    events: dict[str, list[tuple[int, int]]] = collections.defaultdict(list)
    for run, (slot, started) in starts.items():
        ended = ends.get(run, killed.get(run[1]))
        assert ended is not None, f"a handler with no end in a live process: {run}"
        events[slot] += [(started, 1), (ended, -1)]
    most = {}
    for slot, changes in events.items():
        running = peak = 0
        for _, change in sorted(changes, key=lambda each: (each[0], each[1])):  # ends first
            running += change
            peak = max(peak, running)
        most[slot] = peak
    return most


def test_limits_hold_across_processes_while_one_is_killed(database, tmp_path):
    store = open_store(str(database), synchronous="normal", now=SystemClock().now())
    try:
        runner = Runner(store, SystemClock())
        register(runner.kinds)
        ids = [runner.enqueue("export", {"n": n}) for n in range(EXPORTS)]
        ids += [
            runner.enqueue("charge", {"customer": CUSTOMERS[n % 3], "n": n}) for n in range(EXPORTS)
        ]
    finally:
        store.close()
    create_limit_ledger(str(database))
    workers = [start_worker(database, tmp_path, f"w{n}") for n in range(3)]
    killed: dict[int, int] = {}
    try:
        wait_until(
            lambda: query(database, "SELECT COUNT(*) FROM limit_ledger WHERE event = 'end'")[0][0] >= 20,
            within=60, what="twenty handlers ending",
        )  # fmt: skip
        victim = workers[0]
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
        killed[victim.pid] = time.time_ns()
        workers.append(start_worker(database, tmp_path, "replacement"))
        wait_until(
            lambda: query(database, "SELECT COUNT(*) FROM jobs WHERE status = 'succeeded'")[0][0]
            == len(ids),
            within=180, what="every job succeeding",
        )  # fmt: skip
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.send_signal(signal.SIGTERM)
                worker.wait(30)
    most = most_at_once(database, killed)
    assert most["export"] == EXPORTS_AT_ONCE  # reached, never passed
    assert {most[f"charge:{customer}"] for customer in CUSTOMERS} == {1}
    pids = {pid for (pid,) in query(database, "SELECT DISTINCT pid FROM limit_ledger")}
    assert len(pids) >= 2  # more than one process ran them (one may start late under load)
    # Holding back spends no attempt: each job's attempts are its handler's starts, but for
    # at most the victim's three workers' claims whose handler the kill cut off before it
    # wrote its start (settled as interrupted: an attempt spent, as on any crash).
    starts = collections.Counter(
        job_id
        for (job_id,) in query(database, "SELECT job_id FROM limit_ledger WHERE event = 'start'")
    )
    attempts = dict(query(database, "SELECT id, attempt FROM jobs"))
    unstarted = [job_id for job_id in ids if attempts[job_id] != starts[job_id]]
    assert all(attempts[job_id] == starts[job_id] + 1 for job_id in unstarted)
    assert len(unstarted) <= 3


def test_a_rate_holds_across_processes_and_a_held_back_jobs_detail_says_when(database, tmp_path):
    store = open_store(str(database), synchronous="normal", now=SystemClock().now())
    runner = Runner(store, SystemClock())
    register(runner.kinds)
    try:
        ids = [runner.enqueue("sync", {"n": n}) for n in range(4 * SYNCS_PER_WINDOW)]
        create_limit_ledger(str(database))
        workers = [start_worker(database, tmp_path, f"w{n}") for n in range(3)]
        try:
            said = []

            def a_detail_says_when() -> bool:
                for job_id in ids:
                    waiting = runner.detail(job_id).waiting
                    said.extend(reason for reason in waiting if "may start at" in reason)
                return bool(said)

            wait_until(a_detail_says_when, within=30, what="a held-back job's detail")
            assert said[0].startswith(
                f"held back by its kind's rate: {SYNCS_PER_WINDOW} of {SYNCS_PER_WINDOW} starts"
            )
            wait_until(
                lambda: query(database, "SELECT COUNT(*) FROM jobs WHERE status = 'succeeded'")[0][0]
                == len(ids),
                within=60, what="every job succeeding",
            )  # fmt: skip
        finally:
            for worker in workers:
                worker.send_signal(signal.SIGTERM)
                worker.wait(30)
    finally:
        store.close()
    # Each start as the claims stamped it, once they held the kind's lock (a job's own
    # started_at is its claim's clock reading, taken before any wait for that lock).
    started = sorted(
        at
        for (at,) in query(database, "SELECT started_at FROM jobtable_starts WHERE kind = 'sync'")
    )
    assert len(started) == len(ids)
    times = [
        at if isinstance(at, datetime.datetime) else datetime.datetime.fromisoformat(at)
        for at in started
    ]
    window = datetime.timedelta(seconds=SYNC_WINDOW)
    most = max(sum(1 for other in times if at - window < other <= at) for at in times)
    assert most == SYNCS_PER_WINDOW  # reached, never passed, in any window of starts


def test_a_queue_limit_set_while_workers_run_holds_across_processes(database, tmp_path):
    create_limit_ledger(str(database))
    workers = [start_worker(database, tmp_path, f"w{n}") for n in range(3)]
    store = open_store(str(database), synchronous="normal", now=SystemClock().now())
    try:
        runner = Runner(store, SystemClock())
        register(runner.kinds)
        wait_until(lambda: len(runner.runners()) == 3, within=30, what="three live workers")
        limited = subprocess.run(
            [JOBTABLE, "queue-limit", REPORTS_QUEUE, "--running", str(REPORTS_AT_ONCE)],
            env={"PATH": "/usr/bin:/bin", "JOBTABLE_DATABASE": str(database)},
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert limited.returncode == 0, limited.stderr
        ids = [runner.enqueue("report", {"n": n}) for n in range(EXPORTS)]
        wait_until(
            lambda: query(database, "SELECT COUNT(*) FROM jobs WHERE status = 'succeeded'")[0][0]
            == len(ids),
            within=120, what="every report succeeding",
        )  # fmt: skip
    finally:
        store.close()
        for worker in workers:
            worker.send_signal(signal.SIGTERM)
            worker.wait(30)
    most = most_at_once(database, {})
    assert most[f"queue:{REPORTS_QUEUE}"] == REPORTS_AT_ONCE  # reached, never passed
    pids = {pid for (pid,) in query(database, "SELECT DISTINCT pid FROM limit_ledger")}
    assert len(pids) >= 2
