"""GET /api/v1/jobs/{id}, /health and the error envelope: the reference's server tests, ported."""

from __future__ import annotations

import threading
import types

import attrs
import falcon.testing
import pytest

from jobtable.core import Failure, JobContext, NoopPayload, StoreError, StoreUnavailableError
from jobtable.core.tracing import NO_TRACING
from jobtable.entrypoints.http.app import create_app
from tests.http.conftest import AUTH, TOKEN

UNKNOWN_ID = "01900000-0000-7000-8000-0000000000ff"


@attrs.frozen
class DraftPayload:
    pass


@attrs.frozen
class DraftResult:
    days: int

    def public(self):
        return {"days": self.days}


def register_draft(system, *, release: threading.Event, fail: bool = False):
    def draft(ctx: JobContext, payload: DraftPayload) -> DraftResult:
        ctx.publish(DraftResult(days=1))
        if fail:
            raise Failure("no_regulars")
        release.wait(30)
        return DraftResult(days=7)

    return system.kinds.register(
        "draft", draft, payload=DraftPayload, failure_codes=["no_regulars"]
    )


def get_job(client, job_id):
    result = client.simulate_get(f"/api/v1/jobs/{job_id}", headers=AUTH)
    assert result.status_code == 200, result.text
    assert set(result.json) == {"id", "kind", "status", "result", "error"}
    return result.json


def test_get_job_shows_progress_then_the_result(system, client):
    release = threading.Event()
    kind = register_draft(system, release=release)
    system.start()
    job_id = kind.enqueue(DraftPayload())

    system.wait_for(job_id, lambda job: job.result == {"days": 1})
    assert get_job(client, job_id) == {
        "id": job_id, "kind": "draft", "status": "running", "result": {"days": 1}, "error": None,
    }  # fmt: skip

    release.set()
    system.wait_for(job_id)
    assert get_job(client, job_id) == {
        "id": job_id, "kind": "draft", "status": "succeeded", "result": {"days": 7}, "error": None,
    }  # fmt: skip


def test_get_job_shows_the_failure_code(system, client):
    kind = register_draft(system, release=threading.Event(), fail=True)
    system.start()
    job_id = kind.enqueue(DraftPayload())
    system.wait_for(job_id)
    body = get_job(client, job_id)
    assert (body["status"], body["error"], body["result"]) == ("failed", "no_regulars", {"days": 1})


def test_get_of_an_unknown_job_is_404_job_not_found(client):
    result = client.simulate_get(f"/api/v1/jobs/{UNKNOWN_ID}", headers=AUTH)
    assert result.status_code == 404
    assert result.json == {"error": {"code": "not_found", "message": "job not found"}}


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": ""},
        {"Authorization": "Bearer"},
        {"Authorization": "Bearer "},
        {"Authorization": f"Basic {TOKEN}"},
        {"Authorization": f"Bearer {TOKEN}x"},
        {"Authorization": f"Bearer {TOKEN[:-1]}"},
        {"Authorization": "Bearer wrong-token-same-len"},
        {"Authorization": f"Bearer {TOKEN.upper()}"},
    ],
)
def test_the_api_requires_the_bearer_token(client, headers):
    for path in (f"/api/v1/jobs/{UNKNOWN_ID}", "/api/v1/nothing-here", "/api/v1"):
        result = client.simulate_get(path, headers=headers)
        assert result.status_code == 401, path
        assert result.headers["WWW-Authenticate"] == "Bearer"
        assert result.json == {
            "error": {"code": "unauthenticated", "message": "a valid bearer token is required"}
        }


@pytest.mark.parametrize(
    "template",
    ["//api/v1/jobs/{id}", "///api/v1/jobs/{id}", "/api//v1/jobs/{id}", "/api/v1//jobs/{id}",
     "/api/v1/jobs/{id}/", "/%61pi/v1/jobs/{id}"],
)  # fmt: skip
def test_no_spelling_of_a_path_gets_past_the_token(system, client, template):
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    result = client.simulate_get(template.format(id=job_id))
    assert result.status_code in (401, 404), template
    assert job_id not in result.text


def test_the_bearer_scheme_is_case_insensitive(client):
    result = client.simulate_get(
        f"/api/v1/jobs/{UNKNOWN_ID}", headers={"Authorization": f"bearer {TOKEN}"}
    )
    assert result.status_code == 404


def test_health_is_public_and_reports_the_version(client):
    result = client.simulate_get("/health")
    assert result.status_code == 200
    assert result.json == {"status": "ok", "version": "9.9.9"}
    assert result.headers["Content-Type"].startswith("application/json")


def test_create_app_requires_a_runner():
    with pytest.raises(ValueError, match="runner"):
        create_app(None, api_token=TOKEN)


def test_create_app_requires_a_token(system):
    with pytest.raises(ValueError, match="token"):
        create_app(system.runner, api_token="")


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("POST", f"/api/v1/jobs/{UNKNOWN_ID}", 405, "method_not_allowed"),
        ("DELETE", f"/api/v1/jobs/{UNKNOWN_ID}", 405, "method_not_allowed"),
        ("PUT", "/health", 405, "method_not_allowed"),
        ("GET", "/nowhere", 404, "not_found"),
        ("GET", "/api/v1/nowhere", 404, "not_found"),
        ("GET", "/api/v2/jobs", 404, "not_found"),
    ],
)
def test_falcons_own_errors_use_the_envelope(client, method, path, status, code):
    result = client.simulate_request(method, path, headers=AUTH)
    assert result.status_code == status
    assert result.json["error"]["code"] == code
    assert set(result.json["error"]) == {"code", "message"}


class BrokenRunner:
    def __init__(self, error: Exception) -> None:
        self.error = error
        self.client = types.SimpleNamespace(tracing=NO_TRACING)

    def get(self, job_id):
        raise self.error


SECRET = "postgres://app:hunter2@db"


@pytest.mark.parametrize(
    ("error", "status", "code"),
    [
        (StoreUnavailableError("database locked"), 503, "unavailable"),
        (StoreError("database error"), 500, "internal"),
        (RuntimeError(SECRET), 500, "internal"),
    ],
)
def test_store_and_unexpected_errors_answer_in_the_envelope_without_their_text(
    system, error, status, code
):
    error.__cause__ = RuntimeError(SECRET)
    app = create_app(BrokenRunner(error), api_token=TOKEN, logger=system.logs.logger)
    result = falcon.testing.TestClient(app).simulate_get(f"/api/v1/jobs/{UNKNOWN_ID}", headers=AUTH)
    assert result.status_code == status
    assert result.json["error"]["code"] == code
    assert SECRET not in result.text
    assert SECRET not in system.logs.text
    assert "request failed" in system.logs.text


@pytest.mark.parametrize(
    "error", [StoreUnavailableError("locked"), StoreError("database error"), RuntimeError("x")]
)
def test_a_failed_requests_path_is_logged_escaped_on_one_line(system, error):
    """A newline in a path must not write a line that reads as a record of its own."""
    app = create_app(BrokenRunner(error), api_token=TOKEN, logger=system.logs.logger)
    forged = "x%0A2030-01-02%2003:04:05,678%20ERROR%20jobtable:%20forged%00"
    falcon.testing.TestClient(app).simulate_get(f"/api/v1/jobs/{forged}", headers=AUTH)
    (line,) = system.logs.lines()
    assert "\n" not in line and "\x00" not in line
    assert line.endswith(r"path=/api/v1/jobs/x\n2030-01-02 03:04:05,678 ERROR jobtable: forged\x00")
