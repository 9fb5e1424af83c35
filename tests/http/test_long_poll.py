"""GET /api/v1/jobs/{id} with ETag, If-None-Match and Prefer: wait=N (RFC 7240)."""

from __future__ import annotations

import falcon.testing
import pytest

from jobtable.core import NoopPayload
from jobtable.entrypoints.http.app import create_app
from jobtable.entrypoints.http.conditional import none_match, wait_preference
from jobtable.entrypoints.http.streams import StreamSlots
from tests.e2e.conftest import wait_until
from tests.http.conftest import AUTH, TOKEN
from tests.http.test_operations import UNKNOWN_ID, conforming
from tests.support.sse import SLOTS_FULL
from tests.support.stepping import Stepper, Steps
from tests.support.threads import run_in_threads

PATH = "/api/v1/jobs/{job_id}"


def get(client, job_id: str, **headers: str):
    result = client.simulate_get(PATH.format(job_id=job_id), headers={**AUTH, **headers})
    if result.status_code == 200 or result.status_code >= 400:
        conforming(result, PATH)
    return result


def client_with(system, *, slots: int) -> falcon.testing.TestClient:
    return falcon.testing.TestClient(
        create_app(system.runner, api_token=TOKEN, streams=StreamSlots(slots))
    )


def waiting_readers(system, count: int) -> None:
    """Until ``count`` requests wait on the job's changes (subscribed, so none is missed)."""
    wait_until(lambda: system.runner.changes.watched() == count, 10, f"{count} waiting")


@pytest.fixture
def stepper(system):
    made = Stepper(system.kinds)
    system.start()
    return made


def running(system, stepper, steps: int = 3) -> tuple[str, str]:
    """A job whose handler runs and waits to be stepped; its id and ETag now."""
    job_id = stepper.kind.enqueue(Steps(steps))
    job = system.wait_for(job_id, lambda job: job is not None and job.status.value == "running")
    return job_id, f'"{job.version}"'


# -- the pure parts ------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        (None, None), ("", None), ("wait=5", 5), ("WAIT=5", 5), ("wait = 5", 5), ('wait="7"', 7),
        ("respond-async, wait=10", 10), ("wait=10;x=y", 10), ("wait=0", 0), ("wait=60", 60),
        ("wait=61", 60), ("wait=600", 60), ("wait=" + "9" * 50, 60), ("wait=007", 7),
        ("wait=3, wait=9", 3), ("wait=-1", None), ("wait=1.5", None), ("wait=", None),
        ("wait", None), ("waiting=5", None), ("return=minimal", None), ("wait=\uff15", None),
    ],
)  # fmt: skip
def test_the_wait_preference_is_read_as_rfc_7240_says(header, seconds):
    assert wait_preference(header) == seconds


def test_if_none_match_compares_weakly_and_star_matches_any():
    assert none_match(["3"], 3) and none_match(["1", "3"], 3) and none_match(["*"], 9)
    assert not none_match(["2"], 3) and not none_match(None, 3) and not none_match([], 3)


# -- ETag and 304 --------------------------------------------------------------


def test_get_carries_a_strong_etag_that_changes_whenever_the_job_does(system, client, stepper):
    job_id, tag = running(system, stepper, steps=1)
    seen = [get(client, job_id).headers["ETag"]]
    stepper.step()
    system.wait_for(job_id, lambda job: job.result is not None)
    seen.append(get(client, job_id).headers["ETag"])
    stepper.step()
    system.wait_for(job_id)
    seen.append(get(client, job_id).headers["ETag"])
    assert seen[0] == tag
    assert all(tag.startswith('"') and tag.endswith('"') for tag in seen)  # strong: no W/
    assert len(set(seen)) == 3


def test_if_none_match_with_the_current_etag_is_304_with_the_etag_and_no_body(system, client):
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    tag = get(client, job_id).headers["ETag"]
    for sent in (tag, f"W/{tag}", f'"99", {tag}', "*"):
        result = get(client, job_id, **{"If-None-Match": sent})
        assert (result.status_code, result.content) == (304, b""), sent
        assert result.headers["ETag"] == tag
        assert "Preference-Applied" not in result.headers


def test_if_none_match_with_another_etag_answers_the_job(system, client):
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    old = get(client, job_id).headers["ETag"]
    system.runner.drain()
    result = get(client, job_id, **{"If-None-Match": old})
    assert result.status_code == 200
    assert result.json["status"] == "succeeded"
    assert result.headers["ETag"] != old


# -- Prefer: wait ----------------------------------------------------------------


def long_poll(client, job_id: str, tag: str, wait: str = "60"):
    return get(client, job_id, **{"If-None-Match": tag, "Prefer": f"wait={wait}"})


def while_waiting(system, poll, then):
    """``poll()`` in a thread; once it waits on the job, ``then()``. What ``poll`` answered."""
    answers = []

    def once_waiting():
        waiting_readers(system, 1)
        then()

    run_in_threads([lambda: answers.append(poll()), once_waiting])
    return answers[0]


def test_a_long_poll_answers_as_soon_as_the_handler_publishes(system, client, stepper):
    job_id, tag = running(system, stepper)
    answer = while_waiting(system, lambda: long_poll(client, job_id, tag), stepper.step)
    assert answer.status_code == 200
    assert answer.json["result"] == {"done": 1}
    assert answer.headers["ETag"] != tag
    assert answer.headers["Preference-Applied"] == "wait=60"
    stepper.step(3)


def test_a_long_poll_answers_304_once_its_wait_passes_unchanged(system, client):
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    tag = get(client, job_id).headers["ETag"]
    result = long_poll(client, job_id, tag, wait="1")
    assert (result.status_code, result.content) == (304, b"")
    assert result.headers["ETag"] == tag
    assert result.headers["Preference-Applied"] == "wait=1"
    assert system.runner.changes.watched() == 0  # it let go of the job


def test_a_wait_over_60_seconds_is_clamped_to_60_and_says_so(system, client, stepper):
    job_id, tag = running(system, stepper)
    answer = while_waiting(system, lambda: long_poll(client, job_id, tag, "600"), stepper.step)
    assert answer.status_code == 200
    assert answer.headers["Preference-Applied"] == "wait=60"
    stepper.step(3)


def test_a_changed_job_answers_at_once_whatever_the_wait(system, client):
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    old = get(client, job_id).headers["ETag"]
    system.runner.drain()
    result = long_poll(client, job_id, old)
    assert result.status_code == 200
    assert result.headers["Preference-Applied"] == "wait=60"
    assert system.runner.changes.watched() == 0  # it never waited


def test_prefer_wait_without_if_none_match_answers_at_once_taking_no_slot(system, stepper):
    client = client_with(system, slots=1)
    job_id, tag = running(system, stepper)
    plain = []

    def ask_without_an_etag():
        plain.append(get(client, job_id, Prefer="wait=60"))  # 503 had it wanted the slot
        stepper.step()

    while_waiting(system, lambda: long_poll(client, job_id, tag), ask_without_an_etag)
    assert (plain[0].status_code, plain[0].json["status"]) == (200, "running")
    assert "Preference-Applied" not in plain[0].headers
    stepper.step(3)


def test_a_long_poll_that_finds_no_slot_answers_503_with_retry_after(system, stepper):
    client = client_with(system, slots=1)
    job_id, tag = running(system, stepper)
    seen = {}

    def ask_while_it_waits():
        seen["refused"] = long_poll(client, job_id, tag, wait="5")
        seen["plain"] = get(client, job_id)  # ordinary requests need no slot
        stepper.step()

    first = while_waiting(system, lambda: long_poll(client, job_id, tag), ask_while_it_waits)
    refused = seen["refused"]
    assert refused.status_code == 503
    assert refused.headers["Retry-After"] == "1"
    assert refused.json == SLOTS_FULL
    assert (seen["plain"].status_code, first.status_code) == (200, 200)
    stepper.step(3)


def test_a_long_poll_ends_at_once_with_304_when_the_server_stops(system, client, stepper):
    job_id, tag = running(system, stepper)
    # HttpServer.stop closes the hub first: every wait ends.
    answer = while_waiting(
        system, lambda: long_poll(client, job_id, tag), system.runner.changes.close
    )
    assert (answer.status_code, answer.headers["ETag"]) == (304, tag)
    stepper.step(4)


def test_a_long_poll_for_an_unknown_job_is_404(client):
    result = get(client, UNKNOWN_ID, **{"If-None-Match": '"0"', "Prefer": "wait=60"})
    assert result.status_code == 404
    assert result.json == {"error": {"code": "not_found", "message": "job not found"}}
