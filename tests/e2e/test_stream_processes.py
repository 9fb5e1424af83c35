"""Event streams between real processes: ``jobtable serve --workers 0`` streams a job that a
``jobtable worker`` runs, and SIGTERM ends open streams instead of waiting for them."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import ServeProcess
from tests.e2e.processes import start_worker, stop, wait_for_start
from tests.e2e.stream_kinds import acknowledged
from tests.support.sse import LiveStream, ids

pytestmark = pytest.mark.e2e
KINDS = "tests.e2e.stream_kinds"
TOKEN = {"JOBTABLE_API_TOKEN": "stream-process-token"}


def open_stream(server: ServeProcess, job_id: str) -> LiveStream:
    host, port = server.base_url.removeprefix("http://").split(":")
    headers = {"Authorization": f"Bearer {server.token}"}
    return LiveStream((host, int(port)), f"/api/v1/jobs/{job_id}/events", headers)


def test_a_job_a_worker_process_runs_streams_live_from_serve(database, serve_processes, tmp_path):
    env = {"JOBTABLE_TEST_ACKS": str(tmp_path), **TOKEN}
    server = serve_processes(database, "--workers", "0", "--kinds", KINDS, env=env)
    log = tmp_path / "worker.log"
    worker = start_worker(database, log, kinds=KINDS, workers=1, env=env)
    try:
        wait_for_start(log)
        status, body = server.request(
            "/api/v1/jobs", body={"kind": "steps", "payload": {"steps": 3}}
        )
        assert status == 202, body
        job_id = body["id"]
        stream = open_stream(server, job_id)
        events = stream.take(2)  # queued, running: the worker claimed it
        for step in range(1, 5):
            acknowledged(tmp_path, job_id, step).touch()  # the change before has arrived: go on
            events += stream.take(1)
        assert stream.next() is None
        stream.close()
    finally:
        assert stop(worker) == 0, log.read_text()
    assert ids(events) == list(range(6))
    assert [event.job["result"] for event in events[2:5]] == [{"done": n} for n in (1, 2, 3)]
    assert events[-1].job["status"] == "succeeded", events[-1]  # not failed unacknowledged


def test_sigterm_ends_open_streams_and_the_stop_does_not_wait_for_them(database, serve_processes):
    server = serve_processes(database, "--workers", "0", "--grace", "60", env=TOKEN)
    status, _ = server.request("/api/v1/queues/held/pause", body={})
    assert status == 200
    status, body = server.request(
        "/api/v1/jobs", body={"kind": "noop", "payload": {}, "queue": "held"}
    )
    assert status == 202
    streams = [open_stream(server, body["id"]) for _ in range(3)]
    assert all(ids(stream.take(1)) == [0] for stream in streams)
    assert server.stop(within=90) == 0
    assert all(stream.rest() == [] for stream in streams)  # each ended cleanly
    assert not any("still running at the end of the grace period" in line for line in server.log)
