"""Four processes enqueue and drain on one SQLite file at once (30 s by default).

No "database is locked" may reach a caller or an error-level log line, and
no job may be lost: every id an enqueue returned ends succeeded, run once.
JOBTABLE_CONTENTION_SECONDS sets the length (30 in CI; longer by hand).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from tests.e2e.conftest import REPO, wait_until
from tests.e2e.ledger_kinds import create_ledger
from tests.support.databases import query

pytestmark = pytest.mark.e2e
SECONDS = float(os.environ.get("JOBTABLE_CONTENTION_SECONDS", "30"))
PROCESSES = 4


def test_four_processes_enqueue_and_drain_one_file_with_no_lock_error_and_no_loss(tmp_path):
    database = str(tmp_path / "jobs.db")
    from jobtable.adapters.sqlite import SqliteStore
    from jobtable.adapters.system_clock import SystemClock

    SqliteStore.open(database, now=SystemClock().now()).close()
    create_ledger(database)
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "JOBTABLE_DATABASE": database}
    processes = []
    for number in range(PROCESSES):
        log = (tmp_path / f"p{number}.log").open("w")
        processes.append(subprocess.Popen(
            [sys.executable, "-m", "tests.e2e.contention_process", database, str(SECONDS), str(tmp_path / f"p{number}.ids")],
            env=env, stdout=subprocess.DEVNULL, stderr=log,
        ))  # fmt: skip

    def finished_enqueueing() -> bool:
        return all(
            (tmp_path / f"p{n}.ids").exists() and "enqueue errors" in (tmp_path / f"p{n}.ids").read_text()
            for n in range(PROCESSES)
        )  # fmt: skip

    try:
        wait_until(finished_enqueueing, within=SECONDS + 60, what="every process enqueueing")
        wait_until(
            lambda: query(database, "SELECT COUNT(*) FROM jobs WHERE status IN ('queued', 'running')") == [(0,)],
            within=120, what="the queue draining",
        )  # fmt: skip
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        codes = [process.wait(60) for process in processes]
    assert codes == [0] * PROCESSES

    ids, errors = [], []
    for n in range(PROCESSES):
        *lines, summary = (tmp_path / f"p{n}.ids").read_text().splitlines()
        ids += lines
        errors.append(int(summary.rsplit(" ", 1)[1]))
    logs = "".join((tmp_path / f"p{n}.log").read_text() for n in range(PROCESSES))
    print(f"{len(ids)} jobs from {PROCESSES} processes in {SECONDS:.0f} s")

    assert errors == [0] * PROCESSES, logs[-3000:]
    assert [line for line in logs.splitlines() if line.startswith(("ERROR", "CRITICAL"))] == []
    assert "locked" not in logs
    statuses = dict(query(database, "SELECT status, COUNT(*) FROM jobs GROUP BY status"))
    assert statuses == {"succeeded": len(ids)}
    stored = {job_id for (job_id,) in query(database, "SELECT id FROM jobs")}
    assert stored == set(ids)
    runs = dict(query(database, "SELECT job_id, COUNT(*) FROM ledger GROUP BY job_id"))
    assert set(runs) == set(ids)
    assert set(runs.values()) == {1}
    executing_pids = {pid for (pid,) in query(database, "SELECT DISTINCT pid FROM ledger")}
    assert len(executing_pids) == PROCESSES
