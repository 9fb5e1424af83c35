"""The OpenAPI 3.1 document of the whole HTTP API, served at /api/v1/openapi.json.

Kept true by tests/http/test_openapi.py, which runs schemathesis against the
app in process: every response must match what is written here.
"""

from __future__ import annotations

from typing import Any

from jobtable.entrypoints.http.openapi_examples import with_examples
from jobtable.entrypoints.http.openapi_follow import (
    EVENTS_PATH,
    GET_JOB,
    LIST_JOBS,
    RETRY_JOB,
)
from jobtable.entrypoints.http.openapi_names import named
from jobtable.entrypoints.http.openapi_parts import COMMON as _COMMON
from jobtable.entrypoints.http.openapi_parts import JOB_ID as _JOB_ID
from jobtable.entrypoints.http.openapi_parts import UNAUTHENTICATED as _UNAUTHENTICATED
from jobtable.entrypoints.http.openapi_parts import error as _error
from jobtable.entrypoints.http.openapi_parts import json_answer as _json
from jobtable.entrypoints.http.openapi_parts import ref as _ref
from jobtable.entrypoints.http.openapi_schemas import SCHEMAS

_LOCATION = {"Location": {"description": "where to GET the job", "schema": {"type": "string"}}}
_IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "send the request again with the same key to get the first answer (24 h)",
    "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"},
}
_IDEMPOTENCY_REFUSALS = {
    "409": _error("conflict: a request with this Idempotency-Key is still being answered"),
    "422": _error("idempotency_key_reused: the key was sent with another request"),
}
_QUEUE_NAME = {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}
_BODY_REFUSALS = {
    "401": _UNAUTHENTICATED,
    "413": _error("the body is over 64 KiB"),
    "415": _error("the body is not application/json"),
}


def _body(schema: str) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": _ref(schema)}}}


def _listing(key: str, item: str) -> dict[str, Any]:
    return {
        "type": "object",
        "required": [key],
        "additionalProperties": False,
        "properties": {key: {"type": "array", "items": _ref(item)}},
    }


def _ids(*keys: str, duplicate: bool = False) -> dict[str, Any]:
    properties: dict[str, Any] = {key: {"type": "string"} for key in keys}
    if duplicate:
        properties["duplicate"] = {"const": True}
    return {
        "type": "object",
        "required": list(properties),
        "additionalProperties": False,
        "properties": properties,
    }


def _job_paths() -> dict[str, Any]:
    return {
        "/api/v1/jobs": {
            "get": LIST_JOBS,
            "post": {
                "summary": "enqueue a job of a registered kind",
                "parameters": [_IDEMPOTENCY_KEY],
                "requestBody": _body("JobRequest"),
                "responses": {
                    "202": _json("queued", _ids("id"), headers=_LOCATION),
                    "200": _json(
                        "a job of the kind already holds unique_key: nothing was stored, "
                        "this is its id",
                        _ids("id", duplicate=True),
                        headers=_LOCATION,
                    ),
                    "400": _error(
                        "invalid_request, unknown_kind, invalid_payload or invalid_option"
                    ),
                    **_IDEMPOTENCY_REFUSALS,
                    **_BODY_REFUSALS,
                    **_COMMON,
                },
            },
        },
        "/api/v1/jobs/batch": {
            "post": {
                "summary": "enqueue up to 1,000 jobs in one transaction: all of them, or none",
                "parameters": [_IDEMPOTENCY_KEY],
                "requestBody": _body("BatchRequest"),
                "responses": {
                    "202": _json(
                        "stored; ids in the request's order (a unique-key duplicate's is the "
                        "existing job's)",
                        {
                            "type": "object",
                            "required": ["ids"],
                            "additionalProperties": False,
                            "properties": {"ids": {"type": "array", "items": {"type": "string"}}},
                        },
                    ),
                    "400": _error("the first refused job, by its index: nothing was stored"),
                    **_IDEMPOTENCY_REFUSALS,
                    **_BODY_REFUSALS,
                    **_COMMON,
                },
            }
        },
        "/api/v1/jobs/cancel": _bulk(
            "cancel every job the filter matches that is not finished (running ones are told "
            "to stop), up to the newest job when the request began, 500 per transaction"
        ),
        "/api/v1/jobs/retry": _bulk(
            "retry every failed, cancelled or timed-out job the filter matches, up to the "
            "newest job when the request began, 500 per transaction"
        ),
        "/api/v1/jobs/{job_id}": {"get": GET_JOB},
        "/api/v1/jobs/{job_id}/events": EVENTS_PATH,
        "/api/v1/jobs/{job_id}/detail": {
            "get": {
                "summary": "a job with its queue, schedule, attempts and why it waits",
                "parameters": [_JOB_ID],
                "responses": {
                    "200": _json("the job's detail", _ref("JobDetail")),
                    "401": _UNAUTHENTICATED,
                    "404": _error("no such job"),
                    **_COMMON,
                },
            }
        },
        "/api/v1/jobs/{job_id}/cancel": {
            "post": {
                "summary": "cancel a job: at once when not running, else its handler is told",
                "parameters": [_JOB_ID],
                "responses": {
                    "200": _json("cancelled now, or it already was: failed cancelled", _ref("Job")),
                    "202": _json(
                        "running: its handler was asked to stop; it fails cancelled when it "
                        "does, unless it returned first",
                        _ref("Job"),
                    ),
                    "401": _UNAUTHENTICATED,
                    "404": _error("no such job"),
                    "409": _error("conflict: it had already finished otherwise"),
                    **_COMMON,
                },
            }
        },
        "/api/v1/jobs/{job_id}/retry": {"post": RETRY_JOB},
    }


def _bulk(summary: str) -> dict[str, Any]:
    return {
        "post": {
            "summary": summary,
            "requestBody": _body("BulkRequest"),
            "responses": {
                "200": _json("how many jobs matched and changed", _ref("BulkResult")),
                "400": _error("invalid_option: a bad filter, or a state the action cannot change"),
                **_BODY_REFUSALS,
                **_COMMON,
            },
        }
    }


def _pause(summary: str) -> dict[str, Any]:
    return {
        "post": {
            "summary": summary,
            "parameters": [_QUEUE_NAME],
            "responses": {
                "200": _json("the queue now", _ref("Queue")),
                "400": _error("invalid_option: not a queue name"),
                "401": _UNAUTHENTICATED,
                "404": _error("no such route"),
                **_COMMON,
            },
        }
    }


def _operating_paths() -> dict[str, Any]:
    return {
        "/api/v1/queues": {
            "get": {
                "summary": "every queue that holds jobs or is paused or limited, with counts, "
                "limits and their use",
                "responses": {
                    "200": _json("the queues, by name", _listing("queues", "Queue")),
                    "401": _UNAUTHENTICATED,
                    **_COMMON,
                },
            }
        },
        "/api/v1/queues/{name}": {
            "patch": {
                "summary": "set or remove the queue's limits at run time, for every runner",
                "parameters": [_QUEUE_NAME],
                "requestBody": _body("QueueLimits"),
                "responses": {
                    "200": _json("the queue now", _ref("Queue")),
                    "400": _error("invalid_option: a bad limit, rate or queue name"),
                    "401": _UNAUTHENTICATED,
                    "404": _error("no such route"),
                    "413": _error("payload_too_large"),
                    "415": _error("unsupported_media_type"),
                    **_COMMON,
                },
            }
        },
        "/api/v1/queues/{name}/pause": _pause(
            "stop every runner claiming from the queue (running jobs go on); kept for good"
        ),
        "/api/v1/queues/{name}/resume": _pause("let runners claim from the queue again"),
        "/api/v1/runners": {
            "get": {
                "summary": "the live runners, oldest first",
                "responses": {
                    "200": _json("the runners", _listing("runners", "Runner")),
                    "401": _UNAUTHENTICATED,
                    **_COMMON,
                },
            }
        },
        "/api/v1/schedules": {
            "get": {
                "summary": "every periodic schedule a runner recorded at start, by name",
                "responses": {
                    "200": _json("the schedules", _listing("schedules", "Schedule")),
                    "401": _UNAUTHENTICATED,
                    **_COMMON,
                },
            }
        },
    }


def openapi_document(version: str) -> dict[str, Any]:
    """The document, every operation named and tagged, every JSON body a named schema
    (openapi_names.py) with an example (openapi_examples.py)."""
    return with_examples(named(_document(version)))


def _document(version: str) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "jobtable",
            "version": version,
            "description": "Enqueue background jobs and follow their progress and results.",
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": SCHEMAS,
        },
        "security": [{"bearer": []}],
        "paths": {
            "/health": {
                "get": {
                    "summary": "liveness and version",
                    "security": [],
                    "responses": {
                        "200": _json(
                            "up",
                            {
                                "type": "object",
                                "required": ["status", "version"],
                                "additionalProperties": False,
                                "properties": {
                                    "status": {"const": "ok"},
                                    "version": {"type": "string"},
                                },
                            },
                        ),
                        **_COMMON,
                    },
                }
            },
            "/metrics": {
                "get": {
                    "summary": "Prometheus metrics: jobs by queue, kind and status, completions, "
                    "run time and queue wait, claim errors, recoveries, runners, busy workers "
                    "(public when the server runs with --metrics-public)",
                    "responses": {
                        "200": {
                            "description": "the Prometheus text format (OpenMetrics when the "
                            "Accept header asks for application/openmetrics-text)",
                            "content": {
                                "text/plain": {"schema": {"type": "string"}},
                                "application/openmetrics-text": {"schema": {"type": "string"}},
                            },
                        },
                        "401": _UNAUTHENTICATED,
                        **_COMMON,
                    },
                }
            },
            "/api/v1/openapi.json": {
                "get": {
                    "summary": "this document",
                    "security": [],
                    "responses": {"200": _json("the document", {"type": "object"}), **_COMMON},
                }
            },
            **_job_paths(),
            **_operating_paths(),
        },
    }
