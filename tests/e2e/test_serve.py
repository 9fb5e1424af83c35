"""``jobtable serve`` as a real process: boot, serve, stop on a signal, keep the database intact."""

from __future__ import annotations

import signal
import sqlite3
import stat

import pytest

from jobtable.adapters.sqlite import SqliteStore
from jobtable.adapters.system_clock import SystemClock
from jobtable.core import INTERRUPTED, NoopPayload, Runner, Status
from tests.e2e.stubborn_kinds import Empty
from tests.e2e.stubborn_kinds import register as register_stubborn

pytestmark = pytest.mark.e2e


def enqueue_offline(database, kind: str = "noop") -> str:
    """Enqueue through the Python API against the same database, as an application would."""
    store = SqliteStore.open(database, now=SystemClock().now())
    try:
        runner = Runner(store, SystemClock())
        if kind == "noop":
            return runner.builtins.noop.enqueue(NoopPayload())
        return register_stubborn(runner.kinds).enqueue(Empty())
    finally:
        store.close()


def integrity(database) -> str:
    conn = sqlite3.connect(database)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_serve_runs_a_job_serves_it_and_stops_cleanly_on_a_signal(
    tmp_path, serve_processes, signum
):
    database = tmp_path / "jobs.db"
    job_id = enqueue_offline(database)
    server = serve_processes(database)

    assert server.request("/health", token="none")[0] == 200
    body = server.poll_job(job_id, lambda job: job["status"] == "succeeded")
    assert body == {"id": job_id, "kind": "noop", "status": "succeeded",
                    "result": {"ok": True}, "error": None}  # fmt: skip
    assert server.request(f"/api/v1/jobs/{job_id}", token="wrong")[0] == 401

    assert server.stop(signum) == 0
    assert integrity(database) == "ok"
    log = "".join(server.log)
    assert "stopped" in log
    assert server.token not in log
    token_file = tmp_path / "jobs.db.token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert str(token_file) in log


def test_a_handler_ignoring_stop_does_not_hold_serve_past_its_grace(tmp_path, serve_processes):
    database = tmp_path / "jobs.db"
    job_id = enqueue_offline(database, kind="stubborn")
    kinds = ("--kinds", "tests.e2e.stubborn_kinds", "--grace", "1")
    server = serve_processes(database, *kinds)
    server.poll_job(job_id, lambda job: job["result"] == {"step": 1})

    assert server.stop() == 0
    assert "jobs still running at the end of the grace period" in "".join(server.log)
    assert integrity(database) == "ok"

    restarted = serve_processes(database, *kinds)
    body = restarted.poll_job(job_id, lambda job: job["status"] != "running")
    assert (body["status"], body["error"], body["result"]) == (
        Status.FAILED, INTERRUPTED, {"step": 1},
    )  # fmt: skip
    assert restarted.stop() == 0


def test_the_token_file_is_reused_across_restarts(tmp_path, serve_processes):
    database = tmp_path / "jobs.db"
    first = serve_processes(database)
    token = first.token
    assert first.stop() == 0
    second = serve_processes(database)
    assert second.token == token
    assert second.request("/api/v1/jobs/none")[0] == 404
    assert second.stop() == 0
