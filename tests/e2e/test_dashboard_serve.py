"""``jobtable serve`` serves the dashboard: a session over real HTTP, a job's event stream that
follows a job another process runs, and streams that end when the server stops."""

from __future__ import annotations

import http.cookiejar
import json
import signal
import urllib.parse
import urllib.request

import pytest

from tests.e2e.processes import start_worker, stop, wait_for_start

pytestmark = pytest.mark.e2e


def logged_in(server) -> urllib.request.OpenerDirector:
    """An HTTP client holding the dashboard's session cookie, as a browser would."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    form = urllib.parse.urlencode({"token": server.token}).encode()
    with opener.open(server.base_url + "/ui/login", data=form, timeout=10) as answer:
        assert answer.status == 200 and answer.url.endswith("/ui/")  # after the 303
    assert [cookie.name for cookie in jar] == ["jobtable_session"]
    return opener


def events(stream) -> list[dict]:
    """Every event until the server ends the stream."""
    found, fields = [], {}
    for raw in stream:
        line = raw.decode().rstrip("\n")
        if not line:
            if "data" in fields:
                found.append({**fields, "data": json.loads(fields["data"])})
            fields = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(": ")
            fields[name] = value
    return found


def test_the_stream_follows_a_job_a_worker_process_runs(tmp_path, serve_processes):
    database = tmp_path / "jobs.db"
    server = serve_processes(database, "--workers", "0", "--kinds", "jobtable.core.demo")
    worker = start_worker(database, tmp_path / "worker.log", kinds="jobtable.core.demo")
    try:
        wait_for_start(tmp_path / "worker.log")
        status, accepted = server.request(
            "/api/v1/jobs", body={"kind": "countdown", "payload": {"seconds": 2}}
        )
        assert status == 202
        opener = logged_in(server)
        url = f"{server.base_url}/ui/jobs/{accepted['id']}/events"
        with opener.open(url, timeout=30) as stream:
            assert stream.headers["Content-Type"] == "text/event-stream"
            told = events(stream)
    finally:
        assert stop(worker) == 0
    assert [int(event["id"]) for event in told] == list(range(len(told)))
    statuses = [event["data"]["status"] for event in told]
    assert statuses[0] == "queued" and statuses[-1] == "succeeded"
    partials = [event["data"]["result"] for event in told if event["data"]["status"] == "running"]
    assert {"remaining": 1} in partials
    assert told[-1]["data"] == server.request(f"/api/v1/jobs/{accepted['id']}")[1]


def test_open_streams_end_when_serve_stops_so_the_stop_does_not_wait_for_them(
    tmp_path, serve_processes
):
    server = serve_processes(tmp_path / "jobs.db", "--workers", "0", "--grace", "30")
    status, accepted = server.request(
        "/api/v1/jobs", body={"kind": "noop", "payload": {}, "delay": 3600}
    )
    assert status == 202
    opener = logged_in(server)
    with opener.open(f"{server.base_url}/ui/jobs/{accepted['id']}/events", timeout=60) as stream:
        assert stream.readline() == b"retry: 1000\n"
        server.process.send_signal(signal.SIGTERM)
        told = events(stream)  # ends: the server closed the stream
    assert [event["data"]["status"] for event in told] == ["queued"]
    assert server.process.wait(60) == 0
    assert not any("still running at the end of the grace period" in line for line in server.log)
