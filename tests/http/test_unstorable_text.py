"""Text no store could keep, from a client: refused by name, or no job, never a 500.

A lone surrogate has no UTF-8 form (both engines refuse it), PostgreSQL
refuses NUL, and a newline in a logged value forges a log line. Each was a
500 on some engine, or stored on SQLite; now every string that reaches a
store is checked first, on every route, the same way on both engines.
"""

from __future__ import annotations

import json
from contextlib import ExitStack

import falcon.testing
import pytest

from jobtable.core import NoopPayload
from jobtable.entrypoints.http.app import create_app
from jobtable.entrypoints.http.pages import encode_cursor
from tests.http.conftest import AUTH, TOKEN, log_in
from tests.support.harness import JobSystem
from tests.support.stores import open_store

JSON_AUTH = {**AUTH, "Content-Type": "application/json"}


@pytest.fixture(params=["sqlite", "postgres"])
def engine_system(request, tmp_path):
    with ExitStack() as stack:
        store = open_store(request.param, tmp_path, stack)
        stack.callback(store.close)
        system = JobSystem(store, workers=0)
        stack.callback(system.stop)
        yield system


@pytest.fixture
def engine_client(engine_system) -> falcon.testing.TestClient:
    app = create_app(engine_system.runner, api_token=TOKEN, version="9",
                     logger=engine_system.logs.logger, clock=engine_system.clock)  # fmt: skip
    return falcon.testing.TestClient(app)


def jobs_stored(system) -> int:
    return len(system.runner.list_jobs(limit=500).jobs)


def noop(**options) -> str:
    return json.dumps({"kind": "noop", "payload": {}, **options})


UNSTORABLE = ["lone \udcff surrogate", "a\u0000NUL", "a\nnewline", "a\u2028separator"]


@pytest.mark.parametrize("key", UNSTORABLE)
def test_a_unique_key_no_store_could_keep_is_refused_naming_it(engine_system, engine_client, key):
    alone = engine_client.simulate_post("/api/v1/jobs", body=noop(unique_key=key),
                                        headers=JSON_AUTH)  # fmt: skip
    batch = engine_client.simulate_post(
        "/api/v1/jobs/batch",
        body=json.dumps({"jobs": [json.loads(noop()), json.loads(noop(unique_key=key))]}),
        headers=JSON_AUTH,
    )
    assert (alone.status_code, alone.json["error"]["code"]) == (400, "invalid_option")
    assert alone.json["error"]["message"].startswith("unique_key: must be a string of 1 to 255")
    assert (batch.status_code, batch.json["error"]["code"]) == (400, "invalid_option")
    assert batch.json["error"]["message"].startswith("jobs[1]: unique_key: must be a string")
    assert jobs_stored(engine_system) == 0
    assert engine_system.logs.lines() == []


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ({"kind": "a\u0000b"}, "kind: "),
        ({"kind": "a\nb"}, "kind: "),
        ({"queue": "a\u0000b"}, "queue: "),
        ({"status": "\u0000"}, "status: "),
        ({"cursor": encode_cursor("a\u0000b")}, "cursor: "),
        ({"cursor": encode_cursor("\udcff")}, "cursor: "),
    ],
)  # fmt: skip
def test_a_list_filter_or_cursor_no_store_could_keep_is_refused_naming_it(
    engine_system, engine_client, query, named
):
    engine_system.runner.builtins.noop.enqueue(NoopPayload())
    result = engine_client.simulate_get("/api/v1/jobs", params=query, headers=AUTH)
    assert (result.status_code, result.json["error"]["code"]) == (400, "invalid_option")
    assert result.json["error"]["message"].startswith(named)
    assert engine_system.logs.lines() == []


def test_a_queue_name_and_an_idempotency_key_no_store_could_keep_are_refused_naming_them(
    engine_system, engine_client
):
    paused = engine_client.simulate_post("/api/v1/queues/a%00b/pause", headers=AUTH)
    assert (paused.status_code, paused.json["error"]["code"]) == (400, "invalid_option")
    assert paused.json["error"]["message"].startswith("queue: ")
    keyed = engine_client.simulate_post(
        "/api/v1/jobs", body=noop(), headers={**JSON_AUTH, "Idempotency-Key": "caf\u00e9"}
    )
    assert (keyed.status_code, keyed.json["error"]["code"]) == (400, "invalid_option")
    assert keyed.json["error"]["message"].startswith("Idempotency-Key: must be 1 to 255")
    assert jobs_stored(engine_system) == 0


IMPOSSIBLE_IDS = [
    "a%00b",
    "%0A2030-01-02 03:04:05,678 ERROR jobtable: forged%00",
    "%C2%85next-line",
    "%E2%80%A8",
    "k" * 256,
]
API_ROUTES = [
    ("GET", "/api/v1/jobs/{}"),
    ("GET", "/api/v1/jobs/{}/detail"),
    ("GET", "/api/v1/jobs/{}/events"),
    ("POST", "/api/v1/jobs/{}/cancel"),
    ("POST", "/api/v1/jobs/{}/retry"),
]


@pytest.mark.parametrize("job_id", IMPOSSIBLE_IDS)
def test_an_id_no_job_could_have_is_not_found_on_every_route_and_logs_nothing(
    engine_system, engine_client, job_id
):
    for method, route in API_ROUTES:
        result = engine_client.simulate_request(method, route.format(job_id), headers=AUTH)
        assert (result.status_code, result.json) == (
            404, {"error": {"code": "not_found", "message": "job not found"}}
        ), (method, route)  # fmt: skip
    browser = log_in(engine_client)
    for route in ("/ui/jobs/{}", "/ui/jobs/{}/events"):
        assert browser.get(engine_client, route.format(job_id)).status_code == 404, route
    for route in ("/ui/jobs/{}/cancel", "/ui/jobs/{}/retry"):
        assert browser.post(engine_client, route.format(job_id)).status_code == 404, route
    # The forged line: a 500 on PostgreSQL logged the path, newline and all.
    assert engine_system.logs.lines() == []
