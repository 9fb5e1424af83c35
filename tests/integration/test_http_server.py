"""The waitress wrapper's graceful stop, with a real socket on loopback."""

from __future__ import annotations

import http.client
import json
import logging
import threading
import time

import falcon
import pytest

from jobtable.entrypoints.http.streams import may_wait
from jobtable.entrypoints.http_pools import SPARE_WAITING_THREADS
from jobtable.entrypoints.http_server import HttpServer


class Slow:
    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def on_get(self, req, resp):
        self.entered.set()
        self.release.wait(30)
        resp.media = {"slow": True}


@pytest.fixture
def slow_server():
    app = falcon.App()
    slow = Slow()
    app.add_route("/slow", slow)
    app.add_route("/fast", type("Fast", (), {"on_get": lambda self, req, resp: None})())
    server = HttpServer(app, host="127.0.0.1", port=0, threads=4, logger=logging.getLogger("t"))
    server.start()
    yield server, slow
    slow.release.set()


def get(address, path, results):
    conn = http.client.HTTPConnection(*address, timeout=30)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        results.append((response.status, response.read()))
    except OSError as error:
        results.append(("error", type(error).__name__))
    finally:
        conn.close()


def test_stop_lets_an_in_flight_request_finish_and_refuses_new_ones(slow_server):
    server, slow = slow_server
    address = server.address
    results: list = []
    request = threading.Thread(target=get, args=(address, "/slow", results))
    request.start()
    assert slow.entered.wait(10)

    stopped: list[bool] = []
    stopper = threading.Thread(
        target=lambda: stopped.append(server.stop(deadline=time.monotonic() + 20))
    )
    stopper.start()

    refused: list = []
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # the listener closes promptly
        refused.clear()
        get(address, "/fast", refused)  # served, or reset if it raced the close
        if refused[0] == ("error", "ConnectionRefusedError"):
            break
    assert refused[0] == ("error", "ConnectionRefusedError")
    assert stopped == []  # still waiting for the slow request

    slow.release.set()
    request.join(10)
    stopper.join(10)
    assert results == [(200, b'{"slow": true}')]
    assert stopped == [True]


def test_stop_gives_up_on_a_request_at_the_deadline(slow_server):
    server, slow = slow_server
    results: list = []
    request = threading.Thread(target=get, args=(server.address, "/slow", results))
    request.start()
    assert slow.entered.wait(10)
    assert server.stop(deadline=time.monotonic() + 0.2) is False
    slow.release.set()
    request.join(10)


def test_an_idle_keep_alive_connection_does_not_hold_the_stop(slow_server):
    server, _ = slow_server
    conn = http.client.HTTPConnection(*server.address, timeout=10)
    conn.request("GET", "/fast")
    assert conn.getresponse().read() is not None
    assert server.stop(deadline=time.monotonic() + 20) is True  # False had it waited for it
    conn.close()


def test_a_keep_alive_client_that_keeps_asking_is_told_to_close_once_stop_begins(slow_server):
    server, _ = slow_server
    conn = http.client.HTTPConnection(*server.address, timeout=30)
    seen: list[str | None] = []
    asking = threading.Event()

    def keep_asking() -> None:
        try:
            while True:
                conn.request("GET", "/fast")
                response = conn.getresponse()
                response.read()
                seen.append(response.getheader("Connection"))
                asking.set()
                if response.will_close:
                    return
        except (OSError, http.client.HTTPException):
            seen.append("dropped")

    client = threading.Thread(target=keep_asking)
    client.start()
    assert asking.wait(10)
    assert server.stop(deadline=time.monotonic() + 60)  # drained, long before the deadline
    client.join(30)
    assert not client.is_alive()
    assert seen[-1] in ("close", "dropped")
    assert seen[:-1] and set(seen[:-1]) == {None}  # kept alive until the stop


# -- two pools: ordinary requests, and those that may wait ----------------------------


@pytest.mark.parametrize(
    ("method", "path", "headers", "waits"),
    [
        ("GET", "/api/v1/jobs/j1/events", {}, True),
        ("GET", "//api/v1/jobs/j1/events/", {}, True),
        ("GET", "/ui/jobs/j1/events", {}, True),
        ("GET", "/ui/jobs/j1", {}, False),
        ("GET", "/api/v1/jobs/j1", {"IF_NONE_MATCH": '"1"', "PREFER": "wait=5"}, True),
        ("GET", "/api/v1/jobs/j1", {"IF_NONE_MATCH": '"1"'}, False),
        ("GET", "/api/v1/jobs/j1", {"PREFER": "wait=5"}, False),
        ("POST", "/api/v1/jobs/j1/events", {}, False),
        ("GET", "/api/v1/jobs/j1/detail", {"IF_NONE_MATCH": "*", "PREFER": "wait=5"}, False),
        ("GET", "/api/v1/jobs", {}, False),
        ("GET", "/health", {}, False),
    ],
)
def test_streams_and_long_polls_are_told_from_other_requests(method, path, headers, waits):
    assert may_wait(method, path, headers) is waits


class Where:
    """Says which thread served it; its events wait until released."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.waiting = threading.Semaphore(0)

    def on_get(self, req, resp, **params):
        if req.path.endswith("/events"):
            self.waiting.release()
            self.release.wait(30)
        resp.media = {"thread": threading.current_thread().name}


@pytest.fixture
def where_server():
    app = falcon.App()
    where = Where()
    for path in ("/api/v1/jobs/{job_id}", "/api/v1/jobs/{job_id}/events", "/other"):
        app.add_route(path, where)
    server = HttpServer(
        app, host="127.0.0.1", port=0, threads=1, stream_slots=1, logger=logging.getLogger("t")
    )
    server.start()
    yield server, where
    where.release.set()
    server.stop(deadline=time.monotonic() + 10)


def thread_of(address, path, headers=None) -> str:
    conn = http.client.HTTPConnection(*address, timeout=30)
    try:
        conn.request("GET", path, headers=headers or {})
        return json.loads(conn.getresponse().read())["thread"]
    finally:
        conn.close()


def test_waiting_requests_run_on_the_stream_threads_and_the_rest_on_their_own(where_server):
    server, where = where_server
    where.release.set()
    long_poll = {"If-None-Match": '"1"', "Prefer": "wait=5"}
    assert thread_of(server.address, "/other") == "jobtable-request-0"
    assert thread_of(server.address, "/api/v1/jobs/j1") == "jobtable-request-0"
    assert thread_of(server.address, "/api/v1/jobs/j1", long_poll).startswith("jobtable-stream-")
    assert thread_of(server.address, "/api/v1/jobs/j1/events").startswith("jobtable-stream-")


def test_ordinary_requests_answer_while_every_stream_thread_waits(where_server):
    server, where = where_server
    held = [threading.Thread(target=thread_of, args=(server.address, "/api/v1/jobs/j/events"))
            for _ in range(1 + SPARE_WAITING_THREADS)]  # fmt: skip
    for thread in held:
        thread.start()
    for _ in held:
        assert where.waiting.acquire(timeout=10)  # each stream thread holds one
    assert thread_of(server.address, "/other") == "jobtable-request-0"
    where.release.set()
    for thread in held:
        thread.join(10)


def stream_threads() -> list[threading.Thread]:
    """The stream pool's live threads, as objects: another server's of this process may
    still be ending, under the same names."""
    return [t for t in threading.enumerate() if t.name.startswith("jobtable-stream-")]


def test_stream_threads_start_when_streams_come_not_one_per_slot_ahead():
    app = falcon.App()
    where = Where()
    app.add_route("/api/v1/jobs/{job_id}/events", where)
    before = set(stream_threads())
    server = HttpServer(
        app, host="127.0.0.1", port=0, threads=1, stream_slots=50, logger=logging.getLogger("t")
    )
    server.start()
    held: list[threading.Thread] = []
    try:
        started = set(stream_threads()) - before
        assert len(started) == SPARE_WAITING_THREADS  # idle: the spares only, not 50 more
        streams = SPARE_WAITING_THREADS + 3
        held = [threading.Thread(target=thread_of, args=(server.address, "/api/v1/jobs/j/events"))
                for _ in range(streams)]  # fmt: skip
        for thread in held:
            thread.start()
        for _ in held:
            assert where.waiting.acquire(timeout=10)  # every stream has a thread of its own
        assert len(set(stream_threads()) - before) == streams
    finally:
        where.release.set()
        for thread in held:
            thread.join(10)
        server.stop(deadline=time.monotonic() + 10)


def test_a_stop_after_the_loop_closed_its_trigger_still_stops_cleanly(slow_server):
    """The loop closes its wake-up pipe on a hang-up; a stop must not fail writing to it."""
    server, _ = slow_server
    trigger = server._server.trigger
    closed = threading.Event()
    trigger.pull_trigger(lambda: (trigger.close(), closed.set()))
    assert closed.wait(10)
    assert server.stop(deadline=time.monotonic() + 5)
