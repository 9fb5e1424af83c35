"""No secret a handler holds reaches a stored row, an HTTP body or the log, on every store."""

from __future__ import annotations

import json
from contextlib import ExitStack

import falcon.testing
import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.memory import MemoryStore
from jobtable.adapters.sqlite import SqliteStore
from jobtable.core import Failure, JobContext
from jobtable.entrypoints.http.app import create_app
from tests.support.harness import JobSystem
from tests.support.postgres import fresh_schema
from tests.unit.kinds_for_tests import SENTINEL_SECRET, BadResult, CountPayload, LeakyResult

TOKEN = "secrets-test-token"


def leaky_kinds():
    def partial_then_result(ctx: JobContext, payload: CountPayload) -> LeakyResult:
        ctx.publish(LeakyResult(dinners=["Tacos"]))
        return LeakyResult(dinners=["Tacos", "Soup"])

    def exception_text(ctx: JobContext, payload: CountPayload) -> LeakyResult:
        ctx.publish(LeakyResult(dinners=["Tacos"]))
        raise ConnectionError(f"https://user:{SENTINEL_SECRET}@api.example.com refused")

    def undeclared_code(ctx: JobContext, payload: CountPayload) -> LeakyResult:
        raise Failure(SENTINEL_SECRET)

    def encoding_error(ctx: JobContext, payload: CountPayload) -> BadResult:
        return BadResult()

    return {
        "partial-then-result": partial_then_result,
        "exception-text": exception_text,
        "undeclared-code": undeclared_code,
        "encoding-error": encoding_error,
    }


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def system(request, tmp_path):
    with ExitStack() as stack:
        if request.param == "memory":
            store = MemoryStore()
        elif request.param == "sqlite":
            store = SqliteStore.open(tmp_path / "jobs.db", now=FakeClock().now())
        else:
            from jobtable.adapters.postgres import PostgresStore

            url, schema = stack.enter_context(fresh_schema())
            store = PostgresStore.open(url, now=FakeClock().now(), schema=schema)
        stack.callback(store.close)
        made = JobSystem(store, workers=2)
        yield made
        made.stop()


def test_a_sentinel_secret_never_reaches_a_row_a_body_or_the_log(system):
    handles = [
        system.kinds.register(name, handler, payload=CountPayload)
        for name, handler in leaky_kinds().items()
    ]
    client = falcon.testing.TestClient(
        create_app(system.runner, api_token=TOKEN, logger=system.logs.logger)
    )
    system.start()

    outcomes = {}
    for handle in handles:
        job = system.wait_for(handle.enqueue(CountPayload()))
        row = system.store.row(job.id)
        assert SENTINEL_SECRET not in json.dumps(row, default=str), handle.name
        response = client.simulate_get(
            f"/api/v1/jobs/{job.id}", headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert response.status_code == 200
        assert SENTINEL_SECRET not in response.text, handle.name
        outcomes[handle.name] = (response.json["status"], response.json["error"])
    system.stop()

    assert SENTINEL_SECRET not in system.logs.text
    assert outcomes == {
        "partial-then-result": ("succeeded", None),
        "exception-text": ("failed", "internal_error"),
        "undeclared-code": ("failed", "internal_error"),
        "encoding-error": ("failed", "internal_error"),
    }
    assert "exception_type=ConnectionError" in system.logs.text


MARKUP = "<script>alert('x')</script> & <img src=x onerror=alert(1)> \u2028"


def test_markup_in_a_payload_or_result_comes_back_as_escaped_json_data(system):
    from tests.e2e.leaky_kinds import Note, echo

    system.kinds.register("echo", echo, payload=Note)
    client = falcon.testing.TestClient(
        create_app(system.runner, api_token=TOKEN, logger=system.logs.logger)
    )
    auth = {"Authorization": f"Bearer {TOKEN}"}
    system.start()

    posted = client.simulate_post(
        "/api/v1/jobs", headers=auth, json={"kind": "echo", "payload": {"text": MARKUP}}
    )
    assert posted.status_code == 202
    job_id = posted.json["id"]
    system.wait_for(job_id)
    refused = client.simulate_post(
        "/api/v1/jobs", headers=auth, json={"kind": "echo", "payload": {"<b>": MARKUP}}
    )
    got = client.simulate_get(f"/api/v1/jobs/{job_id}", headers=auth)

    assert got.json["result"] == {"text": MARKUP}  # the value is intact as data
    for response in (posted, refused, got):
        assert response.headers["Content-Type"] == "application/json"
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        for raw in ("<", ">", "&", "\u2028"):
            assert raw not in response.text, (raw, response.text)
    assert "\\u003cscript\\u003e" in got.text
