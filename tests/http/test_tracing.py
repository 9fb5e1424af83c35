"""An enqueue over HTTP continues the caller's trace from its W3C ``traceparent`` header."""

from __future__ import annotations

import json
from collections.abc import Iterator

import falcon.testing
import pytest

from jobtable.adapters.memory import MemoryStore
from jobtable.entrypoints.http.app import create_app
from tests.http.conftest import AUTH, TOKEN
from tests.support.harness import JobSystem
from tests.unit.kinds_for_tests import CountPayload, count
from tests.unit.test_tracing import Spans

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"


@pytest.fixture
def spans() -> Spans:
    return Spans()


@pytest.fixture
def traced(spans) -> Iterator[tuple[JobSystem, falcon.testing.TestClient]]:
    system = JobSystem(MemoryStore(), workers=0, tracing=spans.tracing)
    system.kinds.register("counted", count, payload=CountPayload)
    app = create_app(system.runner, api_token=TOKEN, logger=system.logs.logger, clock=system.clock)
    yield system, falcon.testing.TestClient(app)
    system.stop()


def post(client: falcon.testing.TestClient, path: str, body: object, **headers: str):
    return client.simulate_post(
        path, body=json.dumps(body), headers={**AUTH, "Content-Type": "application/json", **headers}
    )


def test_a_post_with_a_traceparent_enqueues_under_the_callers_span(traced, spans):
    _, client = traced
    answer = post(client, "/api/v1/jobs", {"kind": "counted", "payload": {}}, traceparent=PARENT,
                  tracestate="vendor=x")  # fmt: skip
    assert answer.status_code == 202, answer.text
    sent = spans.one("send counted")
    assert f"{sent.context.trace_id:032x}" == TRACE_ID
    assert sent.parent is not None and f"{sent.parent.span_id:016x}" == "00f067aa0ba902b7"
    assert sent.attributes["messaging.message.id"] == answer.json["id"]
    assert sent.context.trace_state.get("vendor") == "x"


def test_a_batch_over_http_makes_one_send_span_per_job_in_the_callers_trace(traced, spans):
    _, client = traced
    body = {"jobs": [{"kind": "counted", "payload": {"steps": n}} for n in range(3)]}
    answer = post(client, "/api/v1/jobs/batch", body, traceparent=PARENT)
    assert answer.status_code == 202, answer.text
    sent = spans.named("send counted")
    assert len(sent) == 3
    assert {f"{span.context.trace_id:032x}" for span in sent} == {TRACE_ID}


@pytest.mark.parametrize(
    "malformed",
    [
        "garbage",
        f"00-{'0' * 32}-00f067aa0ba902b7-01",  # an all-zero trace id is invalid
        f"00-{TRACE_ID}-{'0' * 16}-01",  # so is an all-zero parent id
        f"ff-{TRACE_ID}-00f067aa0ba902b7-01",  # version ff is forbidden
    ],
)
def test_a_malformed_traceparent_is_ignored_and_starts_a_new_trace(traced, spans, malformed):
    _, client = traced
    answer = post(client, "/api/v1/jobs", {"kind": "counted", "payload": {}}, traceparent=malformed)
    assert answer.status_code == 202, answer.text
    sent = spans.one("send counted")
    assert sent.parent is None and f"{sent.context.trace_id:032x}" != TRACE_ID


def test_the_callers_context_does_not_outlive_its_request(traced, spans):
    _, client = traced
    post(client, "/api/v1/jobs", {"kind": "counted", "payload": {}}, traceparent=PARENT)
    post(client, "/api/v1/jobs", {"kind": "counted", "payload": {}})
    first, second = spans.named("send counted")
    assert first.parent is not None and second.parent is None


def test_a_server_span_of_the_applications_own_stays_the_parent(traced, spans):
    _, client = traced
    with spans.provider.get_tracer("wsgi").start_as_current_span("POST /api/v1/jobs") as server:
        post(client, "/api/v1/jobs", {"kind": "counted", "payload": {}}, traceparent=PARENT)
    sent = spans.one("send counted")
    assert sent.parent is not None and sent.parent.span_id == server.get_span_context().span_id
