"""POST /api/v1/jobs: the reference's POST tests (seed 002, read backwards), adapted to bearer auth."""

from __future__ import annotations

import io
import json
import threading

import attrs
import pytest

from tests.http.conftest import AUTH, TOKEN
from tests.http.test_jobs_api import register_draft

JSON_AUTH = {**AUTH, "Content-Type": "application/json"}


@attrs.frozen
class Order:
    quantity: int
    note: str = ""


def jobs_stored(system) -> int:
    return len(system.store.inner._rows)


@pytest.fixture
def draft_system(system):
    release = threading.Event()
    register_draft(system, release=release)

    system.kinds.register("order", take_order, payload=Order)
    system.release = release
    return system


@attrs.frozen
class Receipt:
    def public(self):
        return {}


def take_order(ctx, payload: Order) -> Receipt:
    return Receipt()


def post(client, body, headers=JSON_AUTH):
    data = body if isinstance(body, bytes) else body.encode()
    return client.simulate_post("/api/v1/jobs", body=data, headers=headers)


def test_post_then_get_shows_progress_then_the_result(draft_system, client):
    draft_system.start()
    result = post(client, '{"kind":"draft","payload":{}}')
    assert result.status_code == 202
    assert set(result.json) == {"id"}
    job_id = result.json["id"]
    assert result.headers["Location"] == f"/api/v1/jobs/{job_id}"

    draft_system.wait_for(job_id, lambda job: job.result == {"days": 1})
    mid = client.simulate_get(result.headers["Location"], headers=AUTH).json
    assert (mid["status"], mid["result"], mid["error"]) == ("running", {"days": 1}, None)
    draft_system.release.set()
    draft_system.wait_for(job_id)
    done = client.simulate_get(result.headers["Location"], headers=AUTH).json
    assert (done["status"], done["result"]) == ("succeeded", {"days": 7})


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        ('{"kind":"no_such_kind","payload":{}}', "unknown_kind", "unknown job kind"),
        ('{"kind":"draft","payload":{"days":3}}', "invalid_payload",
         "payload does not match the job kind: unknown field 'days' @ $"),
        ('{"kind":"draft","payload":[1]}', "invalid_payload",
         "payload does not match the job kind: expected an object @ $"),
        ('{"kind":"order","payload":{"quantity":"3","note":7,"x":1}}', "invalid_payload",
         "payload does not match the job kind: expected an integer @ $.quantity; "
         "expected a string @ $.note; unknown field 'x' @ $"),
        ('{"kind":"order","payload":{}}', "invalid_payload",
         "payload does not match the job kind: required field missing @ $.quantity"),
        ('{"kind":"order","payload":{"quantity":9223372036854775808}}', "invalid_payload",
         "payload does not match the job kind: expected an integer between -2^63 and 2^63-1 @ $.quantity"),
        ('{"kind":"draft"}', "invalid_request", "payload: required"),
        ('{"kind":"draft","payload":null}', "invalid_request", "payload: must not be null"),
        ('{"payload":{}}', "invalid_request", "kind: required"),
        ('{"kind":"","payload":{}}', "invalid_request", "kind: required"),
        ('{"kind":7,"payload":{}}', "invalid_request", "kind: must be a string"),
        ("", "invalid_request", "request body must be a JSON object with kind and payload"),
        ('["draft"]', "invalid_request", "request body must be a JSON object with kind and payload"),
        ('{"kind":"draft","payload":{},"extra":1}', "invalid_request",
         "unknown field 'extra'; a job has kind, payload, queue, priority, run_at, delay, "
         "timeout and unique_key"),
        ('{"kind":"draft","payload":{}} {}', "invalid_request",
         "request body must be a single JSON object"),
        ("{not json", "invalid_request", "request body is not valid JSON (line 1 column 2)"),
        ('{"kind":"draft","kind":"x","payload":{}}', "invalid_request",
         "request body has an object with a duplicate key"),
        ('{"kind":"draft","payload":{"n":NaN}}', "invalid_request",
         "request body holds NaN or Infinity, which JSON does not allow"),
        ('{"kind":"draft","payload":{"n":' + "9" * 4301 + "}}", "invalid_request",
         "request body holds a number with too many digits"),
        ('{"kind":"draft","payload":' + "[" * 65 + "]" * 65 + "}", "invalid_request",
         "request body is nested too deeply"),
        ("[" * 20000, "invalid_request", "request body is nested too deeply"),
        (b'{"kind":"dr\xffaft","payload":{}}', "invalid_request", "request body is not valid UTF-8"),
    ],
)  # fmt: skip
def test_post_refuses_bad_requests_and_stores_nothing(draft_system, client, body, code, message):
    result = post(client, body)
    assert result.status_code == 400
    assert result.json == {"error": {"code": code, "message": message}}
    assert jobs_stored(draft_system) == 0


def test_an_invalid_payload_message_never_echoes_a_submitted_value(draft_system, client):
    secret = "sk-submitted-9f1b"
    result = post(client, json.dumps({"kind": "order", "payload": {"quantity": secret}}))
    assert result.status_code == 400
    assert secret not in result.text


@pytest.mark.parametrize(
    "item",
    [
        {"kind": "order", "payload": {"quantity": "sk-submitted-9f1b"}},
        {"kind": "sk-submitted-9f1b", "payload": {}},
        {"kind": ["sk-submitted-9f1b"], "payload": {}},
        {"kind": "order", "payload": None, "note": "sk-submitted-9f1b"},
        "sk-submitted-9f1b",
    ],
)
def test_a_batch_refusal_never_echoes_a_submitted_value(draft_system, client, item):
    body = {"jobs": [{"kind": "order", "payload": {"quantity": 1}}, item]}
    result = client.simulate_post("/api/v1/jobs/batch", body=json.dumps(body), headers=JSON_AUTH)
    assert result.status_code == 400
    assert result.json["error"]["message"].startswith("jobs[1]: ")
    assert "sk-submitted-9f1b" not in result.text
    assert jobs_stored(draft_system) == 0


def test_a_payload_with_a_lone_surrogate_is_refused_and_every_job_stays_readable(
    draft_system, client
):
    """JSON may escape a lone surrogate; no UTF-8 answer could carry it back, so it is refused."""
    result = post(client, '{"kind": "order", "payload": {"quantity": 1, "note": "\\udcff"}}')
    assert result.status_code == 400
    assert result.json["error"]["code"] == "invalid_payload"
    assert "lone surrogate @ $.note" in result.json["error"]["message"]
    assert jobs_stored(draft_system) == 0


@pytest.mark.parametrize(
    "content_type",
    [None, "text/plain", "application/x-www-form-urlencoded", "application/jsonx", "multipart/form-data"],
)  # fmt: skip
def test_post_refuses_a_body_that_is_not_json(draft_system, client, content_type):
    headers = dict(AUTH) if content_type is None else {**AUTH, "Content-Type": content_type}
    result = post(client, '{"kind":"draft","payload":{}}', headers=headers)
    assert result.status_code == 415
    assert result.json["error"]["code"] == "unsupported_media_type"
    assert jobs_stored(draft_system) == 0


def test_json_with_a_charset_is_accepted(draft_system, client):
    headers = {**AUTH, "Content-Type": "application/json; charset=utf-8"}
    assert post(client, '{"kind":"draft","payload":{}}', headers=headers).status_code == 202


TOO_LARGE = json.dumps({"kind": "draft", "payload": {"pad": "x" * (64 * 1024)}}).encode()


def test_a_body_over_64_kib_is_refused_by_its_content_length(draft_system, client):
    result = post(client, TOO_LARGE)
    assert result.status_code == 413
    assert result.json["error"]["code"] == "payload_too_large"
    assert jobs_stored(draft_system) == 0


class CountingStream(io.BytesIO):
    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.read_total = 0

    def read(self, size=-1):
        chunk = super().read(size)
        self.read_total += len(chunk)
        return chunk


def test_a_body_over_64_kib_without_a_length_is_refused_after_reading_past_the_limit_only(
    draft_system, client
):
    stream = CountingStream(TOO_LARGE + b" " * 1_000_000)
    result = client.simulate_request(
        "POST",
        "/api/v1/jobs",
        headers=JSON_AUTH,
        extras={"wsgi.input": stream, "CONTENT_LENGTH": "", "wsgi.input_terminated": True},
    )
    assert result.status_code == 413
    assert stream.read_total <= 64 * 1024 + 1
    assert jobs_stored(draft_system) == 0


def test_post_needs_the_bearer_token(draft_system, client):
    for headers in ({"Content-Type": "application/json"},
                    {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}!"}):  # fmt: skip
        result = post(client, '{"kind":"draft","payload":{}}', headers=headers)
        assert result.status_code == 401
        assert result.headers["WWW-Authenticate"] == "Bearer"
    assert jobs_stored(draft_system) == 0


def test_post_enqueues_the_builtin_noop(system, client):
    system.start()
    result = post(client, '{"kind":"noop","payload":{}}')
    assert result.status_code == 202
    assert system.wait_for(result.json["id"]).result == {"ok": True}


def test_a_payload_is_stored_as_the_typed_handle_would_store_it(draft_system, client):
    result = post(client, '{"kind":"order","payload":{"quantity":2}}')
    assert result.status_code == 202
    assert draft_system.store.row(result.json["id"])["payload"] == '{"quantity":2,"note":""}'


@pytest.mark.parametrize(
    "kind",
    ["os.system", "core.builtins.noop", "__import__", "builtins.eval", "noop ", "NOOP", "noop\x00",
     "countdown", "subprocess:run", "../noop", ""],
)  # fmt: skip
def test_post_runs_only_registered_kinds(system, client, kind):
    result = client.simulate_post(
        "/api/v1/jobs",
        headers={**AUTH, "Content-Type": "application/json"},
        json={"kind": kind, "payload": {}},
    )
    assert result.status_code in (400, 422), result.text
    assert result.json["error"]["code"] in ("unknown_kind", "invalid_request")
    assert system.runner.drain() == []


def test_post_of_a_registered_kind_runs_it(system, client):
    result = client.simulate_post(
        "/api/v1/jobs",
        headers={**AUTH, "Content-Type": "application/json"},
        json={"kind": "noop", "payload": {}},
    )
    assert result.status_code == 202
    assert [job.kind for job in system.runner.drain()] == ["noop"]
