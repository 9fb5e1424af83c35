"""``--processes N`` (issue 12): N worker processes under one supervisor, each a runner of its
own; a dead child is replaced, stop signals reach every child, and ``serve``'s children
share one listening socket."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from jobtable.adapters.system_clock import SystemClock
from jobtable.entrypoints.wiring import open_store
from tests.e2e.conftest import wait_until
from tests.e2e.processes import start_worker, stop


def live_runners(database) -> list:
    store = open_store(str(database), synchronous="normal", now=SystemClock().now())
    try:
        return store.runners()
    finally:
        store.close()


def test_a_worker_supervises_its_processes_and_replaces_one_that_dies(database, tmp_path):
    log = tmp_path / "worker.log"
    supervisor = start_worker(database, log, "--processes", "2", kinds="tests.e2e.trust_kinds")
    try:
        wait_until(lambda: len({r.info.pid for r in live_runners(database)}) == 2, 60,
                   "two processes registered")  # fmt: skip
        first = {r.info.pid for r in live_runners(database)}
        assert supervisor.pid not in first  # the supervisor runs no jobs itself
        victim = min(first)
        os.kill(victim, signal.SIGKILL)
        wait_until(
            lambda: (
                len(pids := {r.info.pid for r in live_runners(database)} - {victim}) == 2
                and pids != first - {victim}
            ),
            60,
            "a new process in its place",
        )
        assert "exited with signal SIGKILL; starting another" in log.read_text()
        children = {r.info.pid for r in live_runners(database)} - {victim}
    finally:
        code = stop(supervisor, within=60)
    assert code == 0, log.read_text()
    assert not [pid for pid in children if alive(pid)]  # each stopped, and was waited for
    assert {r.info.pid for r in live_runners(database)} == {victim}  # only the killed one's row


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_child_that_refuses_its_settings_stops_the_supervisor(tmp_path):
    database = tmp_path / "jobs.db"
    log = tmp_path / "worker.log"
    supervisor = start_worker(database, log, "--processes", "2", "--queues", "no good!")
    try:
        assert supervisor.wait(60) == 2, log.read_text()
    finally:
        stop(supervisor)
    assert "refused its settings" in log.read_text()


def test_serve_children_share_one_port(serve_processes, tmp_path: Path):
    served = serve_processes(tmp_path / "jobs.db", "--processes", "2", "--workers", "1")
    wait_until(lambda: len({r.info.pid for r in live_runners(served.database)}) == 2, 60,
               "two serve processes registered")  # fmt: skip
    job_ids = []
    for _ in range(10):
        status, body = served.request("/api/v1/jobs", body={"kind": "noop", "payload": {}})
        assert status == 202, body
        job_ids.append(body["id"])
    for job_id in job_ids:
        assert served.poll_job(job_id, lambda job: job["status"] == "succeeded")["error"] is None
    assert served.stop(within=60) == 0, "".join(served.log)
