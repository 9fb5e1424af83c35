"""An example of every body the HTTP API takes or answers with, for the OpenAPI document.

``with_examples`` puts each on its component schema (JSON Schema's ``examples``), so a
generated client's docs and the reference page show a real request and answer beside
every operation. tests/http/test_openapi_examples.py checks each against its schema.
"""

from __future__ import annotations

import copy
import datetime
import json
from typing import Any

from jobtable.entrypoints.http.pages import encode_cursor
from jobtable.entrypoints.http.streams import RECONNECT_MS
from jobtable.entrypoints.times import format_time

_ID = "0193a4f2-6c1e-7d4b-9a2f-3b8c5e7d1f20"
_OTHER_ID = "0193a4f2-6c1f-7a10-8e55-0c4d2b9e6a31"
_RUNNER_ID = "0193a4f1-0b2c-7e3d-b4a5-6c7d8e9f0a1b"


def _at(hour: int, minute: int, second: int = 0, microsecond: int = 0) -> str | None:
    """A time as the API writes one (RFC 3339, UTC), on the examples' day."""
    moment = datetime.datetime(2026, 12, 6, hour, minute, second, microsecond, datetime.UTC)
    return format_time(moment)


_ATTEMPT = {
    "attempt": 1,
    "runner": _RUNNER_ID,
    "started_at": _at(9, 30, 0, 104000),
    "ended_at": _at(9, 30, 0, 113000),
    "outcome": "internal_error",
    "error_class": "builtins.ValueError",
    "seconds": 0.009,
}
_JOB = {"id": _ID, "kind": "countdown", "status": "running", "result": {"remaining": 2}}

EXAMPLES: dict[str, Any] = {
    "JobRequest": {
        "kind": "countdown",
        "payload": {"seconds": 5},
        "queue": "reports",
        "priority": 2,
        "delay": 60,
        "unique_key": "report-7",
    },
    "BatchRequest": {
        "jobs": [
            {"kind": "countdown", "payload": {"seconds": 1}},
            {"kind": "countdown", "payload": {"seconds": 2}, "priority": 9},
        ]
    },
    "EnqueuedJob": {"id": _ID},
    "DuplicateJob": {"id": _ID, "duplicate": True},
    "EnqueuedJobs": {"ids": [_ID, _OTHER_ID]},
    "Job": {**_JOB, "error": None},
    "ListedJob": {**_JOB, "error": None, "state": "running"},
    "JobList": {
        "jobs": [
            {**_JOB, "error": None, "state": "running"},
            {
                "id": _OTHER_ID,
                "kind": "countdown",
                "status": "failed",
                "result": None,
                "error": "negative_seconds",
                "state": "failed",
            },
        ],
        "next_cursor": encode_cursor(_OTHER_ID),
    },
    "Attempt": _ATTEMPT,
    "JobDetail": {
        **_JOB,
        "error": None,
        "state": "running",
        "payload": {"seconds": 5},
        "queue": "reports",
        "priority": 2,
        "run_at": _at(9, 30),
        "attempt": 2,
        "max_attempts": 3,
        "snoozes": 0,
        "created_at": _at(9, 29),
        "started_at": _at(9, 30, 2, 250000),
        "finished_at": None,
        "timeout": 300.0,
        "waited": 0.004,
        "attempts": [
            _ATTEMPT,
            {
                "attempt": 2,
                "runner": _RUNNER_ID,
                "started_at": _at(9, 30, 2, 250000),
                "ended_at": None,
                "outcome": "running",
                "error_class": None,
                "seconds": None,
            },
        ],
        "waiting": [],
    },
    "BulkFilter": {"state": "failed", "kind": "countdown", "queue": "reports"},
    "BulkRequest": {"filter": {"kind": "countdown", "queue": "reports"}, "dry_run": True},
    "BulkResult": {"matched": 523, "changed": 523},
    "State": "available",
    "QueueLimits": {"limit": 2, "rate": {"n": 10, "per": 60}},
    "Queue": {
        "name": "reports",
        "paused": False,
        "counts": {"queued": 12, "running": 2, "succeeded": 480, "failed": 3},
        "states": {
            "scheduled": 4,
            "available": 7,
            "retrying": 1,
            "running": 2,
            "succeeded": 480,
            "failed": 2,
            "cancelled": 1,
            "timed_out": 0,
        },
        "limit": 2,
        "rate": {"n": 10, "per": 60.0},
        "running": 2,
        "held_back": 5,
    },
    "Runner": {
        "id": _RUNNER_ID,
        "host": "web-1",
        "pid": 4242,
        "started_at": _at(8, 0),
        "kinds": ["countdown", "noop"],
        "queues": None,
        "workers": 2,
        "busy": 1,
        "last_seen": _at(9, 30, 1),
    },
    "Schedule": {
        "name": "nightly-report",
        "kind": "countdown",
        "expression": "0 3 * * *",
        "timezone": "Europe/Paris",
        "queue": "reports",
        "queue_paused": False,
        "next_run": format_time(datetime.datetime(2026, 12, 7, 2, 0, tzinfo=datetime.UTC)),
        "last_tick": _at(2, 0),
    },
    "Health": {"status": "ok", "version": "0.1.0"},
    "Error": {"error": {"code": "not_found", "message": "job not found"}},
}
"""Component schema name: an example of it. Lists hold the example of their items."""

_EVENTS = f"retry: {RECONNECT_MS}\n\n" + "".join(
    f"id: {version}\nevent: job\ndata: {json.dumps(job, separators=(',', ':'))}\n\n"
    for version, job in enumerate(
        [
            {**_JOB, "status": "queued", "result": None, "error": None},
            {**_JOB, "result": None, "error": None},
            {**_JOB, "error": None},
            {
                **_JOB,
                "status": "succeeded",
                "result": {"remaining": 0, "counted": 5},
                "error": None,
            },
        ]
    )
)
"""A whole event stream, from queued to the end."""

EXAMPLES["QueueList"] = {"queues": [EXAMPLES["Queue"]]}
EXAMPLES["RunnerList"] = {"runners": [EXAMPLES["Runner"]]}
EXAMPLES["ScheduleList"] = {"schedules": [EXAMPLES["Schedule"]]}


def with_examples(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with each component schema that has an example showing it."""
    shown = copy.deepcopy(document)
    for name, schema in shown["components"]["schemas"].items():
        if name in EXAMPLES:
            schema["examples"] = [EXAMPLES[name]]
    for item in shown["paths"].values():
        for operation in item.values():
            for answer in operation.get("responses", {}).values():
                stream = (answer.get("content") or {}).get("text/event-stream")
                if stream is not None:
                    stream["example"] = _EVENTS
    return shown
