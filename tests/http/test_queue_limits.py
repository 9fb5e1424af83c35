"""PATCH /api/v1/queues/{name}: a queue's limits set at run time, shown by GET /api/v1/queues
with their use, honoured by claims (the JobTestKit's drain on its fake clock too), and said
in a held-back job's detail; bad limits are refused 400 naming the field, changing nothing."""

from __future__ import annotations

import datetime
import json
import threading

import pytest

from jobtable.core import JobContext, NoopPayload
from tests.http.conftest import AUTH
from tests.http.test_operations import Done, Steps, conforming, get_detail, handler_runs, queues

JSON_AUTH = {**AUTH, "Content-Type": "application/json"}


def patch(client, name: str, body: object):
    result = client.simulate_patch(
        f"/api/v1/queues/{name}", body=json.dumps(body), headers=JSON_AUTH
    )
    if result.status_code in (200, 400):
        conforming(result, "/api/v1/queues/{name}", "patch")
    return result


def shown(client, name: str) -> dict:
    (queue,) = [queue for queue in queues(client) if queue["name"] == name]
    return queue


def test_limits_are_set_kept_when_left_out_and_removed_by_null(client):
    set_both = patch(client, "mail", {"limit": 2, "rate": {"n": 10, "per": 60}})
    assert set_both.status_code == 200
    assert (set_both.json["limit"], set_both.json["rate"]) == (2, {"n": 10, "per": 60.0})
    assert shown(client, "mail")["limit"] == 2  # listed though it holds no job
    only_rate = patch(client, "mail", {"rate": {"n": 5, "per": 1.5}})
    assert (only_rate.json["limit"], only_rate.json["rate"]) == (2, {"n": 5, "per": 1.5})
    no_limit = patch(client, "mail", {"limit": None})
    assert (no_limit.json["limit"], no_limit.json["rate"]) == (None, {"n": 5, "per": 1.5})
    assert patch(client, "mail", {"rate": None}).json["rate"] is None
    assert [queue["name"] for queue in queues(client)] == []  # nothing left to show


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": -1}, "limit"),
        ({"limit": "2"}, "limit"),
        ({"limit": True}, "limit"),
        ({"limit": 1.5}, "limit"),
        ({"rate": {"n": 0, "per": 60}}, "rate"),
        ({"rate": {"n": 5, "per": 0}}, "rate"),
        ({"rate": {"n": 5, "per": 10**9}}, "rate"),
        ({"rate": {"n": 5}}, "rate"),
        ({"rate": {}}, "rate"),
        ({"limit": 2**31}, "limit"),
        ({"rate": {"n": 2**63, "per": 60}}, "rate"),
        ({"rate": {"n": 5, "per": 60, "burst": 2}}, "rate"),
        ({"rate": 5}, "rate"),
        ({"limits": 2}, "limits"),
    ],
)
def test_a_bad_limit_is_refused_naming_its_field_and_changes_nothing(client, body, field):
    assert patch(client, "mail", {"limit": 3}).status_code == 200
    refused = patch(client, "mail", body)
    assert refused.status_code == 400
    assert refused.json["error"]["code"] == "invalid_option"
    assert refused.json["error"]["message"].startswith(f"{field}: ")
    assert (shown(client, "mail")["limit"], shown(client, "mail")["rate"]) == (3, None)


def test_a_bad_queue_name_or_body_is_refused(client):
    assert patch(client, "no%20spaces", {"limit": 1}).json["error"]["code"] == "invalid_option"
    not_json = client.simulate_patch("/api/v1/queues/mail", body="limit=2", headers=JSON_AUTH)
    assert not_json.status_code == 400
    assert queues(client) == []


def test_a_queue_limit_holds_jobs_back_and_their_detail_and_the_queue_say_so(system, client):
    release = threading.Event()

    def held(ctx: JobContext, payload: Steps) -> Done:
        ctx.publish(Done())  # shows its handler runs
        release.wait(timeout=60)
        return Done()

    kind = system.kinds.register("held", held, payload=Steps)
    assert patch(client, "mail", {"limit": 1}).status_code == 200
    ids = [kind.enqueue(Steps(), queue="mail") for _ in range(3)]
    system.start()
    system.wait_for(ids[0], handler_runs)
    queue = shown(client, "mail")
    assert (queue["running"], queue["held_back"], queue["limit"]) == (1, 2, 1)
    assert get_detail(client, ids[1])["waiting"] == [
        "held back by its queue's limit: 1 of 1 running"
    ]
    release.set()
    for job_id in ids:
        assert system.wait_for(job_id).status.value == "succeeded"


def test_a_queue_rate_holds_drain_and_the_runner_on_the_fake_clock_and_says_when(system, client):
    noop = system.runner.builtins.noop
    ids = [noop.enqueue(NoopPayload(), queue="mail") for _ in range(3)]
    assert patch(client, "mail", {"rate": {"n": 2, "per": 60}}).status_code == 200
    first = system.clock.now()
    assert [job.id for job in system.runner.drain()] == ids[:2]
    assert system.runner.drain() == []  # the third waits for the window
    system.start()  # a live runner serves it: its detail says what holds it
    queue = shown(client, "mail")
    assert (queue["held_back"], queue["counts"]["queued"]) == (1, 1)
    opens = (first + datetime.timedelta(seconds=60)).isoformat()
    waiting = get_detail(client, ids[2])["waiting"]
    assert f"held back by its queue's rate: 2 of 2 starts in 60 s; may start at {opens}" in waiting
    system.clock.advance(61)  # the runner sleeps until then, and takes it
    assert system.wait_for(ids[2]).status.value == "succeeded"
