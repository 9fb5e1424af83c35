"""A job's event stream, as the dashboard's page reads it: framing, resuming, resets, ending.

The stream's body is iterated here directly where the test must act between
two events (each ``next`` returns once there is something to send).
"""

from __future__ import annotations

import json

import attrs
import falcon.testing
import pytest

from jobtable.core import JobContext, NoopPayload
from jobtable.core.jobs import EVENTS_KEPT
from jobtable.entrypoints.http.app import create_app
from jobtable.entrypoints.http.streams import JobEventStream, StreamSlots
from tests.http.conftest import TOKEN, log_in

UNKNOWN_ID = "01900000-0000-7000-8000-0000000000ff"


@attrs.frozen
class Count:
    times: int


@attrs.frozen
class Counted:
    n: int

    def public(self):
        return {"n": self.n}


def chatty(ctx: JobContext, payload: Count) -> Counted:
    for n in range(payload.times):
        ctx.publish(Counted(n=n))
    return Counted(n=payload.times)


def events_of(body: str) -> list[dict]:
    """Each event of an event-stream body: its fields, the data decoded."""
    found = []
    for block in body.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "data" in fields:
            found.append({**fields, "data": json.loads(fields["data"])})
    return found


def stream(client, browser, job_id: str, **headers: str):
    return browser.get(client, f"/ui/jobs/{job_id}/events", **headers)


def test_a_finished_jobs_stream_tells_every_change_in_order_then_ends(system, client):
    browser = log_in(client)
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    system.runner.drain()
    answer = stream(client, browser, job_id)
    assert answer.status_code == 200
    assert answer.headers["Content-Type"] == "text/event-stream"
    assert answer.text.startswith("retry: 1000\n\n")
    events = events_of(answer.text)
    assert [(e["id"], e["event"], e["data"]["status"]) for e in events] == [
        ("0", "job", "queued"),
        ("1", "job", "running"),
        ("2", "job", "succeeded"),
    ]
    assert events[-1]["data"] == system.runner.get(job_id).to_public()


@pytest.mark.parametrize(
    "headers",
    [{"Last-Event-ID": "1"}, {"query": "?after=1"}, {"Last-Event-ID": "1", "query": "?after=0"}],
)
def test_a_stream_resumes_after_the_last_event_seen(system, client, headers):
    browser = log_in(client)
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    system.runner.drain()
    query = headers.pop("query", "")
    answer = browser.get(client, f"/ui/jobs/{job_id}/events{query}", **headers)
    assert [(e["id"], e["data"]["status"]) for e in events_of(answer.text)] == [("2", "succeeded")]


def test_a_stream_resumed_at_its_end_sends_nothing_and_ends(system, client):
    browser = log_in(client)
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    system.runner.drain()
    assert events_of(stream(client, browser, job_id, **{"Last-Event-ID": "2"}).text) == []


def test_a_reader_further_behind_than_the_kept_history_gets_a_reset_first(system, client):
    system.kinds.register("chatty", chatty, payload=Count)
    job_id = system.runner.enqueue("chatty", {"times": EVENTS_KEPT + 5})
    system.runner.drain()
    browser = log_in(client)
    events = events_of(stream(client, browser, job_id, **{"Last-Event-ID": "1"}).text)
    final = system.runner.get(job_id)
    assert [(e["event"], e["id"]) for e in events] == [("reset", str(final.version))]
    assert events[0]["data"] == final.to_public()


@pytest.mark.parametrize("value", ["abc", "-1", "1.5", "1 2", "9" * 19, "\u0661"])
def test_a_stream_refuses_a_last_event_id_that_is_not_a_version(system, client, value):
    browser = log_in(client)
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    system.runner.drain()  # finished: a value taken by mistake ends the stream, no hang
    answer = client.simulate_get(
        f"/ui/jobs/{job_id}/events",
        headers={**browser.headers, "Last-Event-ID": value.encode("utf-8").decode("latin-1")},
    )
    assert answer.status_code == 400
    assert answer.json["error"]["code"] == "invalid_request"


def test_an_unknown_jobs_stream_is_404(client):
    browser = log_in(client)
    assert stream(client, browser, UNKNOWN_ID).status_code == 404


def test_a_running_stream_sends_each_change_as_it_happens_and_ends_after_the_final_one(system):
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    closed = []
    body = JobEventStream(system.runner, job_id, None, on_close=lambda: closed.append(True))
    assert next(body) == b"retry: 1000\n\n"
    assert events_of(next(body).decode())[0]["data"]["status"] == "queued"
    system.runner.cancel(job_id)  # a change while the reader waits
    cancelled = events_of(next(body).decode())[0]
    assert (cancelled["id"], cancelled["data"]["error"]) == ("1", "cancelled")
    with pytest.raises(StopIteration):
        next(body)
    assert closed == [True]


def test_a_quiet_stream_sends_a_comment_to_keep_the_connection(system):
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    body = JobEventStream(system.runner, job_id, 0, keep_alive=0.01)
    assert next(body) == b"retry: 1000\n\n"
    assert next(body) == b": keep-alive\n\n"
    body.close()


def test_streams_end_when_the_server_stops(system):
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    closed = []
    body = JobEventStream(system.runner, job_id, 0, on_close=lambda: closed.append(True))
    next(body)
    system.runner.changes.close()
    with pytest.raises(StopIteration):
        next(body)
    assert closed == [True]


def test_a_stream_past_the_open_slots_answers_503_and_a_closed_one_gives_its_slot_back(system):
    slots = StreamSlots(1)
    client = falcon.testing.TestClient(
        create_app(system.runner, api_token=TOKEN, clock=system.clock, streams=slots)
    )
    browser = log_in(client)
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    system.runner.drain()
    assert slots.take()  # another stream holds the only slot
    full = stream(client, browser, job_id)
    assert (full.status_code, full.headers["Retry-After"]) == (503, "2")
    slots.release()
    assert stream(client, browser, job_id).status_code == 200
    assert stream(client, browser, job_id).status_code == 200  # the finished stream gave it back
