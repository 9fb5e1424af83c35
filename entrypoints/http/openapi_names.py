"""What a client generated from the OpenAPI document is called: every operation's
``operationId`` and tag, and a named component schema for every JSON body it answers with.

``named`` applies them to the document ``openapi.py`` writes, so an operation's shape is
written once, where it is served, and its names here, in one table a person can read: a
generator makes ``enqueue_job`` and ``EnqueuedJob`` of them, not ``post_api_v1_jobs`` and
``PostApiV1JobsResponse202``.
"""

from __future__ import annotations

import copy
from typing import Any

OPERATIONS: dict[tuple[str, str], tuple[str, str]] = {
    ("get", "/health"): ("getHealth", "service"),
    ("get", "/metrics"): ("getMetrics", "service"),
    ("get", "/api/v1/openapi.json"): ("getOpenApiDocument", "service"),
    ("get", "/api/v1/jobs"): ("listJobs", "jobs"),
    ("post", "/api/v1/jobs"): ("enqueueJob", "jobs"),
    ("post", "/api/v1/jobs/batch"): ("enqueueJobs", "jobs"),
    ("post", "/api/v1/jobs/cancel"): ("cancelMatchingJobs", "bulk actions"),
    ("post", "/api/v1/jobs/retry"): ("retryMatchingJobs", "bulk actions"),
    ("get", "/api/v1/jobs/{job_id}"): ("getJob", "jobs"),
    ("get", "/api/v1/jobs/{job_id}/events"): ("followJob", "jobs"),
    ("get", "/api/v1/jobs/{job_id}/detail"): ("getJobDetail", "jobs"),
    ("post", "/api/v1/jobs/{job_id}/cancel"): ("cancelJob", "jobs"),
    ("post", "/api/v1/jobs/{job_id}/retry"): ("retryJob", "jobs"),
    ("get", "/api/v1/queues"): ("listQueues", "queues"),
    ("patch", "/api/v1/queues/{name}"): ("setQueueLimits", "queues"),
    ("post", "/api/v1/queues/{name}/pause"): ("pauseQueue", "queues"),
    ("post", "/api/v1/queues/{name}/resume"): ("resumeQueue", "queues"),
    ("get", "/api/v1/runners"): ("listRunners", "runners"),
    ("get", "/api/v1/schedules"): ("listSchedules", "schedules"),
}
"""(method, path): (operationId, tag) for every operation the API serves."""

BODIES: dict[tuple[str, str, str], str] = {
    ("get", "/health", "200"): "Health",
    ("get", "/api/v1/openapi.json", "200"): "OpenApiDocument",
    ("get", "/api/v1/jobs", "200"): "JobList",
    ("post", "/api/v1/jobs", "202"): "EnqueuedJob",
    ("post", "/api/v1/jobs", "200"): "DuplicateJob",
    ("post", "/api/v1/jobs/batch", "202"): "EnqueuedJobs",
    ("get", "/api/v1/queues", "200"): "QueueList",
    ("get", "/api/v1/runners", "200"): "RunnerList",
    ("get", "/api/v1/schedules", "200"): "ScheduleList",
}
"""(method, path, status): the component name of a JSON answer written in place."""

TAGS = [
    {"name": "jobs", "description": "Enqueue jobs, read them, follow them, cancel and retry one."},
    {"name": "bulk actions", "description": "Cancel or retry every job a filter matches."},
    {"name": "queues", "description": "Queues: their counts by state, pause, resume, limits."},
    {"name": "runners", "description": "The live runners."},
    {"name": "schedules", "description": "The periodic schedules the runners recorded."},
    {"name": "service", "description": "Health, metrics and this document."},
]
METHODS = ("get", "post", "put", "patch", "delete")


def named(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with every operation named and tagged and every JSON answer a named
    component. KeyError for an operation or an answer neither table names."""
    named_document = copy.deepcopy(document)
    schemas = named_document["components"]["schemas"]
    for path, item in named_document["paths"].items():
        for method, operation in item.items():
            if method not in METHODS:
                continue
            operation_id, tag = OPERATIONS[(method, path)]
            operation["operationId"] = operation_id
            operation["tags"] = [tag]
            for status, answer in operation.get("responses", {}).items():
                media = (answer.get("content") or {}).get("application/json")
                if media is None or "$ref" in media["schema"]:
                    continue
                name = BODIES[(method, path, status)]
                schemas[name] = media["schema"]
                media["schema"] = {"$ref": f"#/components/schemas/{name}"}
    named_document["tags"] = TAGS
    return named_document
