"""POST /api/v1/jobs with enqueue options: queue, priority, run_at, delay, timeout, unique_key."""

from __future__ import annotations

import datetime
import json

import pytest

from tests.http.conftest import AUTH

JSON_AUTH = {**AUTH, "Content-Type": "application/json"}


def post(client, body: dict):
    return client.simulate_post("/api/v1/jobs", body=json.dumps(body), headers=JSON_AUTH)


def noop(**options) -> dict:
    return {"kind": "noop", "payload": {}, **options}


def stored(system) -> int:
    return len(system.store.inner._rows)


def detail(client, job_id: str) -> dict:
    result = client.simulate_get(f"/api/v1/jobs/{job_id}/detail", headers=AUTH)
    assert result.status_code == 200, result.text
    return result.json


def test_every_option_is_stored_with_the_job(system, client):
    result = post(
        client,
        noop(queue="mail", priority=3, run_at="2026-03-04T05:06:07+02:00", timeout=2.5,
             unique_key="welcome:42"),
    )  # fmt: skip
    assert result.status_code == 202
    job_id = result.json["id"]
    assert result.json == {"id": job_id}
    assert result.headers["Location"] == f"/api/v1/jobs/{job_id}"
    shown = detail(client, job_id)
    assert (shown["queue"], shown["priority"], shown["timeout"]) == ("mail", 3, 2.5)
    assert shown["run_at"] == "2026-03-04T03:06:07+00:00"  # the same instant, in UTC
    assert system.store.row(job_id)["unique_key"] == "welcome:42"


def test_a_delay_is_counted_from_the_servers_clock(system, client):
    job_id = post(client, noop(delay=90)).json["id"]
    due = system.clock.now() + datetime.timedelta(seconds=90)
    assert detail(client, job_id)["run_at"] == due.isoformat()
    assert system.runner.drain() == []  # not due yet
    system.clock.advance(90)
    assert [job.id for job in system.runner.drain()] == [job_id]


def test_null_options_keep_the_kinds_defaults(system, client):
    job_id = post(
        client, noop(queue=None, priority=None, run_at=None, delay=None, timeout=None,
                     unique_key=None),
    ).json["id"]  # fmt: skip
    shown = detail(client, job_id)
    assert (shown["queue"], shown["priority"], shown["timeout"]) == ("default", 0, None)
    assert shown["run_at"] == system.clock.now().isoformat()


def test_a_unique_key_duplicate_answers_200_with_the_existing_jobs_id(system, client):
    first = post(client, noop(unique_key="nightly-report"))
    assert first.status_code == 202
    again = post(client, noop(unique_key="nightly-report"))
    assert again.status_code == 200
    assert again.json == {"id": first.json["id"], "duplicate": True}
    assert again.headers["Location"] == f"/api/v1/jobs/{first.json['id']}"
    assert stored(system) == 1
    other = post(client, noop(unique_key="another-report"))
    assert other.status_code == 202
    assert other.json["id"] != first.json["id"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"queue": "no spaces"}, "queue: must be 1-64 letters, digits, '_', '.' or '-', "
                                  "starting with a letter or digit"),
        ({"queue": 7}, "queue: must be 1-64 letters"),
        ({"priority": 10}, "priority: must be a whole number from 0 (first) to 9 (last)"),
        ({"priority": -1}, "priority: must be a whole number from 0"),
        ({"priority": "3"}, "priority: must be a whole number from 0"),
        ({"priority": 2.0}, "priority: must be a whole number from 0"),
        ({"priority": True}, "priority: must be a whole number from 0"),
        ({"run_at": "2026-03-04T05:06:07"}, "run_at: has no offset; say which zone"),
        ({"run_at": "2026-03-04 05:06"}, "run_at: has no offset"),
        ({"run_at": "tomorrow"}, "run_at: must be an RFC 3339 time with an offset, "
                                 "e.g. 2030-01-02T03:04:05Z"),
        ({"run_at": "2026-03-04"}, "run_at: must be an RFC 3339 time with an offset"),
        ({"run_at": 1767225600}, "run_at: must be an RFC 3339 time with an offset"),
        ({"run_at": "2026-02-30T00:00:00Z"}, "run_at: is not a valid date and time"),
        ({"run_at": "9999-12-31T23:00:00-05:00"}, "run_at: is outside the years 1 to 9999"),
        ({"run_at": "2200-01-01T00:00:00Z"}, "run_at: must be at most a century from now"),
        ({"run_at": "2026-03-04T05:06:07Z", "delay": 5}, "run_at: give run_at or delay, not both"),
        ({"delay": -1}, "delay: must be a number of seconds >= 0 and at most 3153600000 (a century)"),
        ({"delay": "30s"}, "delay: must be a number of seconds >= 0 and at most 3153600000 (a century)"),
        ({"delay": 1e30}, "delay: must be a number of seconds >= 0 and at most 3153600000 (a century)"),
        ({"delay": 10**400}, "delay: must be a number of seconds >= 0 and at most 3153600000 (a century)"),
        ({"delay": -(10**400)}, "delay: must be a number of seconds >= 0 and at most 3153600000 (a century)"),
        ({"timeout": 0}, "timeout: must be a number of seconds > 0 and at most 3153600000 (a century)"),
        ({"timeout": False}, "timeout: must be a number of seconds > 0 and at most 3153600000 (a century)"),
        ({"unique_key": ""}, "unique_key: must be a string of 1 to 255 characters"),
        ({"unique_key": "k" * 256}, "unique_key: must be a string of 1 to 255 characters"),
        ({"unique_key": ["a"]}, "unique_key: must be a string of 1 to 255 characters"),
    ],
)  # fmt: skip
def test_a_bad_option_is_refused_naming_the_field_and_stores_nothing(
    system, client, options, message
):
    result = post(client, noop(**options))
    assert result.status_code == 400
    assert result.json["error"]["code"] == "invalid_option"
    assert result.json["error"]["message"].startswith(message)
    assert stored(system) == 0


SECRET = "sk-live-5e1f"
ECHO_BAIT = [
    {"run_at": SECRET}, {"queue": SECRET + " x"}, {"delay": SECRET}, {"timeout": SECRET},
    {"priority": SECRET}, {"unique_key": SECRET + "\u0000"}, {"run_at": SECRET, "delay": 1},
]  # fmt: skip


@pytest.mark.parametrize("options", ECHO_BAIT)
def test_an_option_refusal_never_echoes_the_submitted_value(system, client, options):
    result = post(client, noop(**options))
    assert result.status_code == 400
    assert SECRET not in result.text


@pytest.mark.parametrize("options", ECHO_BAIT)
def test_an_option_refusal_in_a_batch_never_echoes_the_submitted_value(system, client, options):
    body = {"jobs": [noop(), noop(**options)]}
    result = client.simulate_post("/api/v1/jobs/batch", body=json.dumps(body), headers=JSON_AUTH)
    assert result.status_code == 400
    assert result.json["error"]["message"].startswith("jobs[1]: ")
    assert SECRET not in result.text
    assert stored(system) == 0


@pytest.mark.parametrize(
    "run_at",
    ["2026-03-04T05:06:07Z", "2026-03-04t05:06:07z", "2026-03-04 05:06:07Z",
     "2026-03-04T07:06:07.000000000+02:00", "2026-03-04T00:06:07-05:00"],
)  # fmt: skip
def test_every_rfc_3339_spelling_of_an_instant_is_the_same_run_at(system, client, run_at):
    job_id = post(client, noop(run_at=run_at)).json["id"]
    assert detail(client, job_id)["run_at"] == "2026-03-04T05:06:07+00:00"


def test_options_are_checked_before_the_kind_and_payload_are_looked_up(system, client):
    """Each request gets one refusal, the first in the order the body is read."""
    result = post(client, {"kind": "nope", "payload": {}, "priority": 11})
    assert result.json["error"]["code"] == "invalid_option"
    result = post(client, {"kind": "nope", "payload": {}, "priority": 1})
    assert result.json["error"]["code"] == "unknown_kind"
