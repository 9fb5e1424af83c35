"""The OpenAPI paths for finding and following jobs: the list, GET with ETag and
long-poll, the event stream, and retry."""

from __future__ import annotations

from typing import Any

from jobtable.core.jobs import MAX_PAGE
from jobtable.core.states import STATES
from jobtable.entrypoints.http.conditional import MAX_WAIT
from jobtable.entrypoints.http.openapi_parts import (
    COMMON,
    JOB_ID,
    UNAUTHENTICATED,
    error,
    json_answer,
    ref,
)
from jobtable.entrypoints.http.openapi_schemas import STATUSES
from jobtable.entrypoints.http.pages import DEFAULT_LIMIT
from jobtable.entrypoints.http.streams import KEEP_ALIVE, RECONNECT_MS


def _query(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "description": description,
            "schema": schema}  # fmt: skip


def _header(name: str, description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "in": "header", "required": False, "description": description,
            "schema": schema or {"type": "string"}}  # fmt: skip


_BUSY = {
    **COMMON,
    "503": error(
        "every stream slot is in use, or the database cannot be reached now; try again "
        "after Retry-After",
        headers={"Retry-After": {"schema": {"type": "string"}}},
    ),
}
_ETAG = {
    "ETag": {
        "description": 'the job\'s version, quoted ("3"): it changes whenever the job does',
        "schema": {"type": "string"},
    }
}
_APPLIED = {
    "Preference-Applied": {
        "description": f"wait=N: the seconds waited at most (the asked wait, at most {MAX_WAIT})",
        "schema": {"type": "string"},
    }
}

_EVENT = {
    "type": "object",
    "required": ["id", "event", "data"],
    "properties": {
        "id": {"type": "string", "pattern": "^[0-9]+$", "description": "the job's version"},
        "event": {"enum": ["job", "reset"]},
        "data": {
            "type": "string",
            "contentMediaType": "application/json",
            "contentSchema": ref("Job"),
        },
    },
}

LIST_JOBS = {
    "summary": "jobs, newest first, by status, kind and queue, a page at a time",
    "parameters": [
        _query("status", "queued includes jobs due later", {"type": "string", "enum": STATUSES}),
        _query("state", "only jobs in this state", {"type": "string", "enum": list(STATES)}),
        _query("kind", "only jobs of this kind", {"type": "string"}),
        _query("queue", "only jobs in this queue", {"type": "string"}),
        _query(
            "limit",
            f"jobs a page (default {DEFAULT_LIMIT}); clamped to 1..{MAX_PAGE}",
            {"type": "integer"},
        ),
        _query("cursor", "the previous page's next_cursor, as given", {"type": "string"}),
    ],
    "responses": {
        "200": json_answer(
            "a page of jobs",
            {
                "type": "object",
                "required": ["jobs", "next_cursor"],
                "additionalProperties": False,
                "properties": {
                    "jobs": {"type": "array", "items": ref("ListedJob")},
                    "next_cursor": {
                        "type": ["string", "null"],
                        "description": "opaque: pass it as cursor for the next page; null on "
                        "the last",
                    },
                },
            },
        ),
        "400": error("invalid_option: a parameter that cannot be read, named"),
        "401": UNAUTHENTICATED,
        **COMMON,
    },
}

GET_JOB = {
    "summary": "a job: its status, latest result and failure code; with If-None-Match and "
    "Prefer: wait=N, as soon as it changes",
    "parameters": [
        JOB_ID,
        _header("If-None-Match", "the ETag last seen: 304 while the job is still at it"),
        _header(
            "Prefer",
            f"wait=N (RFC 7240) with If-None-Match: wait up to N seconds (at most {MAX_WAIT}) "
            "for the job to change before answering 304",
        ),
    ],
    "responses": {
        "200": json_answer("the job", ref("Job"), headers={**_ETAG, **_APPLIED}),
        "304": {
            "description": "unchanged: still at the ETag given (after the wait, if one was asked)",
            "headers": {**_ETAG, **_APPLIED},
        },
        "401": UNAUTHENTICATED,
        "404": error("no such job"),
        **_BUSY,
    },
}

EVENTS_PATH = {
    "get": {
        "summary": "a job's changes as Server-Sent Events, in order, until it finishes",
        "description": f"Starts with `retry: {RECONNECT_MS}`; then one event a change: `id:` "
        "the job's version (increasing), `event:` job (a change: its status, a partial "
        "result, its end) or reset (the history after Last-Event-ID is no longer kept, or "
        "the id was never this job's: this is the job now), `data:` the job's five keys as "
        "one line of JSON. A comment every "
        f"{KEEP_ALIVE:.0f} s while quiet. Ends after succeeded or failed, or when the server "
        "stops (reconnect with Last-Event-ID).",
        "parameters": [
            JOB_ID,
            _header(
                "Last-Event-ID",
                "the id of the last event received: the stream goes on after it",
                {"type": "string", "pattern": "^[0-9]{1,18}$"},
            ),
            _query(
                "last_event_id",
                "as Last-Event-ID, for clients that cannot set headers (the header wins)",
                {"type": "string", "pattern": "^[0-9]{1,18}$"},
            ),
        ],
        "responses": {
            "200": {
                "description": "the event stream; the schema is of one event (OpenAPI 3.1 "
                "reading of a sequential media type)",
                "content": {"text/event-stream": {"schema": _EVENT}},
            },
            "204": {"description": "Last-Event-ID is the job's final state: nothing will follow"},
            "400": error("invalid_option: Last-Event-ID is not an event id"),
            "401": UNAUTHENTICATED,
            "404": error("no such job"),
            **_BUSY,
        },
    }
}

RETRY_JOB = {
    "summary": "queue a failed job again (any code), with one more attempt allowed",
    "parameters": [JOB_ID],
    "responses": {
        "200": json_answer("queued again; its earlier attempts stay in its detail", ref("Job")),
        "401": UNAUTHENTICATED,
        "404": error("no such job"),
        "409": error("conflict: it has not failed"),
        **COMMON,
    },
}
