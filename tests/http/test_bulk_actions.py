"""POST /api/v1/jobs/cancel and /api/v1/jobs/retry: every job a filter matches, counted first
with a dry run, audited in the log, and every bad request a 400 that changes nothing."""

from __future__ import annotations

import json

import pytest

from jobtable.core import Status
from tests.http.conftest import AUTH
from tests.unit.kinds_for_tests import CountPayload, count


def post(client, path: str, body: object):
    return client.simulate_post(
        path, headers={**AUTH, "Content-Type": "application/json"}, body=json.dumps(body)
    )


def test_a_filtered_bulk_cancel_and_retry_over_http(system, client):
    kind = system.kinds.register("count", count, payload=CountPayload)
    system.runner.pause_queue("held")
    held = [kind.enqueue(CountPayload(steps=i), queue="held") for i in range(5)]
    elsewhere = kind.enqueue(CountPayload(), queue="other")
    system.runner.pause_queue("other")
    which = {"filter": {"queue": "held", "state": "available"}}

    dry = post(client, "/api/v1/jobs/cancel", {**which, "dry_run": True})
    assert (dry.status_code, dry.json) == (200, {"matched": 5, "changed": 0})
    assert {system.runner.get(job_id).status for job_id in held} == {Status.QUEUED}

    done = post(client, "/api/v1/jobs/cancel", which)
    assert (done.status_code, done.json) == (200, {"matched": 5, "changed": 5})
    assert {system.runner.detail(job_id).state for job_id in held} == {"cancelled"}
    assert system.runner.detail(elsewhere).state == "available"
    assert post(client, "/api/v1/jobs/cancel", which).json == {"matched": 0, "changed": 0}
    assert "bulk cancel done by=http filter=state=available queue=held matched=5 changed=5" in (
        system.logs.text
    )

    retried = post(client, "/api/v1/jobs/retry", {"filter": {"state": "cancelled"}})
    assert (retried.status_code, retried.json) == (200, {"matched": 5, "changed": 5})
    assert {system.runner.detail(job_id).state for job_id in held} == {"available"}


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        ("/api/v1/jobs/retry", {"filter": {"state": "running"}}, "filter.state: retry applies to"),
        (
            "/api/v1/jobs/cancel",
            {"filter": {"state": "failed"}},
            "filter.state: cancel applies to jobs scheduled, available, retrying, running",
        ),
        ("/api/v1/jobs/cancel", {}, "filter: must be an object, {} for every job"),
        ("/api/v1/jobs/cancel", {"filter": []}, "filter: must be an object"),
        ("/api/v1/jobs/cancel", {"filter": {}, "dry_run": "yes"}, "dry_run: must be true or"),
        ("/api/v1/jobs/cancel", {"filter": {}, "all": True}, "all: not a field; use filter"),
        ("/api/v1/jobs/cancel", {"filter": {"status": "queued"}}, "filter.status: is not a filter"),
        ("/api/v1/jobs/cancel", {"filter": {"state": "gone"}}, "filter.state: must be one of"),
        ("/api/v1/jobs/cancel", {"filter": {"queue": "a b"}}, "filter.queue: must be 1-64"),
        (
            "/api/v1/jobs/cancel",
            {"filter": {"created_after": "2030-01-02T03:04:05"}},
            "filter.created_after: has no offset",
        ),
    ],
)
def test_a_bad_bulk_request_is_a_400_that_changes_nothing(system, client, path, body, message):
    kind = system.kinds.register("count", count, payload=CountPayload)
    system.runner.pause_queue("held")
    job_id = kind.enqueue(CountPayload(), queue="held")
    answer = post(client, path, body)
    assert answer.status_code == 400, answer.text
    assert answer.json["error"]["code"] == "invalid_option"
    assert answer.json["error"]["message"].startswith(message), answer.json
    assert system.runner.detail(job_id).state == "available"
