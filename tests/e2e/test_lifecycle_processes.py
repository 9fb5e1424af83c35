"""The lifecycle across real ``jobtable worker`` processes on either engine: a periodic job
enqueued once per tick however many processes reach it, a cancel that reaches the process
running the job, and jobs routed by kind to the processes that serve it."""

from __future__ import annotations

from collections import Counter

import pytest

from jobtable.adapters.system_clock import SystemClock
from jobtable.core import Runner
from jobtable.entrypoints.wiring import open_store
from tests.e2e.conftest import wait_until
from tests.e2e.lifecycle_kinds import register
from tests.e2e.other_kinds import register as register_other
from tests.e2e.processes import enqueue, start_worker, stop, wait_for_start
from tests.e2e.trust_kinds import read_ledger
from tests.support.databases import query

pytestmark = pytest.mark.e2e
KINDS = "tests.e2e.lifecycle_kinds"


@pytest.fixture
def ledger(tmp_path) -> dict[str, str]:
    return {"JOBTABLE_TEST_LEDGER": str(tmp_path / "ledger.txt")}


def two_workers(database, tmp_path, ledger, kinds=(KINDS, KINDS)):
    workers = [
        start_worker(database, tmp_path / f"worker-{n}.log", kinds=kind, env=ledger)
        for n, kind in enumerate(kinds)
    ]
    for n in range(len(workers)):
        wait_for_start(tmp_path / f"worker-{n}.log")
    return workers


def test_each_tick_runs_once_across_two_worker_processes(database, tmp_path, ledger):
    workers = two_workers(database, tmp_path, ledger)
    try:
        ticks = "SELECT count(*) FROM jobs WHERE kind = 'tick' AND status = 'succeeded'"
        wait_until(lambda: query(database, ticks)[0][0] >= 4, 30, "four ticks")
    finally:
        assert [stop(worker) for worker in workers] == [0, 0]
    rows = query(database, "SELECT id, run_at FROM jobs WHERE kind = 'tick'")
    due_times = Counter(str(run_at) for _, run_at in rows)
    assert due_times and max(due_times.values()) == 1, due_times  # one job per tick
    runs = Counter(job_id for event, job_id, *_ in read_ledger(ledger["JOBTABLE_TEST_LEDGER"])
                   if event == "tick")  # fmt: skip
    finished = {job_id for (job_id,) in query(database, "SELECT id FROM jobs WHERE kind = 'tick'"
                                             " AND status = 'succeeded'")}  # fmt: skip
    assert finished <= set(runs) and max(runs.values()) == 1, runs  # each ran once


def test_a_cancel_reaches_the_process_running_the_job(database, tmp_path, ledger):
    workers = two_workers(database, tmp_path, ledger)
    try:
        (job_id,) = enqueue(database, "hold", [{"ms": 60_000}], register=register)
        running = f"SELECT status FROM jobs WHERE id = '{job_id}'"
        wait_until(lambda: query(database, running) == [("running",)], 30, "the job running")
        store = open_store(str(database), synchronous="normal", now=SystemClock().now())
        try:
            runner = Runner(store, SystemClock(), workers=0)
            register(runner.kinds)
            outcome, job = runner.cancel(job_id)
        finally:
            store.close()
        assert (outcome.value, job.status.value) == ("requested", "running")
        failed = f"SELECT status, error FROM jobs WHERE id = '{job_id}'"
        wait_until(lambda: query(database, failed) == [("failed", "cancelled")], 10, "cancelled")
    finally:
        assert [stop(worker) for worker in workers] == [0, 0]
    events = [
        event for event, ran, *_ in read_ledger(ledger["JOBTABLE_TEST_LEDGER"]) if ran == job_id
    ]
    assert events == ["start", "stopped"]  # told to stop once, never run again


def test_jobs_go_only_to_the_processes_that_serve_their_kind(database, tmp_path, ledger):
    workers = two_workers(database, tmp_path, ledger, kinds=(KINDS, "tests.e2e.other_kinds"))
    try:
        mine = enqueue(database, "where", [{"ms": 1}] * 10, register=register)
        theirs = enqueue(database, "elsewhere", [{"ms": 1}] * 10, register=register_other)
        done = "SELECT count(*) FROM jobs WHERE status = 'succeeded' AND kind IN ('where', 'elsewhere')"
        wait_until(lambda: query(database, done)[0][0] == 20, 30, "every job done")
    finally:
        assert [stop(worker) for worker in workers] == [0, 0]
    pids = {job_id: pid for event, job_id, _, pid, _ in read_ledger(ledger["JOBTABLE_TEST_LEDGER"])
            if event == "ran"}  # fmt: skip
    assert {pids[job_id] for job_id in mine} == {workers[0].pid}
    assert {pids[job_id] for job_id in theirs} == {workers[1].pid}
