"""Every route, every method, with no, malformed, wrong and correct tokens and session cookies.

Public: /health, the OpenAPI document (and /metrics when the app is made
with ``metrics_public``), the dashboard's login page and its static files.
The API (/api/v1, /metrics) answers 401 in the envelope unless the bearer
token is exactly right; the dashboard (/ui) unless its session cookie is
valid. Neither opens the other: a bearer token opens no /ui route, a session
cookie no /api/v1 route. A refused request changes nothing. Routes are read
off the app, so a new one is covered too.
"""

from __future__ import annotations

import falcon.inspect
import falcon.testing
import pytest

from jobtable.core import NoopPayload
from jobtable.entrypoints.http.app import create_app
from jobtable.entrypoints.ui.session import SessionKeys
from tests.http.conftest import TOKEN, log_in

PUBLIC = {"/health", "/api/v1/openapi.json"}
UI_PUBLIC = {"/ui/login", "/ui/static/{name}"}
UI_SESSION = {
    "/ui", "/ui/", "/ui/data/overview", "/ui/logout", "/ui/jobs", "/ui/jobs/{job_id}",
    "/ui/jobs/{job_id}/events", "/ui/jobs/{job_id}/cancel", "/ui/jobs/{job_id}/retry",
    "/ui/queues/{name}/pause", "/ui/queues/{name}/resume", "/ui/schedules", "/ui/jobs/bulk",
    "/ui/charts/{name}", "/ui/data/charts",
}  # fmt: skip
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
JOB_BODY = b'{"kind": "noop", "payload": {}}'
BODIES = {
    "/api/v1/jobs/batch": b'{"jobs": [{"kind": "noop", "payload": {}}]}',
    "/api/v1/queues/{name}": b'{"limit": 2}',
    "/api/v1/jobs/cancel": b'{"filter": {"kind": "no-such-kind"}}',
    "/api/v1/jobs/retry": b'{"filter": {"state": "cancelled"}, "dry_run": true}',
}
PRIVATE = {
    "/api/v1/jobs", "/api/v1/jobs/batch", "/api/v1/jobs/cancel", "/api/v1/jobs/retry",
    "/api/v1/jobs/{job_id}", "/api/v1/jobs/{job_id}/detail", "/api/v1/jobs/{job_id}/cancel", "/api/v1/jobs/{job_id}/retry", "/api/v1/jobs/{job_id}/events",
    "/api/v1/queues", "/api/v1/queues/{name}", "/api/v1/queues/{name}/pause",
    "/api/v1/queues/{name}/resume", "/api/v1/runners", "/api/v1/schedules", "/metrics",
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


def api_routes(client: falcon.testing.TestClient) -> list[str]:
    return [path for path in routes(client) if path not in UI_PUBLIC | UI_SESSION]


def concrete(path: str, job_id: str) -> str:
    path = path.replace("/ui/static/{name}", "/ui/static/dashboard.js")
    path = path.replace("/ui/charts/{name}", "/ui/charts/throughput.svg")
    return path.replace("{job_id}", job_id).replace("{name}", "mail")


def call(client, method: str, path: str, authorization: str | None, *, route: str = ""):
    headers = {"Content-Type": "application/json"}
    if authorization is not None:
        headers["Authorization"] = authorization
    body = BODIES.get(route, JOB_BODY) if method in ("POST", "PUT", "PATCH") else None
    return client.simulate_request(method, path, headers=headers, body=body)


def test_the_app_has_the_routes_this_matrix_expects(client):
    assert set(routes(client)) == PUBLIC | PRIVATE | UI_PUBLIC | UI_SESSION


@pytest.mark.parametrize("case", sorted(REFUSED_AUTHORIZATIONS))
def test_every_private_route_and_method_refuses_a_bad_token_and_stores_nothing(
    system, client, case
):
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    authorization = REFUSED_AUTHORIZATIONS[case]
    for path in api_routes(client):
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
    expected: dict[tuple[str, str], int] = {
        ("GET", "/health"): 200,
        ("GET", "/api/v1/openapi.json"): 200,
        ("GET", "/api/v1/jobs"): 200,
        ("POST", "/api/v1/jobs"): 202,
        ("POST", "/api/v1/jobs/batch"): 202,
        ("POST", "/api/v1/jobs/cancel"): 200,
        ("POST", "/api/v1/jobs/retry"): 200,
        ("GET", "/api/v1/jobs/{job_id}"): 200,
        ("GET", "/api/v1/jobs/{job_id}/detail"): 200,
        ("GET", "/api/v1/jobs/{job_id}/events"): 200,
        ("POST", "/api/v1/jobs/{job_id}/cancel"): 200,
        ("POST", "/api/v1/jobs/{job_id}/retry"): 200,
        ("GET", "/api/v1/queues"): 200,
        ("PATCH", "/api/v1/queues/{name}"): 200,
        ("POST", "/api/v1/queues/{name}/pause"): 200,
        ("POST", "/api/v1/queues/{name}/resume"): 200,
        ("GET", "/api/v1/runners"): 200,
        ("GET", "/api/v1/schedules"): 200,
        ("GET", "/metrics"): 200,
    }
    for path in api_routes(client):
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


# -- the dashboard: its session cookie, never the bearer token ---------------


def other_token_cookie(system) -> str:
    _, cookie = SessionKeys("another-token").issue(now=system.clock.now().timestamp())
    return cookie


def refused_cookies(system) -> dict[str, str | None]:
    """Every cookie the dashboard must refuse, by what is wrong with it."""
    keys = SessionKeys(TOKEN)
    now = system.clock.now().timestamp()
    _, good = keys.issue(now=now)
    version, expires, session_id, mac = good.split(".")
    _, expired = keys.issue(now=now - 12 * 3600 - 1)
    flipped = mac[:-1] + ("A" if mac[-1] != "A" else "B")
    return {
        "none": None,
        "empty": "",
        "garbage": "not-a-session",
        "mac flipped": f"{version}.{expires}.{session_id}.{flipped}",
        "expiry moved": f"{version}.{int(expires) + 3600}.{session_id}.{mac}",
        "session id changed": f"{version}.{expires}.{session_id[:-1]}x.{mac}",
        "no mac": f"{version}.{expires}.{session_id}.",
        "other version": f"2.{expires}.{session_id}.{mac}",
        "expired": expired,
        "signed with another token": other_token_cookie(system),
        "the bearer token itself": TOKEN,
    }


def ui_call(client, method: str, path: str, *, cookie: str | None, accept: str, **headers: str):
    if cookie is not None:
        headers["Cookie"] = f"jobtable_session={cookie}"
    return client.simulate_request(
        method,
        path,
        headers={"Accept": accept, "Sec-Fetch-Site": "same-origin", **headers},
        body=b"csrf=x" if method in ("POST", "PUT", "PATCH") else None,
    )


def assert_nothing_changed(system, job_id: str) -> None:
    assert [(queue.name, queue.paused) for queue in system.runner.queues()] == [("default", False)]
    assert [(job.id, job.status.value) for job in system.runner.drain()] == [(job_id, "succeeded")]


SESSION_PATHS = [*sorted(UI_SESSION), "/ui/no-such-page"]


@pytest.mark.parametrize("case", sorted(REFUSED_AUTHORIZATIONS) + sorted(ACCEPTED_AUTHORIZATIONS))
def test_no_bearer_token_opens_a_dashboard_route(system, client, case):
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    authorization = {**REFUSED_AUTHORIZATIONS, **ACCEPTED_AUTHORIZATIONS}[case]
    bearer = {} if authorization is None else {"Authorization": authorization}
    for path in SESSION_PATHS:
        for method in METHODS:
            target = concrete(path, job_id)
            fetched = ui_call(client, method, target, cookie=None, accept="*/*", **bearer)
            assert fetched.status_code == 401, (case, method, path, fetched.status_code)
            assert fetched.headers["WWW-Authenticate"] == 'Cookie realm="jobtable dashboard"'
            if method != "HEAD":
                assert fetched.json["error"]["code"] == "unauthenticated"
            browsed = ui_call(client, method, target, cookie=None, accept="text/html", **bearer)
            assert browsed.status_code == 303, (case, method, path)
            assert browsed.headers["Location"].startswith("/ui/login")
    assert_nothing_changed(system, job_id)


REFUSED_COOKIE_CASES = (
    "none", "empty", "garbage", "mac flipped", "expiry moved", "session id changed", "no mac",
    "other version", "expired", "signed with another token", "the bearer token itself",
)  # fmt: skip


@pytest.mark.parametrize("case", REFUSED_COOKIE_CASES)
def test_every_dashboard_route_refuses_a_missing_or_bad_cookie_and_changes_nothing(
    system, client, case
):
    cookies = refused_cookies(system)
    assert set(cookies) == set(REFUSED_COOKIE_CASES)
    cookie = cookies[case]
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    for path in SESSION_PATHS:
        for method in METHODS:
            target = concrete(path, job_id)
            result = ui_call(client, method, target, cookie=cookie, accept="application/json")
            assert result.status_code == 401, (case, method, path, result.status_code)
            assert job_id not in result.text
    assert_nothing_changed(system, job_id)


def test_a_valid_session_opens_every_dashboard_route(system, client):
    browser = log_in(client)
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    system.runner.drain()  # finished: its event stream ends once it has told its changes
    expected = {
        ("GET", "/ui"): 303,
        ("GET", "/ui/"): 200,
        ("GET", "/ui/data/overview"): 200,
        ("GET", "/ui/jobs"): 200,
        ("GET", "/ui/schedules"): 200,
        ("GET", "/ui/jobs/{job_id}"): 200,
        ("GET", "/ui/jobs/{job_id}/events"): 200,
        ("POST", "/ui/jobs/{job_id}/cancel"): 303,
        ("POST", "/ui/jobs/{job_id}/retry"): 303,
        ("POST", "/ui/queues/{name}/pause"): 303,
        ("POST", "/ui/queues/{name}/resume"): 303,
        ("POST", "/ui/logout"): 303,
        ("GET", "/ui/jobs/bulk"): 400,  # admitted; no action or filter given
        ("GET", "/ui/charts/{name}"): 200,
        ("GET", "/ui/data/charts"): 200,
        ("POST", "/ui/jobs/bulk"): 400,
    }
    for path in sorted(UI_SESSION):
        for method in METHODS:
            result = client.simulate_request(
                method,
                concrete(path, job_id),
                headers={
                    **browser.headers,
                    "X-CSRF-Token": browser.csrf,
                    "Sec-Fetch-Site": "same-origin",
                },
            )
            want = 200 if method == "OPTIONS" else expected.get((method, path), 405)
            assert result.status_code == want, (method, path, result.text)
    missing = browser.get(client, "/ui/no-such-page")
    assert missing.status_code == 404


def test_a_session_cookie_opens_no_api_route(system, client):
    browser = log_in(client)
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    for path in api_routes(client):
        if path in PUBLIC:
            continue
        for method in METHODS:
            result = client.simulate_request(
                method,
                concrete(path, job_id),
                headers={
                    **browser.headers,
                    "Content-Type": "application/json",
                    "X-CSRF-Token": browser.csrf,
                    "Sec-Fetch-Site": "same-origin",
                },
                body=BODIES.get(path, JOB_BODY) if method in ("POST", "PUT", "PATCH") else None,
            )
            assert result.status_code == 401, (method, path, result.status_code)
            assert result.headers["WWW-Authenticate"] == "Bearer"
    assert_nothing_changed(system, job_id)


@pytest.mark.parametrize(
    "path", ["/ui/login", "/ui/static/dashboard.js", "/ui/static/dashboard.css"]
)
def test_public_dashboard_routes_answer_the_same_with_any_cookie_or_token_or_none(
    system, client, path
):
    browser = log_in(client)
    answers = {
        repr(case): client.simulate_get(
            path,
            headers={
                **({} if cookie is None else {"Cookie": f"jobtable_session={cookie}"}),
                **({} if authorization is None else {"Authorization": authorization}),
            },
        )
        for case, cookie, authorization in [
            ("nothing", None, None),
            ("session", browser.cookie, None),
            ("bad cookie", "garbage", None),
            ("bearer", None, f"Bearer {TOKEN}"),
            ("bad bearer", None, "Bearer nope"),
        ]
    }
    assert {answer.status_code for answer in answers.values()} == {200}
    assert len({answer.content for answer in answers.values()}) == 1
