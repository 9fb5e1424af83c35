"""The pieces every path of the OpenAPI document is made of: references, answers, errors."""

from __future__ import annotations

from typing import Any


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def error(description: str, **extra: Any) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        **extra,
    }


def json_answer(description: str, schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": schema}},
        **extra,
    }


UNAUTHENTICATED = error(
    "no valid bearer token",
    headers={"WWW-Authenticate": {"schema": {"type": "string", "const": "Bearer"}}},
)
COMMON = {
    "405": error("method not allowed"),
    "500": error("internal error"),
    "503": error("the database cannot be reached now"),
}
JOB_ID = {"name": "job_id", "in": "path", "required": True, "schema": {"type": "string"}}
