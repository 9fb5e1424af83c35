"""The Idempotency-Key header: the first answer replayed for 24 h, a reused key refused,
and concurrent requests with one key storing one job, on every engine."""

from __future__ import annotations

import json
import threading
from contextlib import ExitStack

import falcon.testing
import pytest

from jobtable.entrypoints.http.app import create_app
from tests.http.conftest import AUTH, TOKEN
from tests.support.harness import JobSystem
from tests.support.stores import ENGINES, open_store
from tests.support.threads import run_in_threads

JSON_AUTH = {**AUTH, "Content-Type": "application/json"}


def post(client, body, key: str | None, path: str = "/api/v1/jobs"):
    headers = dict(JSON_AUTH)
    if key is not None:
        headers["Idempotency-Key"] = key
    return client.simulate_post(path, body=body if isinstance(body, str) else json.dumps(body),
                                headers=headers)  # fmt: skip


def stored_jobs(system) -> int:
    return sum(sum(queue.counts.values()) for queue in system.store.queues())


def test_the_same_request_again_gets_the_first_answer_and_stores_nothing_more(system, client):
    first = post(client, {"kind": "noop", "payload": {}}, "order-17")
    assert first.status_code == 202
    # The same parsed request: another spacing and key order.
    again = post(client, '{ "payload": {}, "kind": "noop" }', "order-17")
    assert (again.status_code, again.json) == (202, first.json)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.headers["Location"] == first.headers["Location"]
    assert "Idempotent-Replayed" not in first.headers
    assert stored_jobs(system) == 1


def test_a_key_sent_with_another_request_is_refused(system, client):
    assert post(client, {"kind": "noop", "payload": {}}, "k-1").status_code == 202
    other = post(client, {"kind": "noop", "payload": {}, "priority": 2}, "k-1")
    assert other.status_code == 422
    assert other.json["error"]["code"] == "idempotency_key_reused"
    assert stored_jobs(system) == 1


def test_a_refusal_is_replayed_too_and_a_bad_key_is_refused(system, client):
    unknown = post(client, {"kind": "nope", "payload": {}}, "k-2")
    assert unknown.status_code == 400
    again = post(client, {"kind": "nope", "payload": {}}, "k-2")
    assert (again.status_code, again.json) == (400, unknown.json)
    assert again.headers["Idempotent-Replayed"] == "true"
    bad = post(client, {"kind": "noop", "payload": {}}, "spaces are not allowed")
    assert (bad.status_code, bad.json["error"]["code"]) == (400, "invalid_option")
    assert bad.json["error"]["message"].startswith("Idempotency-Key: must be 1 to 255")
    assert stored_jobs(system) == 0


def test_a_batch_with_a_key_is_stored_once(system, client):
    body = {"jobs": [{"kind": "noop", "payload": {}}] * 3}
    first = post(client, body, "batch-1", path="/api/v1/jobs/batch")
    again = post(client, body, "batch-1", path="/api/v1/jobs/batch")
    assert (first.status_code, again.status_code, again.json) == (202, 202, first.json)
    assert stored_jobs(system) == 3


def test_an_answer_the_database_could_not_give_is_not_kept(system, client):
    from jobtable.core import StoreUnavailableError

    real = system.store.inner.create
    calls = []

    def down_once(job, *, now, keep=None):
        calls.append(job.id)
        if len(calls) == 1:
            raise StoreUnavailableError("database unavailable")
        return real(job, now=now, keep=keep)

    system.store.inner.create = down_once
    assert post(client, {"kind": "noop", "payload": {}}, "k-3").status_code == 503
    retry = post(client, {"kind": "noop", "payload": {}}, "k-3")
    assert retry.status_code == 202 and "Idempotent-Replayed" not in retry.headers


@pytest.fixture(params=ENGINES)
def engine_client(request, tmp_path):
    """A client and its system over a fresh store of each engine."""
    with ExitStack() as stack:
        store = open_store(request.param, tmp_path, stack)
        stack.callback(store.close)
        system = JobSystem(store, workers=0)
        app = create_app(system.runner, api_token=TOKEN, version="9", logger=system.logs.logger)
        yield system, falcon.testing.TestClient(app)


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/v1/jobs", {"kind": "noop", "payload": {}}),
        ("/api/v1/jobs/batch", {"jobs": [{"kind": "noop", "payload": {}}] * 2}),
    ],
)
def test_a_stored_job_always_has_its_kept_answer(engine_client, path, body):
    """The answer is kept in the enqueue's own transaction: no later write can fail apart
    from it, leaving the job without its answer (a 503, then a second job on a retry)."""
    from jobtable.core import StoreUnavailableError

    system, client = engine_client

    def down(key, **arguments):
        raise StoreUnavailableError("database unavailable")

    system.store.inner.finish_idempotent = down  # a separate write of the answer would fail
    first = post(client, body, "order-18", path)
    assert first.status_code == 202
    again = post(client, body, "order-18", path)
    assert (again.status_code, again.json) == (202, first.json)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert stored_jobs(system) == len(body.get("jobs", [body]))


def test_a_reply_lost_after_the_commit_replays_the_stored_job(engine_client):
    from jobtable.core import StoreUnavailableError

    system, client = engine_client
    real = system.store.inner.create

    def reply_lost(job, **arguments):
        real(job, **arguments)
        raise StoreUnavailableError("database unavailable")  # committed, then the reply lost

    system.store.inner.create = reply_lost
    body = {"kind": "noop", "payload": {}}
    assert post(client, body, "order-19").status_code == 503
    system.store.inner.create = real
    again = post(client, body, "order-19")
    assert again.status_code == 202
    assert again.headers["Idempotent-Replayed"] == "true"
    assert stored_jobs(system) == 1


@pytest.mark.parametrize("engine", ENGINES)
def test_fifty_concurrent_posts_with_one_key_store_one_job(engine, tmp_path):
    with ExitStack() as stack:
        store = open_store(engine, tmp_path, stack)
        stack.callback(store.close)
        system = JobSystem(store, workers=0)
        client = falcon.testing.TestClient(
            create_app(system.runner, api_token=TOKEN, version="9", logger=system.logs.logger)
        )
        answers: list[tuple[int, dict]] = []
        guard = threading.Lock()

        def send() -> None:
            result = post(client, {"kind": "noop", "payload": {}}, "shared-key")
            with guard:
                answers.append((result.status_code, result.json))

        run_in_threads([send] * 50)
        assert stored_jobs(system) == 1
        statuses = {status for status, _ in answers}
        assert statuses <= {202, 409}, answers  # the first, replays of it, or "in flight"
        ids = {body["id"] for status, body in answers if status == 202}
        assert len(ids) == 1
