"""The OpenAPI document is served in public and kept true by schemathesis, in process."""

from __future__ import annotations

import re

import falcon.testing
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.memory import MemoryStore
from jobtable.core import NoopPayload, Runner, demo
from jobtable.entrypoints.http.app import create_app

TOKEN = "openapi-test-token"


def build_app():
    runner = Runner(MemoryStore(), FakeClock())
    demo.register(runner.kinds)
    finished = runner.builtins.noop.enqueue(NoopPayload())
    runner.drain()
    return create_app(runner, api_token=TOKEN, version="1.2.3"), finished


APP, FINISHED = build_app()
schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", APP)


@schema.hook
def map_path_parameters(context, path_parameters):
    """Half the reads of a job's detail and events name a real one, so their 200s are
    checked too. It has finished, so its stream ends; nothing here retries it (only
    GETs are mapped) and a long-poll is never pointed at it (it would wait)."""
    operation = context.operation
    reads = operation.method.upper() == "GET" and operation.path.endswith(("/detail", "/events"))
    if reads and path_parameters and len(path_parameters.get("job_id", "")) % 2 == 0:
        path_parameters["job_id"] = FINISHED
    return path_parameters


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]


@schema.parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_response_conforms_to_the_document(case):
    case.call_and_validate(headers={"Authorization": f"Bearer {TOKEN}"}, checks=CHECKS)


@schema.parametrize()
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_response_conforms_without_a_token_too(case):
    case.call_and_validate(checks=CHECKS)


def test_the_document_is_public_openapi_3_1():
    result = falcon.testing.TestClient(APP).simulate_get("/api/v1/openapi.json")
    assert result.status_code == 200
    assert result.json["openapi"] == "3.1.0"
    assert set(result.json["paths"]) == {
        "/health", "/metrics", "/api/v1/openapi.json", "/api/v1/jobs", "/api/v1/jobs/batch",
        "/api/v1/jobs/{job_id}", "/api/v1/jobs/{job_id}/detail", "/api/v1/jobs/{job_id}/cancel",
        "/api/v1/jobs/{job_id}/events", "/api/v1/jobs/{job_id}/retry", "/api/v1/queues", "/api/v1/queues/{name}", "/api/v1/queues/{name}/pause", "/api/v1/queues/{name}/resume",
        "/api/v1/runners",
        "/api/v1/schedules", "/api/v1/jobs/cancel", "/api/v1/jobs/retry",
    }  # fmt: skip


@pytest.mark.parametrize("path", ["/api/v1/jobs", "/api/v1/jobs/x"])
def test_only_health_and_the_document_are_public(path):
    assert falcon.testing.TestClient(APP).simulate_get(path).status_code == 401


def test_every_operation_has_a_readable_name_a_tag_and_named_bodies():
    document = falcon.testing.TestClient(APP).simulate_get("/api/v1/openapi.json").json
    operations = [
        (method, path, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in ("get", "post", "put", "patch", "delete")
    ]
    names = {operation["operationId"] for _, _, operation in operations}
    assert len(names) == len(operations)  # one name an operation
    assert {"enqueueJob", "getJob", "listJobs", "cancelJob", "retryJob", "getJobDetail",
            "followJob", "cancelMatchingJobs", "retryMatchingJobs", "listQueues",
            "pauseQueue", "listSchedules"} <= names  # fmt: skip
    tags = {tag["name"] for tag in document["tags"]}
    for method, path, operation in operations:
        assert re.fullmatch(r"[a-z]+(?:[A-Z][a-z]+)+", operation["operationId"]), path
        assert operation["tags"] and set(operation["tags"]) <= tags, (method, path)
        assert operation["summary"], (method, path)
        for status, answer in operation["responses"].items():
            json_body = (answer.get("content") or {}).get("application/json")
            if json_body is not None:
                ref = json_body["schema"].get("$ref", "")
                assert ref.startswith("#/components/schemas/"), (method, path, status)
                assert ref.rsplit("/", 1)[1] in document["components"]["schemas"]
        body = operation.get("requestBody", {}).get("content", {}).get("application/json")
        if body is not None:
            assert body["schema"]["$ref"].startswith("#/components/schemas/"), (method, path)


def test_the_document_validates_as_openapi_3_1():
    from openapi_spec_validator import validate

    validate(falcon.testing.TestClient(APP).simulate_get("/api/v1/openapi.json").json)
