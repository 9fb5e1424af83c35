"""Every route, every method, with no, malformed, wrong and correct tokens.

Only /health and the OpenAPI document are public (and /metrics when the app
is made with ``metrics_public``); everything else answers 401 in the
envelope unless the token is exactly right, and a refused POST stores
nothing. Routes are read off the app, so a new one is covered too.
"""

from __future__ import annotations

import falcon.inspect
import falcon.testing
import pytest

from jobtable.core import NoopPayload
from jobtable.entrypoints.http.app import create_app
from tests.http.conftest import TOKEN

PUBLIC = {"/health", "/api/v1/openapi.json"}
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
JOB_BODY = b'{"kind": "noop", "payload": {}}'
BODIES = {"/api/v1/jobs/batch": b'{"jobs": [{"kind": "noop", "payload": {}}]}'}
PRIVATE = {
    "/api/v1/jobs", "/api/v1/jobs/batch", "/api/v1/jobs/{job_id}", "/api/v1/jobs/{job_id}/detail",
    "/api/v1/jobs/{job_id}/cancel", "/api/v1/jobs/{job_id}/retry", "/api/v1/jobs/{job_id}/events",
    "/api/v1/queues", "/api/v1/queues/{name}/pause", "/api/v1/queues/{name}/resume",
    "/api/v1/runners", "/metrics",
}  # fmt: skip

REFUSED_AUTHORIZATIONS = {
    "none": None,
    "empty": "",
    "scheme only": "Bearer",
    "scheme and space": "Bearer ",
    "other scheme": f"Basic {TOKEN}",
    "no space": f"Bearer{TOKEN}",
    "token twice": f"Bearer {TOKEN} {TOKEN}",
    "token and more": f"Bearer {TOKEN}x",
    "token prefix": f"Bearer {TOKEN[:-1]}",
    "wrong, same length": "Bearer " + "x" * len(TOKEN),
    "wrong case": f"Bearer {TOKEN.upper()}",
    "non-ascii": "Bearer t\u00f6k\u00e9n",
    "very long": "Bearer " + "a" * 10_000,
    "token quoted": f'Bearer "{TOKEN}"',
}
ACCEPTED_AUTHORIZATIONS = {"exact": f"Bearer {TOKEN}", "lower-case scheme": f"bearer {TOKEN}"}


def routes(client: falcon.testing.TestClient) -> list[str]:
    return [route.path for route in falcon.inspect.inspect_routes(client.app)]


def concrete(path: str, job_id: str) -> str:
    return path.replace("{job_id}", job_id).replace("{name}", "mail")


def call(client, method: str, path: str, authorization: str | None, *, route: str = ""):
    headers = {"Content-Type": "application/json"}
    if authorization is not None:
        headers["Authorization"] = authorization
    body = BODIES.get(route, JOB_BODY) if method in ("POST", "PUT", "PATCH") else None
    return client.simulate_request(method, path, headers=headers, body=body)


def test_the_app_has_the_routes_this_matrix_expects(client):
    assert set(routes(client)) == PUBLIC | PRIVATE


@pytest.mark.parametrize("case", sorted(REFUSED_AUTHORIZATIONS))
def test_every_private_route_and_method_refuses_a_bad_token_and_stores_nothing(
    system, client, case
):
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    authorization = REFUSED_AUTHORIZATIONS[case]
    for path in routes(client):
        for method in METHODS:
            result = call(client, method, concrete(path, job_id), authorization, route=path)
            if path in PUBLIC:
                assert result.status_code != 401, (method, path)
                continue
            assert result.status_code == 401, (case, method, path, result.status_code)
            assert result.headers["WWW-Authenticate"] == "Bearer"
            if method == "HEAD":
                assert result.content == b""  # a HEAD answer has no body
                continue
            assert result.json == {
                "error": {"code": "unauthenticated", "message": "a valid bearer token is required"}
            }
            assert job_id not in result.text
    # No refused POST paused a queue (a pause of "mail" would list it).
    assert [(queue.name, queue.paused) for queue in system.runner.queues()] == [("default", False)]
    # No refused POST stored a job, and none cancelled this one: it runs.
    assert [(job.id, job.status.value) for job in system.runner.drain()] == [(job_id, "succeeded")]


@pytest.mark.parametrize("case", sorted(ACCEPTED_AUTHORIZATIONS))
def test_the_correct_token_opens_every_route(system, client, case):
    finished = system.runner.builtins.noop.enqueue(NoopPayload())
    system.runner.drain()  # its event stream ends at once
    failed = system.runner.builtins.noop.enqueue(NoopPayload())
    system.runner.cancel(failed)  # failed cancelled: a retry takes it
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    ids = {"/api/v1/jobs/{job_id}/events": finished, "/api/v1/jobs/{job_id}/retry": failed}
    authorization = ACCEPTED_AUTHORIZATIONS[case]
    expected = {
        ("GET", "/health"): 200,
        ("GET", "/api/v1/openapi.json"): 200,
        ("GET", "/api/v1/jobs"): 200,
        ("POST", "/api/v1/jobs"): 202,
        ("POST", "/api/v1/jobs/batch"): 202,
        ("GET", "/api/v1/jobs/{job_id}"): 200,
        ("GET", "/api/v1/jobs/{job_id}/detail"): 200,
        ("GET", "/api/v1/jobs/{job_id}/events"): 200,
        ("POST", "/api/v1/jobs/{job_id}/cancel"): 200,
        ("POST", "/api/v1/jobs/{job_id}/retry"): 200,
        ("GET", "/api/v1/queues"): 200,
        ("POST", "/api/v1/queues/{name}/pause"): 200,
        ("POST", "/api/v1/queues/{name}/resume"): 200,
        ("GET", "/api/v1/runners"): 200,
        ("GET", "/metrics"): 200,
    }
    for path in routes(client):
        for method in METHODS:
            where = concrete(path, ids.get(path, job_id))
            result = call(client, method, where, authorization, route=path)
            # OPTIONS is Falcon's own answer listing the allowed methods.
            want = 200 if method == "OPTIONS" else expected.get((method, path), 405)
            assert result.status_code == want, (case, method, path, result.text)
            if want == 405 and method != "HEAD":
                assert result.json["error"]["code"] == "method_not_allowed"


@pytest.mark.parametrize("path", sorted(PUBLIC))
def test_public_routes_answer_the_same_with_any_token_or_none(client, path):
    bodies = {
        case: client.simulate_get(
            path, headers={} if value is None else {"Authorization": value}
        ).json
        for case, value in {**REFUSED_AUTHORIZATIONS, **ACCEPTED_AUTHORIZATIONS}.items()
    }
    assert len({repr(body) for body in bodies.values()}) == 1


def test_metrics_made_public_answer_without_a_token_while_the_api_still_refuses(system):
    client = falcon.testing.TestClient(
        create_app(system.runner, api_token=TOKEN, metrics_public=True)
    )
    for case, authorization in REFUSED_AUTHORIZATIONS.items():
        headers = {} if authorization is None else {"Authorization": authorization}
        metrics = client.simulate_get("/metrics", headers=headers)
        assert metrics.status_code == 200, case
        assert "jobtable_store_up 1.0" in metrics.text
        assert client.simulate_get("/api/v1/runners", headers=headers).status_code == 401, case
    for method in METHODS:
        if method not in ("GET", "OPTIONS"):
            assert client.simulate_request(method, "/metrics").status_code == 405, method
