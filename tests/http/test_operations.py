"""A job's detail, cancel, queues and runners over HTTP, each answer checked against the document.

schemathesis (test_openapi.py) sends what it generates, which rarely reaches a
running job, a retry or a registered runner; these tests make each of those
happen and check the answer against the OpenAPI document too.
"""

from __future__ import annotations

import datetime
import json
import os
import threading

import attrs
import falcon.testing
import jsonschema_rs
import pytest

from jobtable.adapters.memory import MemoryStore
from jobtable.core import Failure, JobContext, NoopPayload, Runner
from jobtable.entrypoints.http.app import create_app
from jobtable.entrypoints.http.openapi import openapi_document
from tests.http.conftest import AUTH, TOKEN, log_in
from tests.support.harness import JobSystem
from tests.support.states import states

DOCUMENT = openapi_document("test")
UNKNOWN_ID = "01900000-0000-7000-8000-0000000000ff"
PUBLIC_KEYS = {"id", "kind", "status", "result", "error"}


def conforming(result, path: str, method: str = "get"):
    """``result``, once its body matches what the document says of its status."""
    answer = DOCUMENT["paths"][path][method]["responses"][str(result.status_code)]
    schema = answer["content"]["application/json"]["schema"]
    validator = jsonschema_rs.Draft202012Validator(
        {**schema, "components": DOCUMENT["components"]}, validate_formats=True
    )
    validator.validate(result.json)
    return result


def client_for(runner: Runner) -> falcon.testing.TestClient:
    return falcon.testing.TestClient(create_app(runner, api_token=TOKEN))


def get_detail(client, job_id: str) -> dict:
    result = client.simulate_get(f"/api/v1/jobs/{job_id}/detail", headers=AUTH)
    assert result.status_code == 200, result.text
    return conforming(result, "/api/v1/jobs/{job_id}/detail").json


def cancel(client, job_id: str):
    result = client.simulate_post(f"/api/v1/jobs/{job_id}/cancel", headers=AUTH)
    if result.status_code != 404:
        conforming(result, "/api/v1/jobs/{job_id}/cancel", "post")
    return result


@attrs.frozen
class Done:
    def public(self):
        return {"done": True}


@attrs.frozen
class Steps:
    fail: bool = False


def handler_runs(job) -> bool:
    return job is not None and job.status.value == "running" and job.result is not None


def register_patient(system, *, release: threading.Event | None = None):
    """A kind whose handler runs until told to stop (or released); it may fail once."""

    def patient(ctx: JobContext, payload: Steps) -> Done:
        if payload.fail:
            raise Failure("flaky")
        ctx.publish(Done())  # shows its handler runs: a claim alone may not have reached it
        while not ctx.wait(60):
            if release is not None and release.is_set():
                return Done()
        raise RuntimeError("stopped")

    return system.kinds.register(
        "patient", patient, payload=Steps, failure_codes=["flaky"], max_attempts=3,
        retry_on=["flaky"], backoff=(30, 30),
    )  # fmt: skip


# -- detail -------------------------------------------------------------------


def test_detail_of_a_queued_job_says_why_it_waits(system, client):
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    shown = get_detail(client, job_id)
    now = system.clock.now().isoformat()
    assert shown == {
        "id": job_id, "kind": "noop", "status": "queued", "result": None, "error": None,
        "queue": "default", "priority": 0, "run_at": now, "attempt": 0, "max_attempts": 1,
        "snoozes": 0, "created_at": now, "started_at": None, "finished_at": None, "timeout": None,
        "attempts": [], "waiting": ["no live runner serves kind noop"], "state": "available",
        "payload": {}, "waited": None,
    }  # fmt: skip


def test_detail_of_a_scheduled_job_says_when_it_is_due(system, client):
    system.start()
    later = system.clock.now() + datetime.timedelta(hours=1)
    job_id = system.runner.builtins.noop.enqueue(NoopPayload(), run_at=later)
    shown = get_detail(client, job_id)
    assert shown["status"] == "queued"
    assert shown["run_at"] == later.isoformat()
    assert shown["waiting"] == [f"due at {later.isoformat()}"]


def test_detail_follows_a_job_through_a_retry_to_its_end(system, client):
    patient = register_patient(system)
    system.start()
    job_id = patient.enqueue(Steps(fail=True))
    system.wait_for(job_id, lambda job: get_detail(client, job_id)["attempt"] == 1
                    and job.status.value == "queued")  # fmt: skip
    retrying = get_detail(client, job_id)
    assert retrying["waiting"][0] == "retrying: attempt 1 of 3 ended with flaky"
    (first,) = retrying["attempts"]
    assert (first["attempt"], first["runner"], first["outcome"]) == (1, system.runner.id, "flaky")
    assert first["started_at"] is not None and first["ended_at"] is not None
    assert retrying["finished_at"] is None


def test_detail_of_a_running_then_finished_job(system, client):
    release = threading.Event()
    patient = register_patient(system, release=release)
    system.start()
    job_id = patient.enqueue(Steps())
    system.wait_for(job_id, handler_runs)
    running = get_detail(client, job_id)
    assert (running["status"], running["attempt"], running["waiting"]) == ("running", 1, [])
    assert running["started_at"] == system.clock.now().isoformat()
    release.set()
    system.clock.advance(60)
    system.wait_for(job_id)
    done = get_detail(client, job_id)
    assert (done["status"], done["result"], done["waiting"]) == ("succeeded", {"done": True}, [])
    assert done["finished_at"] == system.clock.now().isoformat()
    assert [(a["attempt"], a["outcome"]) for a in done["attempts"]] == [(1, "succeeded")]
    assert running["attempts"][0]["seconds"] is None  # still running
    assert done["attempts"][0]["seconds"] == 60.0


def test_the_detail_says_how_long_a_job_waited_and_each_attempt_ran(system, client):
    release = threading.Event()
    patient = register_patient(system, release=release)
    system.runner.pause_queue("default")
    system.start()
    job_id = patient.enqueue(Steps())
    system.clock.advance(42.5)
    assert get_detail(client, job_id)["waited"] is None  # not started yet
    system.runner.resume_queue("default")
    system.wait_for(job_id, handler_runs)
    assert get_detail(client, job_id)["waited"] == 42.5
    release.set()
    system.clock.wait_for_sleepers(1)
    system.clock.advance(61.25)  # the handler's wait ends, and it sees the release
    system.wait_for(job_id)
    done = get_detail(client, job_id)
    assert (done["waited"], done["attempts"][0]["seconds"]) == (42.5, 61.25)
    page = log_in(client).get(client, f"/ui/jobs/{job_id}").text
    assert "<dt>waited</dt><dd>42.500 s</dd>" in page
    assert '<td class="duration">1 min 1 s</td>' in page


def test_get_keeps_exactly_its_five_keys_beside_the_detail(system, client):
    job_id = system.runner.builtins.noop.enqueue(NoopPayload(), queue="mail", priority=2)
    plain = client.simulate_get(f"/api/v1/jobs/{job_id}", headers=AUTH).json
    assert set(plain) == PUBLIC_KEYS
    shown = get_detail(client, job_id)
    assert {key: shown[key] for key in PUBLIC_KEYS} == plain


def test_detail_of_an_unknown_job_is_404_as_get(client):
    for path in (f"/api/v1/jobs/{UNKNOWN_ID}/detail", f"/api/v1/jobs/{UNKNOWN_ID}"):
        result = client.simulate_get(path, headers=AUTH)
        assert result.status_code == 404
        assert result.json == {"error": {"code": "not_found", "message": "job not found"}}


# -- cancel -------------------------------------------------------------------


def test_cancelling_a_queued_job_fails_it_cancelled_at_once_and_again_is_200(system, client):
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    for _ in range(2):
        result = cancel(client, job_id)
        assert result.status_code == 200
        assert result.json == {
            "id": job_id, "kind": "noop", "status": "failed", "result": None, "error": "cancelled",
        }  # fmt: skip
    assert system.runner.drain() == []  # it never runs


def test_cancelling_a_running_job_asks_its_handler_to_stop(system, client):
    patient = register_patient(system)
    system.start()
    job_id = patient.enqueue(Steps())
    system.wait_for(job_id, handler_runs)
    result = cancel(client, job_id)
    assert result.status_code == 202
    assert (result.json["id"], result.json["status"]) == (job_id, "running")
    job = system.wait_for(job_id)
    assert (job.status.value, job.error) == ("failed", "cancelled")
    assert cancel(client, job_id).status_code == 200  # already cancelled


def test_a_job_that_finished_otherwise_cannot_be_cancelled(system, client):
    done = system.runner.builtins.noop.enqueue(NoopPayload())
    system.runner.drain()
    result = cancel(client, done)
    assert result.status_code == 409
    assert result.json == {
        "error": {
            "code": "conflict",
            "message": "the job already succeeded; only a queued or running job can be cancelled",
        }
    }


def test_a_failed_job_cannot_be_cancelled_and_the_message_names_its_code():
    system = JobSystem(MemoryStore())
    system.kinds.register("flaky", _fail, payload=Steps, failure_codes=["flaky"])
    job_id = system.runner.enqueue("flaky", {})
    system.runner.drain()
    result = cancel(client_for(system.runner), job_id)
    assert result.status_code == 409
    assert result.json["error"]["message"] == (
        "the job already failed with flaky; only a queued or running job can be cancelled"
    )


def _fail(ctx: JobContext, payload: Steps) -> Done:
    raise Failure("flaky")


def test_cancelling_an_unknown_job_is_404(client):
    result = cancel(client, UNKNOWN_ID)
    assert result.status_code == 404
    assert result.json == {"error": {"code": "not_found", "message": "job not found"}}


# -- queues -------------------------------------------------------------------


def queues(client) -> list[dict]:
    result = client.simulate_get("/api/v1/queues", headers=AUTH)
    assert result.status_code == 200
    return conforming(result, "/api/v1/queues").json["queues"]


def pause(client, name: str, action: str = "pause"):
    result = client.simulate_post(f"/api/v1/queues/{name}/{action}", headers=AUTH)
    if result.status_code in (200, 400):
        conforming(result, f"/api/v1/queues/{{name}}/{action}", "post")
    return result


def test_queues_list_their_jobs_by_status(system, client):
    noop = system.runner.builtins.noop
    done = noop.enqueue(NoopPayload(), queue="mail")
    system.runner.drain()
    noop.enqueue(NoopPayload(), queue="mail")
    noop.enqueue(NoopPayload(), queue="reports", delay=60)  # scheduled counts as queued
    cancel(client, noop.enqueue(NoopPayload()))
    assert done
    assert queues(client) == [
        {"name": "default", "paused": False,
         "counts": {"queued": 0, "running": 0, "succeeded": 0, "failed": 1}, "limit": None, "rate": None, "running": 0, "held_back": 0,
         "states": states(cancelled=1)},
        {"name": "mail", "paused": False,
         "counts": {"queued": 1, "running": 0, "succeeded": 1, "failed": 0}, "limit": None, "rate": None, "running": 0, "held_back": 0,
         "states": states(available=1, succeeded=1)},
        {"name": "reports", "paused": False,
         "counts": {"queued": 1, "running": 0, "succeeded": 0, "failed": 0}, "limit": None, "rate": None, "running": 0, "held_back": 0,
         "states": states(scheduled=1)},
    ]  # fmt: skip


def test_a_paused_queue_is_passed_by_until_resumed(system, client):
    held = system.runner.builtins.noop.enqueue(NoopPayload(), queue="mail")
    result = pause(client, "mail")
    assert result.status_code == 200
    assert result.json == {
        "name": "mail", "paused": True,
        "counts": {"queued": 1, "running": 0, "succeeded": 0, "failed": 0},
        "states": states(available=1),
        "limit": None, "rate": None, "running": 0, "held_back": 0,
    }  # fmt: skip
    assert system.runner.drain() == []
    assert pause(client, "mail").json["paused"] is True  # pausing twice changes nothing
    resumed = pause(client, "mail", "resume")
    assert resumed.status_code == 200
    assert resumed.json["paused"] is False
    assert [job.id for job in system.runner.drain()] == [held]
    assert [queue["paused"] for queue in queues(client)] == [False]


def test_a_queue_may_be_paused_before_it_holds_any_job(system, client):
    result = pause(client, "billing")
    assert result.json == {
        "name": "billing", "paused": True,
        "counts": {"queued": 0, "running": 0, "succeeded": 0, "failed": 0},
        "states": states(),
        "limit": None, "rate": None, "running": 0, "held_back": 0,
    }  # fmt: skip
    assert [queue["name"] for queue in queues(client)] == ["billing"]
    job_id = system.runner.builtins.noop.enqueue(NoopPayload(), queue="billing")
    assert system.runner.drain() == []
    assert "queue billing is paused" in get_detail(client, job_id)["waiting"]


@pytest.mark.parametrize("action", ["pause", "resume"])
@pytest.mark.parametrize("name", ["-leading-dash", "x" * 65, "a%20b", "%C3%A9t%C3%A9"])
def test_pausing_a_name_no_queue_can_have_is_refused(system, client, action, name):
    result = pause(client, name, action)
    assert result.status_code == 400
    assert result.json["error"]["code"] == "invalid_option"
    assert result.json["error"]["message"].startswith("queue: must be 1-64 letters")
    assert queues(client) == []


# -- runners ------------------------------------------------------------------


def test_runners_lists_every_live_runner_with_what_it_serves(system, client):
    assert client.simulate_get("/api/v1/runners", headers=AUTH).json == {"runners": []}
    system.start()
    mail = Runner(system.store, system.clock, workers=3, queues=["mail", "bulk"],
                  sweep_interval=None, check_interval=None, host="mail-host")  # fmt: skip
    mail.start()
    try:
        result = client.simulate_get("/api/v1/runners", headers=AUTH)
        runners = conforming(result, "/api/v1/runners").json["runners"]
    finally:
        mail.stop()
        assert mail.join(timeout=10)
    by_id = {runner["id"]: runner for runner in runners}
    assert set(by_id) == {system.runner.id, mail.id}
    now = system.clock.now().isoformat()
    assert by_id[mail.id] == {
        "id": mail.id, "host": "mail-host", "pid": os.getpid(), "started_at": now,
        "kinds": ["noop"], "queues": ["bulk", "mail"], "workers": 3, "busy": 0, "last_seen": now,
    }  # fmt: skip
    assert (by_id[system.runner.id]["queues"], by_id[system.runner.id]["workers"]) == (None, 1)


def test_an_insert_only_runner_is_not_listed(client):
    store = MemoryStore()
    web = JobSystem(store, workers=0).start()
    try:
        app = client_for(web.runner)
        assert app.simulate_get("/api/v1/runners", headers=AUTH).json == {"runners": []}
        posted = app.simulate_post(
            "/api/v1/jobs", body=json.dumps({"kind": "noop", "payload": {}}),
            headers={**AUTH, "Content-Type": "application/json"},
        )  # fmt: skip
        assert posted.status_code == 202
        assert store.get(posted.json["id"]).status.value == "queued"  # stored, never claimed
    finally:
        web.stop()
