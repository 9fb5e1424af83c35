"""Every body in the OpenAPI document has an example, and every example is true: it matches
its schema, and each request example is accepted by the API as written."""

from __future__ import annotations

import json

import falcon.testing
import jsonschema
import pytest
import referencing
import referencing.jsonschema

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.memory import MemoryStore
from jobtable.core import Runner, demo
from jobtable.entrypoints.http.app import create_app
from jobtable.entrypoints.http.openapi_examples import EXAMPLES

TOKEN = "examples-test-token"


@pytest.fixture
def client():
    runner = Runner(MemoryStore(), FakeClock())
    demo.register(runner.kinds)
    return falcon.testing.TestClient(
        create_app(runner, api_token=TOKEN), headers={"Authorization": f"Bearer {TOKEN}"}
    )


def the_document() -> dict:
    runner = Runner(MemoryStore(), FakeClock())
    return (
        falcon.testing.TestClient(create_app(runner, api_token=TOKEN))
        .simulate_get("/api/v1/openapi.json")
        .json
    )


def validator_for(document: dict, name: str) -> jsonschema.Draft202012Validator:
    resource = referencing.jsonschema.DRAFT202012.create_resource(document)
    registry = referencing.Registry().with_resource("urn:document", resource)
    schema = {"$ref": f"urn:document#/components/schemas/{name}"}
    return jsonschema.Draft202012Validator(schema, registry=registry)


def bodies(document: dict) -> set[str]:
    """The component names of every JSON request body and answer, and all they refer to."""

    def referred(value: object) -> set[str]:
        text = json.dumps(value)
        return {part.split('"')[0] for part in text.split('"#/components/schemas/')[1:]}

    named, new = set(), referred(document["paths"])
    while new:
        named |= new
        new = set().union(*(referred(document["components"]["schemas"][n]) for n in new)) - named
    return named


def test_every_body_the_api_takes_or_answers_with_has_an_example():
    document = the_document()
    assert {"JobRequest", "JobDetail", "State", "Attempt"} <= bodies(document)
    for name in bodies(document) - {"OpenApiDocument"}:  # the document is its own example
        assert document["components"]["schemas"][name].get("examples"), name


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_each_example_matches_its_schema(name):
    document = the_document()
    (example,) = document["components"]["schemas"][name]["examples"]
    errors = [error.message for error in validator_for(document, name).iter_errors(example)]
    assert errors == []


def test_the_event_stream_example_is_a_stream_of_jobs_to_the_end():
    document = the_document()
    events = document["paths"]["/api/v1/jobs/{job_id}/events"]["get"]["responses"]["200"]
    stream = events["content"]["text/event-stream"]["example"]
    jobs = [json.loads(line[6:]) for line in stream.splitlines() if line.startswith("data: ")]
    validator = validator_for(document, "Job")
    assert all(validator.is_valid(job) for job in jobs)
    assert (jobs[0]["status"], jobs[-1]["status"]) == ("queued", "succeeded")
    assert stream.startswith("retry: ")  # as every stream the API sends begins


def test_the_job_lists_example_cursor_is_one_the_api_takes(client):
    cursor = EXAMPLES["JobList"]["next_cursor"]
    answer = client.simulate_get("/api/v1/jobs", params={"cursor": cursor})
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize(
    ("method", "path", "name", "status"),
    [
        ("POST", "/api/v1/jobs", "JobRequest", 202),
        ("POST", "/api/v1/jobs/batch", "BatchRequest", 202),
        ("POST", "/api/v1/jobs/cancel", "BulkRequest", 200),
        ("POST", "/api/v1/jobs/retry", "BulkRequest", 200),
        ("PATCH", "/api/v1/queues/reports", "QueueLimits", 200),
    ],
)
def test_each_request_example_is_accepted_as_written(client, method, path, name, status):
    answer = client.simulate_request(method, path, json=EXAMPLES[name])
    assert answer.status_code == status, answer.text
    document = the_document()
    answered = {"/api/v1/jobs": "EnqueuedJob", "/api/v1/jobs/batch": "EnqueuedJobs"}.get(
        path, "Queue" if method == "PATCH" else "BulkResult"
    )
    assert validator_for(document, answered).is_valid(answer.json)
