"""The OpenAPI 3.1 document of the whole HTTP API, served at /api/v1/openapi.json.

Kept true by tests/http/test_openapi.py, which runs schemathesis against the
app in process: every response must match what is written here.
"""

from __future__ import annotations

from typing import Any

ERROR_CODES = [
    "invalid_request", "unknown_kind", "invalid_payload", "unauthenticated", "not_found",
    "method_not_allowed", "payload_too_large", "unsupported_media_type", "internal", "unavailable",
]  # fmt: skip

_ERROR = {
    "type": "object",
    "required": ["error"],
    "additionalProperties": False,
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "additionalProperties": False,
            "properties": {
                "code": {"type": "string", "enum": ERROR_CODES},
                "message": {"type": "string"},
            },
        }
    },
}

_JOB = {
    "type": "object",
    "required": ["id", "kind", "status", "result", "error"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string"},
        "kind": {"type": "string"},
        "status": {"type": "string", "enum": ["queued", "running", "succeeded", "failed"]},
        "result": {"description": "the latest partial or final result; null until one"},
        "error": {"type": ["string", "null"], "description": "a failure code, only when failed"},
    },
}


def _error(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def _json(description: str, schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": schema}},
        **extra,
    }


_UNAUTHENTICATED = {
    **_error("no valid bearer token"),
    "headers": {"WWW-Authenticate": {"schema": {"type": "string", "const": "Bearer"}}},
}
_COMMON = {
    "405": _error("method not allowed"),
    "500": _error("internal error"),
    "503": _error("the database cannot be reached now"),
}


def openapi_document(version: str) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "jobtable",
            "version": version,
            "description": "Enqueue background jobs and follow their progress and results.",
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {"Error": _ERROR, "Job": _JOB},
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
            "/api/v1/openapi.json": {
                "get": {
                    "summary": "this document",
                    "security": [],
                    "responses": {"200": _json("the document", {"type": "object"}), **_COMMON},
                }
            },
            "/api/v1/jobs": {
                "post": {
                    "summary": "enqueue a job of a registered kind",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["kind", "payload"],
                                    "additionalProperties": False,
                                    "properties": {
                                        "kind": {"type": "string", "minLength": 1},
                                        "payload": {"type": "object"},
                                    },
                                }
                            }
                        },
                    },
                    "responses": {
                        "202": _json(
                            "queued",
                            {
                                "type": "object",
                                "required": ["id"],
                                "additionalProperties": False,
                                "properties": {"id": {"type": "string"}},
                            },
                            headers={
                                "Location": {
                                    "description": "where to GET the job",
                                    "schema": {"type": "string"},
                                }
                            },
                        ),
                        "400": _error("invalid_request, unknown_kind or invalid_payload"),
                        "401": _UNAUTHENTICATED,
                        "413": _error("the body is over 64 KiB"),
                        "415": _error("the body is not application/json"),
                        **_COMMON,
                    },
                }
            },
            "/api/v1/jobs/{job_id}": {
                "get": {
                    "summary": "a job: its status, latest result and failure code",
                    "parameters": [
                        {
                            "name": "job_id",
                            "in": "path",
                            "required": True,
                            "schema": {"type": "string"},
                        }
                    ],
                    "responses": {
                        "200": _json("the job", {"$ref": "#/components/schemas/Job"}),
                        "401": _UNAUTHENTICATED,
                        "404": _error("no such job"),
                        **_COMMON,
                    },
                }
            },
        },
    }
