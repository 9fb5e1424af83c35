"""GET /api/v1/jobs/{id}/events in process: the stream's content, resuming, resets, slots.

The app is called as a WSGI server calls it, and its body read chunk by chunk,
so a test sees each change the moment the stream writes it. Over a real
socket: tests/integration/test_event_streams.py.
"""

from __future__ import annotations

import falcon
import falcon.testing
import pytest

from jobtable.core import NoopPayload, StoreUnavailableError
from jobtable.core.jobs import EVENTS_KEPT
from jobtable.entrypoints.http.app import create_app
from jobtable.entrypoints.http.live import JobEventsResource
from jobtable.entrypoints.http.streams import StreamSlots
from tests.http.conftest import AUTH, TOKEN
from tests.http.test_operations import UNKNOWN_ID
from tests.support.sse import SLOTS_FULL, Event, ids, parse
from tests.support.stepping import Stepper, Steps

PATH = "/api/v1/jobs/{job_id}/events"


def stream(client, job_id: str, **headers: str):
    return client.simulate_get(PATH.format(job_id=job_id), headers={**AUTH, **headers})


def events_of(result) -> list[Event]:
    assert result.status_code == 200, result.text
    events, reader = parse(result.text)
    assert reader.retry == 1000
    return events


@pytest.fixture
def stepper(system):
    return Stepper(system.kinds)


@pytest.fixture
def finished(system, stepper):
    """A job that published three partial results and succeeded: versions 0 to 5."""
    job_id = stepper.kind.enqueue(Steps(3))
    stepper.step(4)
    system.runner.drain()
    return job_id


class Opened:
    """A stream opened as waitress opens it: the body is read a chunk at a time."""

    def __init__(self, app: falcon.App, job_id: str, **headers: str) -> None:
        environ = falcon.testing.create_environ(
            path=PATH.format(job_id=job_id), headers={**AUTH, **headers}
        )
        self.start = falcon.testing.StartResponseMock()
        self.body = app(environ, self.start)
        self.chunks = iter(self.body)
        if self.start.status == "200 OK":
            assert next(self.chunks) == b"retry: 1000\n\n"  # written before the first read

    @property
    def status(self) -> str:
        return self.start.status

    def next_events(self) -> list[Event]:
        return parse(next(self.chunks).decode())[0]

    def close(self) -> None:
        self.body.close()  # what waitress does when the response ends, however it ends


# -- what a stream says ------------------------------------------------------------


def test_a_finished_jobs_stream_tells_its_whole_story_in_order_then_ends(client, finished):
    result = stream(client, finished)
    assert result.headers["Content-Type"] == "text/event-stream"
    assert result.headers["Cache-Control"] == "no-store"
    assert "Content-Length" not in result.headers
    assert result.text.startswith("retry: 1000\n\n")
    events = events_of(result)
    assert ids(events) == [0, 1, 2, 3, 4, 5]
    assert {event.kind for event in events} == {"job"}
    assert [(event.job["status"], event.job["result"]) for event in events] == [
        ("queued", None), ("running", None), ("running", {"done": 1}),
        ("running", {"done": 2}), ("running", {"done": 3}), ("succeeded", {"done": 3}),
    ]  # fmt: skip
    assert all(set(event.job) == {"id", "kind", "status", "result", "error"} for event in events)
    assert all(line.startswith(("retry:", "id:", "event:", "data:")) or line == ""
               for line in result.text.split("\n"))  # fmt: skip


@pytest.mark.parametrize("seen", [0, 1, 2, 3, 4])
def test_resuming_after_any_event_gives_exactly_the_rest_as_they_were(client, finished, seen):
    whole = events_of(stream(client, finished))
    rest = events_of(stream(client, finished, **{"Last-Event-ID": str(seen)}))
    assert rest == whole[seen + 1 :]  # ids, kinds and data alike: nothing lost or repeated


def test_the_query_parameter_serves_clients_that_cannot_set_the_header(client, finished):
    by_parameter = client.simulate_get(
        PATH.format(job_id=finished), headers=AUTH, params={"last_event_id": "3"}
    )
    assert ids(events_of(by_parameter)) == [4, 5]
    # An EventSource reconnecting keeps its URL and sends the header: the header wins.
    both = client.simulate_get(
        PATH.format(job_id=finished),
        headers={**AUTH, "Last-Event-ID": "4"},
        params={"last_event_id": "1"},
    )
    assert ids(events_of(both)) == [5]


def test_resuming_at_the_final_state_is_204_so_an_eventsource_stops_reconnecting(client, finished):
    result = stream(client, finished, **{"Last-Event-ID": "5"})
    assert (result.status_code, result.content) == (204, b"")


def test_an_id_this_job_never_had_gets_a_reset_with_its_state_now(client, finished):
    (reset,) = events_of(stream(client, finished, **{"Last-Event-ID": "77"}))
    assert (reset.id, reset.kind, reset.job["status"]) == (5, "reset", "succeeded")


def test_a_history_trimmed_past_the_last_event_id_starts_with_a_reset(system, client, stepper):
    published = EVENTS_KEPT + 100
    job_id = stepper.kind.enqueue(Steps(published))
    stepper.step(published + 1)
    system.runner.drain()
    final = published + 2  # created, running, each publish, succeeded
    oldest_kept = final - EVENTS_KEPT + 1

    for last_seen in (None, 0, 5, oldest_kept - 2):
        headers = {} if last_seen is None else {"Last-Event-ID": str(last_seen)}
        (reset,) = events_of(stream(client, job_id, **headers))
        assert (reset.id, reset.kind) == (final, "reset"), last_seen
        assert reset.job["result"] == {"done": published}

    kept = events_of(stream(client, job_id, **{"Last-Event-ID": str(oldest_kept - 1)}))
    assert ids(kept) == list(range(oldest_kept, final + 1))
    assert {event.kind for event in kept} == {"job"}


@pytest.mark.parametrize("sent", ["abc", "-1", "1.0", "1" * 19, " "])
def test_a_last_event_id_that_is_no_event_id_is_400(client, finished, sent):
    result = stream(client, finished, **{"Last-Event-ID": sent})
    if sent == " ":  # blank: as if none was sent
        assert ids(events_of(result))[0] == 0
        return
    assert result.status_code == 400
    assert result.json == {
        "error": {
            "code": "invalid_option",
            "message": "last_event_id: must be an event id this stream sent",
        }
    }


def test_an_unknown_job_is_404_before_any_stream(client):
    result = stream(client, UNKNOWN_ID)
    assert result.status_code == 404
    assert result.headers["Content-Type"] == "application/json"
    assert result.json == {"error": {"code": "not_found", "message": "job not found"}}


# -- a live stream ---------------------------------------------------------------------


def test_each_change_is_written_as_it_happens(system, stepper):
    app = create_app(system.runner, api_token=TOKEN)
    system.start()
    job_id = stepper.kind.enqueue(Steps(2))
    system.wait_for(job_id, lambda job: job.status.value == "running")
    opened = Opened(app, job_id)
    assert opened.status == "200 OK"
    assert ids(opened.next_events()) == [0, 1]
    for version, done in ((2, 1), (3, 2)):
        stepper.step()
        (event,) = opened.next_events()  # waits for the change, whenever it comes
        assert (event.id, event.kind, event.job["result"]) == (version, "job", {"done": done})
    stepper.step()
    (last,) = opened.next_events()
    assert (last.id, last.kind, last.job["status"]) == (4, "job", "succeeded")
    with pytest.raises(StopIteration):
        next(opened.chunks)  # ended after the final state
    opened.close()
    assert system.runner.changes.watched() == 0


def test_a_quiet_stream_sends_a_keep_alive_comment_and_reads_again(system):
    app = falcon.App()
    app.add_route(
        "/api/v1/jobs/{job_id}/events",
        JobEventsResource(system.runner, StreamSlots(1), keep_alive=0.01),
    )
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    opened = Opened(app, job_id)
    assert ids(opened.next_events()) == [0]
    assert next(opened.chunks) == b": keep-alive\n\n"
    opened.close()


def test_a_stream_ends_at_once_when_the_server_stops(system):
    app = create_app(system.runner, api_token=TOKEN)
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    opened = Opened(app, job_id)
    assert ids(opened.next_events()) == [0]
    system.runner.changes.close()  # HttpServer.stop does this before it drains
    with pytest.raises(StopIteration):
        next(opened.chunks)
    opened.close()
    assert system.runner.changes.watched() == 0


# -- slots ------------------------------------------------------------------------------


def test_slots_bound_the_open_streams_and_come_back_when_a_client_leaves(system):
    app = create_app(system.runner, api_token=TOKEN, streams=StreamSlots(2))
    client = falcon.testing.TestClient(app)
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    first, second = Opened(app, job_id), Opened(app, job_id)
    assert (first.status, second.status) == ("200 OK", "200 OK")
    assert ids(second.next_events()) == [0]  # subscribed, waiting for the next change

    refused = stream(client, job_id)
    assert refused.status_code == 503
    assert refused.headers["Retry-After"] == "1"
    assert refused.json == SLOTS_FULL
    long_poll = client.simulate_get(
        f"/api/v1/jobs/{job_id}", headers={**AUTH, "If-None-Match": '"0"', "Prefer": "wait=5"}
    )
    assert long_poll.status_code == 503
    assert client.simulate_get(f"/api/v1/jobs/{job_id}", headers=AUTH).status_code == 200

    first.close()  # the client left before its first event: its slot is given back
    third = Opened(app, job_id)
    assert (third.status, ids(third.next_events())) == ("200 OK", [0])
    assert system.runner.changes.watched() == 2
    second.close()
    third.close()
    assert system.runner.changes.watched() == 0


@pytest.mark.parametrize(
    ("error", "logged"),
    [
        (StoreUnavailableError("database unavailable"), "event stream ended: database unavailable"),
        (RuntimeError("secret text"), "event stream ended: unexpected RuntimeError"),
    ],
)
def test_a_read_that_fails_mid_stream_ends_it_so_the_client_reconnects(
    system, caplog, error, logged
):
    app = create_app(system.runner, api_token=TOKEN)
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    opened = Opened(app, job_id)
    assert ids(opened.next_events()) == [0]
    assert opened.start.headers_dict["X-Accel-Buffering"] == "no"  # no proxy holds events back

    def failing(*args, **kwargs):
        raise error

    system.runner.events = failing
    system.runner.changes.changed(job_id)
    with pytest.raises(StopIteration):
        next(opened.chunks)
    opened.close()
    assert logged in caplog.text
    assert "secret text" not in caplog.text
    assert system.runner.changes.watched() == 0
