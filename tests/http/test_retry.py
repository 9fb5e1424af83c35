"""POST /api/v1/jobs/{id}/retry: a failed job, whatever its code, is queued again."""

from __future__ import annotations

import threading

import attrs
import pytest

from jobtable.core import Failure, JobContext, NoopPayload
from tests.http.conftest import AUTH
from tests.http.test_operations import UNKNOWN_ID, conforming, get_detail

PATH = "/api/v1/jobs/{job_id}/retry"


@attrs.frozen
class Try:
    pass


@attrs.frozen
class Done:
    def public(self):
        return {"done": True}


def retry(client, job_id: str):
    result = client.simulate_post(PATH.format(job_id=job_id), headers=AUTH)
    if result.status_code != 404:
        conforming(result, PATH, "post")
    return result


@pytest.fixture
def flaky(system):
    """Fails its first attempt, succeeds on the next."""
    outcomes = iter([True, False])

    def attempt(ctx: JobContext, payload: Try) -> Done:
        if next(outcomes):
            raise Failure("flaky")
        return Done()

    return system.kinds.register("flaky", attempt, payload=Try, failure_codes=["flaky"])


def test_a_job_failed_with_its_own_code_is_queued_again_and_runs_to_the_end(system, client, flaky):
    job_id = flaky.enqueue(Try())
    system.runner.drain()
    assert system.runner.get(job_id).error == "flaky"
    result = retry(client, job_id)
    assert result.status_code == 200
    assert result.json == {
        "id": job_id, "kind": "flaky", "status": "queued", "result": None, "error": None,
    }  # fmt: skip
    system.runner.drain()
    detail = get_detail(client, job_id)
    assert (detail["status"], detail["result"]) == ("succeeded", {"done": True})
    assert [(a["attempt"], a["outcome"]) for a in detail["attempts"]] == [
        (1, "flaky"), (2, "succeeded"),
    ]  # fmt: skip


def test_a_cancelled_job_can_be_retried_too(system, client):
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    system.runner.cancel(job_id)
    result = retry(client, job_id)
    assert (result.status_code, result.json["status"]) == (200, "queued")
    assert [job.id for job in system.runner.drain()] == [job_id]


@pytest.mark.parametrize("status", ["queued", "running", "succeeded"])
def test_a_job_that_has_not_failed_is_409_naming_its_status(system, client, status):
    release = threading.Event()

    def hold(ctx: JobContext, payload: Try) -> Done:
        ctx.publish(Done())
        release.wait(30)
        return Done()

    held = system.kinds.register("hold", hold, payload=Try)
    job_id = held.enqueue(Try())
    if status != "queued":
        system.start()
        system.wait_for(job_id, lambda job: job.result is not None)
    if status == "succeeded":
        release.set()
        system.wait_for(job_id)
    result = retry(client, job_id)
    release.set()
    assert result.status_code == 409
    assert result.json == {
        "error": {
            "code": "conflict",
            "message": f"only a failed job can be retried; this one is {status}",
        }
    }


def test_retrying_an_unknown_job_is_404(client):
    result = client.simulate_post(PATH.format(job_id=UNKNOWN_ID), headers=AUTH)
    assert result.status_code == 404
    assert result.json == {"error": {"code": "not_found", "message": "job not found"}}
