"""One trace from a request to its job's end, across processes: ``serve`` takes the caller's
``traceparent`` and enqueues, a ``jobtable worker`` runs the job; both send their spans
through the OpenTelemetry SDK an application configures (tests/e2e/traced_kinds.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import wait_until
from tests.e2e.processes import start_worker, stop, wait_for_start

pytestmark = pytest.mark.e2e
KINDS = "tests.e2e.traced_kinds"
TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
CALLER = "b7ad6b7169203331"


def spans(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_request_its_enqueue_and_its_job_are_one_trace_across_processes(
    database, serve_processes, tmp_path
):
    exported = tmp_path / "spans.jsonl"
    env = {"JOBTABLE_TEST_SPANS": str(exported), "JOBTABLE_API_TOKEN": "tracing-token"}
    server = serve_processes(database, "--workers", "0", "--kinds", KINDS, env=env)
    log = tmp_path / "worker.log"
    worker = start_worker(database, log, kinds=KINDS, workers=1, env=env)
    try:
        wait_for_start(log)
        traceparent = f"00-{TRACE_ID}-{CALLER}-01"
        status, body = server.request(
            "/api/v1/jobs",
            body={"kind": "ship", "payload": {"fail_first": True}},
            headers={"traceparent": traceparent},
        )
        assert status == 202, body
        job_id = body["id"]
        server.poll_job(job_id, lambda job: job["status"] == "succeeded")
        wait_until(lambda: len(spans(exported)) >= 5, 30, "every span exported")
    finally:
        assert stop(worker) == 0, log.read_text()
    lines = spans(exported)
    by_name: dict[str, list[dict]] = {}
    for line in lines:
        by_name.setdefault(line["name"], []).append(line)
    (sent,) = by_name["send ship"]
    first, second = sorted(
        by_name["process ship"], key=lambda s: s["attributes"]["jobtable.attempt"]
    )
    assert sent["pid"] == server.process.pid and first["pid"] == worker.pid != sent["pid"]
    # The request's trace runs through the enqueue to the job's first attempt, and into the
    # handler's own spans.
    assert (sent["trace_id"], sent["parent"], sent["kind"]) == (TRACE_ID, CALLER, "PRODUCER")
    assert (first["trace_id"], first["parent"], first["kind"]) == (
        TRACE_ID,
        sent["span_id"],
        "CONSUMER",
    )
    assert first["attributes"] == {
        "messaging.system": "jobtable",
        "messaging.message.id": job_id,
        "messaging.destination.name": "default",
        "jobtable.kind": "ship",
        "jobtable.attempt": 1,
        "jobtable.outcome": "internal_error",
    }
    calls = by_name["call the carrier"]
    assert {call["parent"] for call in calls} == {first["span_id"], second["span_id"]}
    # The retry is a trace of its own, linked to the enqueue.
    assert second["trace_id"] != TRACE_ID and second["parent"] is None
    assert second["links"] == [sent["span_id"]]
    assert second["attributes"]["jobtable.outcome"] == "succeeded"
    assert "carrier down" not in exported.read_text()
