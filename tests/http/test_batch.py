"""POST /api/v1/jobs/batch: every job checked first, then all stored in one transaction or none."""

from __future__ import annotations

import json

import pytest

from jobtable.core import demo
from tests.http.conftest import AUTH

JSON_AUTH = {**AUTH, "Content-Type": "application/json"}


def post_batch(client, body):
    data = body if isinstance(body, bytes | str) else json.dumps(body)
    return client.simulate_post("/api/v1/jobs/batch", body=data, headers=JSON_AUTH)


def countdown(seconds: int, **options) -> dict:
    return {"kind": "countdown", "payload": {"seconds": seconds}, **options}


@pytest.fixture
def demo_system(system):
    demo.register(system.kinds)
    return system


def stored(system) -> list[str]:
    return sorted(system.store.inner._rows)


def test_a_batch_stores_every_job_and_answers_their_ids_in_order(demo_system, client):
    result = post_batch(client, {"jobs": [countdown(1), countdown(2, priority=4, queue="slow")]})
    assert result.status_code == 202
    ids = result.json["ids"]
    assert set(result.json) == {"ids"}
    assert len(ids) == 2
    assert stored(demo_system) == sorted(ids)
    first, second = (json.loads(demo_system.store.row(job_id)["payload"]) for job_id in ids)
    assert (first, second) == ({"seconds": 1}, {"seconds": 2})
    shown = client.simulate_get(f"/api/v1/jobs/{ids[1]}/detail", headers=AUTH).json
    assert (shown["queue"], shown["priority"]) == ("slow", 4)


def test_a_duplicate_in_a_batch_answers_the_existing_jobs_id(demo_system, client):
    existing = client.simulate_post(
        "/api/v1/jobs", body=json.dumps(countdown(1, unique_key="k")), headers=JSON_AUTH
    ).json["id"]
    result = post_batch(
        client, {"jobs": [countdown(2), countdown(3, unique_key="k"), countdown(4, unique_key="k")]}
    )
    assert result.status_code == 202
    fresh, duplicate, again = result.json["ids"]
    assert duplicate == again == existing
    assert stored(demo_system) == sorted([existing, fresh])


@pytest.mark.parametrize(
    ("jobs", "code", "message"),
    [
        ([{"kind": "countdown", "payload": {"seconds": 1}}, {"kind": "nope", "payload": {}}],
         "unknown_kind", "jobs[1]: unknown job kind"),
        ([{"kind": "countdown", "payload": {"seconds": 1}}] * 2
         + [{"kind": "countdown", "payload": {"seconds": "3"}}],
         "invalid_payload",
         "jobs[2]: payload does not match the job kind: expected an integer @ $.seconds"),
        ([{"kind": "countdown", "payload": {"seconds": 1}, "priority": 12}],
         "invalid_option", "jobs[0]: priority: must be a whole number from 0 (first) to 9 (last)"),
        ([{"kind": "countdown", "payload": {"seconds": 1}, "run_at": "2026-01-01T00:00:00"}],
         "invalid_option", "jobs[0]: run_at: has no offset"),
        ([{"kind": "countdown", "payload": {"seconds": 1}}, {"kind": "countdown"}],
         "invalid_request", "jobs[1]: payload: required"),
        ([{"kind": "countdown", "payload": {"seconds": 1}}, {"payload": {}}],
         "invalid_request", "jobs[1]: kind: required"),
        ([{"kind": "countdown", "payload": {"seconds": 1}, "extra": 1}],
         "invalid_request", "jobs[0]: unknown field 'extra'; a job has kind, payload"),
        ([{"kind": "countdown", "payload": {"seconds": 1}}, "countdown"],
         "invalid_request", "jobs[1]: must be a JSON object with kind and payload"),
        # The first bad item is named, whatever is wrong with the ones after it.
        ([{"kind": "countdown", "payload": {"seconds": 1}, "queue": "a b"},
          {"kind": "nope", "payload": {}}],
         "invalid_option", "jobs[0]: queue: must be"),
        ([{"kind": "nope", "payload": {}},
          {"kind": "countdown", "payload": {"seconds": 1}, "queue": "a b"}, {"kind": "countdown"}],
         "unknown_kind", "jobs[0]: unknown job kind"),
        ([{"kind": "countdown", "payload": {"seconds": "1"}}, {"kind": 7, "payload": {}}],
         "invalid_payload", "jobs[0]: payload does not match"),
    ],
)  # fmt: skip
def test_a_batch_with_one_bad_job_stores_none_and_names_the_first_bad_index(
    demo_system, client, jobs, code, message
):
    result = post_batch(client, {"jobs": jobs})
    assert result.status_code == 400
    assert result.json["error"]["code"] == code
    assert result.json["error"]["message"].startswith(message)
    assert stored(demo_system) == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"jobs": []}, "jobs: must be a list of 1 to 1000 jobs"),
        ({"jobs": [countdown(1)] * 1001}, "jobs: must be a list of 1 to 1000 jobs"),
        ({"jobs": countdown(1)}, "jobs: must be a list of 1 to 1000 jobs"),
        ({}, "jobs: must be a list of 1 to 1000 jobs"),
        ({"jobs": [countdown(1)], "atomic": True}, "unknown field 'atomic'; the body has only jobs"),
        ([countdown(1)], "request body must be a JSON object with jobs, a list of jobs"),
        ("", "request body must be a JSON object with jobs, a list of jobs"),
    ],
)  # fmt: skip
def test_a_batch_that_is_not_a_list_of_1_to_1000_jobs_is_refused(
    demo_system, client, body, message
):
    result = post_batch(client, body if isinstance(body, str) else json.dumps(body))
    assert result.status_code == 400
    assert result.json == {"error": {"code": "invalid_request", "message": message}}
    assert stored(demo_system) == []


def test_a_batch_of_1000_jobs_is_accepted(system, client):
    result = post_batch(client, {"jobs": [{"kind": "noop", "payload": {}}] * 1000})
    assert result.status_code == 202
    assert len(set(result.json["ids"])) == 1000
    assert len(stored(system)) == 1000


def test_a_job_may_nest_as_deep_in_a_batch_as_alone(system, client):
    deep = "[" * 62 + "]" * 62  # with {"payload": {"n": ...}} this is 64 levels in one job
    alone = f'{{"kind":"noop","payload":{{"n":{deep}}}}}'
    single = client.simulate_post("/api/v1/jobs", body=alone, headers=JSON_AUTH)
    batch = post_batch(client, f'{{"jobs":[{alone}]}}')
    # noop refuses the unknown field either way: the depth limit let both through to the kind.
    assert single.json["error"]["code"] == batch.json["error"]["code"] == "invalid_payload"
    too_deep = alone.replace(deep, "[" + deep + "]")
    assert (
        client.simulate_post("/api/v1/jobs", body=too_deep, headers=JSON_AUTH).json["error"][
            "message"
        ]
        == "request body is nested too deeply"
    )
    assert post_batch(client, f'{{"jobs":[{too_deep}]}}').json["error"]["message"] == (
        "request body is nested too deeply"
    )
