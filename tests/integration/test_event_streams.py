"""Event streams and long-polls on a real waitress server, over loopback.

Live order and reconnects, a reset after trimming, 50 open streams beside
ordinary requests, full slots, a stop that ends the streams, and a job run by
another runner on the same database (another connection, as another process
would be) streaming to a server whose runner does not run it.
"""

from __future__ import annotations

import http.client
import json
import logging
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import pytest

from jobtable.adapters.memory import MemoryStore
from jobtable.adapters.system_clock import SystemClock
from jobtable.core import NoopPayload, Runner
from jobtable.core.jobs import EVENTS_KEPT
from jobtable.entrypoints.http.app import create_app
from jobtable.entrypoints.http.streams import DEFAULT_STREAM_SLOTS, StreamSlots
from jobtable.entrypoints.http_server import HttpServer
from jobtable.entrypoints.wiring import follow_changes, open_store
from tests.e2e.conftest import wait_until
from tests.support.databases import database_for
from tests.support.sse import SLOTS_FULL, LiveStream, ids
from tests.support.stepping import Stepper, Steps
from tests.support.threads import run_in_threads

TOKEN = "stream-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
LOG = logging.getLogger("tests.streams")


@contextmanager
def serving(runner: Runner, *, slots: int = DEFAULT_STREAM_SLOTS) -> Iterator[HttpServer]:
    app = create_app(runner, api_token=TOKEN, streams=StreamSlots(slots))
    server = HttpServer(
        app, host="127.0.0.1", port=0, threads=4, logger=LOG,
        stream_slots=slots, end_streams=runner.changes.close,
    )  # fmt: skip
    server.start()
    try:
        yield server
    finally:
        server.stop(deadline=time.monotonic() + 10)


@contextmanager
def started(runner: Runner) -> Iterator[Runner]:
    runner.start()
    try:
        yield runner
    finally:
        runner.stop_now()
        runner.join(timeout=30)


def memory_runner(workers: int = 1) -> Runner:
    return Runner(MemoryStore(), SystemClock(), workers=workers)


def open_stream(server: HttpServer, job_id: str, **headers: str) -> LiveStream:
    return LiveStream(server.address, f"/api/v1/jobs/{job_id}/events", {**AUTH, **headers})


def request(server: HttpServer, method: str, path: str, body: dict | None = None, **headers):
    conn = http.client.HTTPConnection(*server.address, timeout=30)
    try:
        sent = {**AUTH, **headers}
        data = None
        if body is not None:
            sent["Content-Type"] = "application/json"
            data = json.dumps(body).encode()
        conn.request(method, path, body=data, headers=sent)
        response = conn.getresponse()
        text = response.read()
        return response.status, response.headers, json.loads(text) if text else None
    finally:
        conn.close()


def follow_in_step(stream: LiveStream, stepper: Stepper, steps: int) -> list:
    """Every event to the end, letting the handler take its next step only once the
    previous change has arrived: each one must come as it happens."""
    events = stream.take(2)  # created, running
    for _ in range(steps + 1):
        stepper.step()
        events += stream.take(1)
    assert stream.next() is None  # the stream ends after the final state
    return events


# -- one process -------------------------------------------------------------------------


def test_changes_arrive_live_in_order_with_increasing_ids():
    runner = memory_runner()
    stepper = Stepper(runner.kinds)
    with started(runner), serving(runner) as server:
        job_id = stepper.kind.enqueue(Steps(5))
        wait_until(lambda: runner.get(job_id).status.value == "running", 10, "running")
        stream = open_stream(server, job_id)
        assert stream.status == 200
        assert stream.response.getheader("Content-Type") == "text/event-stream"
        assert stream.response.getheader("Transfer-Encoding") == "chunked"
        events = follow_in_step(stream, stepper, 5)
        stream.close()
    assert ids(events) == list(range(8))
    assert {event.kind for event in events} == {"job"}
    assert [event.job["result"] for event in events[2:7]] == [{"done": n} for n in range(1, 6)]
    assert events[-1].job["status"] == "succeeded"
    assert stream.reader.retry == 1000


def test_a_reconnect_with_last_event_id_gets_exactly_what_it_missed_then_goes_on():
    runner = memory_runner()
    stepper = Stepper(runner.kinds)
    with started(runner), serving(runner) as server:
        job_id = stepper.kind.enqueue(Steps(6))
        first = open_stream(server, job_id)
        seen = first.take(2)
        stepper.step()
        seen += first.take(1)
        first.close()  # the connection drops
        stepper.step(3)  # three partial results published while nobody listens
        wait_until(lambda: runner.get(job_id).version == 5, 10, "three more changes")
        again = open_stream(server, job_id, **{"Last-Event-ID": str(seen[-1].id)})
        seen += again.take(3)
        seen += follow_in_step_rest(again, stepper, remaining=3)
    assert ids(seen) == list(range(9))  # nothing lost, nothing repeated
    assert seen[-1].job == {
        "id": job_id, "kind": "steps", "status": "succeeded", "result": {"done": 6}, "error": None,
    }  # fmt: skip


def follow_in_step_rest(stream: LiveStream, stepper: Stepper, *, remaining: int) -> list:
    events = []
    for _ in range(remaining):
        stepper.step()
        events += stream.take(1)
    assert stream.next() is None
    return events


def test_a_reconnect_after_the_history_was_trimmed_starts_with_a_reset():
    runner = memory_runner()
    stepper = Stepper(runner.kinds)
    published = EVENTS_KEPT + 50
    with started(runner), serving(runner) as server:
        job_id = stepper.kind.enqueue(Steps(published))
        first = open_stream(server, job_id)
        seen = first.take(2)
        first.close()
        stepper.step(published)
        wait_until(lambda: runner.get(job_id).version == published + 1, 30, "every publish")
        again = open_stream(server, job_id, **{"Last-Event-ID": str(seen[-1].id)})
        (reset,) = again.take(1)
        assert (reset.id, reset.kind) == (published + 1, "reset")
        assert (reset.job["status"], reset.job["result"]) == ("running", {"done": published})
        (last,) = follow_in_step_rest(again, stepper, remaining=1)
    assert (last.id, last.kind, last.job["status"]) == (published + 2, "job", "succeeded")


def test_fifty_open_streams_leave_ordinary_requests_their_threads():
    runner = memory_runner()
    runner.pause_queue("held")
    with started(runner), serving(runner) as server:
        job_ids = [runner.builtins.noop.enqueue(NoopPayload(), queue="held") for _ in range(50)]
        streams = [open_stream(server, job_id) for job_id in job_ids]
        assert all(stream.status == 200 and ids(stream.take(1)) == [0] for stream in streams)
        # 50 threads are held by streams; the 4 of --http-threads still answer everything else.
        for job_id in job_ids[:20]:
            status, headers, body = request(server, "GET", f"/api/v1/jobs/{job_id}")
            assert (status, body["status"], headers["ETag"]) == (200, "queued", '"0"')
        status, _, body = request(server, "GET", "/api/v1/jobs?queue=held&limit=500")
        assert (status, len(body["jobs"])) == (200, 50)
        status, _, _ = request(server, "POST", "/api/v1/jobs", {"kind": "noop", "payload": {}})
        assert status == 202
        runner.resume_queue("held")
        finals = []

        def read_to_the_end(stream: LiveStream):
            return lambda: finals.append(stream.rest())

        run_in_threads([read_to_the_end(stream) for stream in streams], within=60)
        for stream in streams:
            stream.close()
    assert len(finals) == 50
    assert all(ids(rest) == [1, 2] and rest[-1].job["status"] == "succeeded" for rest in finals)


def test_full_slots_answer_503_with_retry_after_and_the_rest_of_the_api_answers():
    runner = memory_runner(workers=0)
    with serving(runner, slots=2) as server:
        job_id = runner.builtins.noop.enqueue(NoopPayload())
        held = [open_stream(server, job_id) for _ in range(2)]
        assert [ids(stream.take(1)) for stream in held] == [[0], [0]]
        status, headers, body = request(server, "GET", f"/api/v1/jobs/{job_id}/events")
        assert (status, headers["Retry-After"]) == (503, "1")
        assert body == SLOTS_FULL
        long_poll = {"If-None-Match": '"0"', "Prefer": "wait=30"}
        assert request(server, "GET", f"/api/v1/jobs/{job_id}", **long_poll)[0] == 503
        assert request(server, "GET", f"/api/v1/jobs/{job_id}")[0] == 200
        held[0].close()
        # The server notices the client left when the stream next writes (a change, or
        # its keep-alive): the slot is free again then.
        runner.cancel(job_id)
        assert held[1].rest()[-1].job["error"] == "cancelled"
        wait_until(lambda: runner.changes.watched() == 0, 10, "both streams let go")
        again = open_stream(server, job_id)
        assert (again.status, ids(again.rest())) == (200, [0, 1])
        again.close()


def test_stopping_the_server_ends_open_streams_and_long_polls_so_it_drains():
    runner = memory_runner(workers=0)
    job_id = runner.builtins.noop.enqueue(NoopPayload())
    server = HttpServer(
        create_app(runner, api_token=TOKEN), host="127.0.0.1", port=0, threads=4, logger=LOG,
        stream_slots=DEFAULT_STREAM_SLOTS, end_streams=runner.changes.close,
    )  # fmt: skip
    server.start()
    streams = [open_stream(server, job_id) for _ in range(5)]
    assert all(ids(stream.take(1)) == [0] for stream in streams)
    answers = []

    def long_poll():
        answers.append(request(server, "GET", f"/api/v1/jobs/{job_id}",
                               **{"If-None-Match": '"0"', "Prefer": "wait=60"}))  # fmt: skip

    def stop():
        wait_until(lambda: runner.changes.watched() == 6, 10, "the long-poll waiting")
        # Had the streams not ended, the drain would wait for them until the deadline.
        assert server.stop(deadline=time.monotonic() + 30) is True

    run_in_threads([long_poll, stop])
    assert all(stream.rest() == [] for stream in streams)  # each ended, cleanly
    assert answers[0][0] == 304


# -- another process -------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_a_job_another_runner_runs_on_the_same_database_streams_live(engine, tmp_path):
    """The server's runner claims nothing; the job runs on another connection, as another
    process would run it. Each step waits for the stream to show the one before, and a
    handler left waiting 10 s (under the 15 s keep-alive, when the stream would look
    again anyway) fails: only the change notices can make it succeed."""
    with ExitStack() as stack, database_for(engine, tmp_path) as database:
        now = SystemClock().now()
        here = open_store(database, synchronous="full", now=now)
        elsewhere = open_store(database, synchronous="full", now=now)
        stack.callback(here.close)
        stack.callback(elsewhere.close)
        server_runner = Runner(here, SystemClock(), workers=0)
        worker = Runner(elsewhere, SystemClock(), workers=1)
        stepper = Stepper(worker.kinds, patience=10.0)
        watcher = follow_changes(here, server_runner.changes)
        stack.callback(watcher.stop)
        stack.enter_context(started(worker))
        server = stack.enter_context(serving(server_runner))
        job_id = stepper.kind.enqueue(Steps(4))
        stream = open_stream(server, job_id)
        events = follow_in_step(stream, stepper, 4)
        stream.close()
    assert ids(events) == list(range(7))
    assert events[-1].job["status"] == "succeeded"  # failed unacknowledged had a notice been missed
