"""The JSON Schemas of the OpenAPI document's bodies: requests, jobs, details, queues, runners."""

from __future__ import annotations

from typing import Any

from jobtable.core.enqueue_options import MAX_UNIQUE_KEY, QUEUE_NAME
from jobtable.core.limits import MAX_RATE_WINDOW
from jobtable.core.states import STATES
from jobtable.entrypoints.http.job_requests import MAX_BATCH
from jobtable.entrypoints.job_options import MAX_SECONDS

ERROR_CODES = [
    "invalid_request", "unknown_kind", "invalid_payload", "invalid_option", "unauthenticated",
    "not_found", "method_not_allowed", "conflict", "payload_too_large", "unsupported_media_type",
    "internal", "unavailable", "idempotency_key_reused",
]  # fmt: skip

STATUSES = ["queued", "running", "succeeded", "failed"]
TIME = {"type": "string", "format": "date-time", "description": "RFC 3339, in UTC"}
OPTIONAL_TIME = {"type": ["string", "null"], "format": "date-time"}
PLAIN_TEXT_PATTERN = "^[^\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029]*$"
"""``core.text.plain`` as a JSON Schema can say it (lone surrogates aside)."""


def _object(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "required": list(properties),
        "additionalProperties": False,
        "properties": properties,
        **extra,
    }


ERROR = _object(
    {
        "error": _object(
            {"code": {"type": "string", "enum": ERROR_CODES}, "message": {"type": "string"}}
        )
    }
)

JOB_PROPERTIES = {
    "id": {"type": "string"},
    "kind": {"type": "string"},
    "status": {"type": "string", "enum": STATUSES},
    "result": {"description": "the latest partial or final result; null until one"},
    "error": {"type": ["string", "null"], "description": "a failure code, only when failed"},
}
JOB = _object(JOB_PROPERTIES)
STATE = {
    "type": "string",
    "enum": list(STATES),
    "description": "scheduled (due later), retrying (due later after a failed attempt), "
    "available (due), running, succeeded, failed, cancelled or timed_out",
}
LISTED_JOB = _object({**JOB_PROPERTIES, "state": STATE})

JOB_REQUEST = {
    "type": "object",
    "required": ["kind", "payload"],
    "additionalProperties": False,
    "description": "Options left out (or null) keep the kind's defaults.",
    "properties": {
        "kind": {"type": "string", "minLength": 1},
        "payload": {"type": "object"},
        "queue": {
            "type": ["string", "null"],
            "pattern": f"^{QUEUE_NAME.pattern}$",
            "description": "the queue it waits in (default: the kind's, else default)",
        },
        "priority": {
            "type": ["integer", "null"],
            "minimum": 0,
            "maximum": 9,
            "description": "0 runs first, 9 last",
        },
        "run_at": {
            "type": ["string", "null"],
            "format": "date-time",
            "description": "RFC 3339 with an offset (Z or +hh:mm); not with delay",
        },
        "delay": {
            "type": ["number", "null"],
            "minimum": 0,
            "maximum": MAX_SECONDS,
            "description": "seconds from now; not with run_at",
        },
        "timeout": {
            "type": ["number", "null"],
            "exclusiveMinimum": 0,
            "maximum": MAX_SECONDS,
            "description": "seconds an attempt may run before its handler is told to stop",
        },
        "unique_key": {
            "type": ["string", "null"],
            "minLength": 1,
            "maxLength": MAX_UNIQUE_KEY,
            "pattern": PLAIN_TEXT_PATTERN,
            "description": "at most one job of the kind holds it while queued or running; "
            "no control characters",
        },
    },
}

BATCH_REQUEST = _object(
    {
        "jobs": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_BATCH,
            "items": {"$ref": "#/components/schemas/JobRequest"},
        }
    }
)

ATTEMPT = _object(
    {
        "attempt": {"type": "integer"},
        "runner": {"type": ["string", "null"], "description": "the runner that claimed it"},
        "started_at": OPTIONAL_TIME,
        "ended_at": OPTIONAL_TIME,
        "outcome": {
            "type": "string",
            "description": "succeeded, a failure code, snoozed, or given back (never ran)",
        },
        "error_class": {
            "type": ["string", "null"],
            "description": "the class path of the exception it raised (builtins.ValueError), "
            "never its message; null when it raised none",
        },
        "seconds": {
            "type": ["number", "null"],
            "minimum": 0,
            "description": "how long it ran; null while it runs",
        },
    }
)

JOB_DETAIL = _object(
    {
        **JOB_PROPERTIES,
        "state": STATE,
        "payload": {
            "description": "the job's payload, its kind's redact= fields as \"***\"; null under "
            "--hide-payloads or when its kind is not registered in the serving process"
        },
        "queue": {"type": "string"},
        "priority": {"type": "integer", "minimum": 0, "maximum": 9},
        "run_at": {**TIME, "description": "when it is (or was) due"},
        "attempt": {"type": "integer", "description": "attempts started so far"},
        "max_attempts": {"type": "integer"},
        "snoozes": {
            "type": "integer",
            "minimum": 0,
            "description": "times it snoozed (each gave its attempt back)",
        },
        "created_at": TIME,
        "started_at": OPTIONAL_TIME,
        "finished_at": OPTIONAL_TIME,
        "timeout": {"type": ["number", "null"], "description": "seconds; null: no limit"},
        "waited": {
            "type": ["number", "null"],
            "minimum": 0,
            "description": "seconds its latest attempt waited from due (run_at) to start; null "
            "when it has not started since it was last due",
        },
        "attempts": {
            "type": "array",
            "items": {"$ref": "#/components/schemas/Attempt"},
            "description": "its latest attempts, oldest first (at most 20 earlier ones are kept)",
        },
        "waiting": {
            "type": "array",
            "items": {"type": "string"},
            "description": "why it is not running, in sentences; empty once running or finished",
        },
    }
)

QUEUE_RATE = {
    "type": ["object", "null"],
    "required": ["n", "per"],
    "additionalProperties": False,
    "properties": {
        "n": {"type": "integer", "minimum": 1},
        "per": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_RATE_WINDOW},
    },
    "description": "at most n of its jobs started in any per seconds, across every runner",
}
QUEUE_RUNNING_LIMIT = {
    "type": ["integer", "null"],
    "minimum": 1,
    "description": "at most this many of its jobs running at once, across every runner",
}

QUEUE = _object(
    {
        "name": {"type": "string"},
        "paused": {"type": "boolean"},
        "counts": _object(
            {status: {"type": "integer", "minimum": 0} for status in STATUSES},
            description="jobs by status (queued includes those due later)",
        ),
        "states": _object(
            {state: {"type": "integer", "minimum": 0} for state in STATES},
            description="jobs by state",
        ),
        "limit": QUEUE_RUNNING_LIMIT,
        "rate": QUEUE_RATE,
        "running": {"type": "integer", "minimum": 0, "description": "its jobs running now"},
        "held_back": {
            "type": "integer",
            "minimum": 0,
            "description": "its due jobs a limit or a rate holds back now (its own, or their "
            "kinds')",
        },
    }
)

QUEUE_LIMITS = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"limit": QUEUE_RUNNING_LIMIT, "rate": QUEUE_RATE},
    "description": "a key left out keeps its value; null removes it",
}

RUNNER = _object(
    {
        "id": {"type": "string"},
        "host": {"type": "string"},
        "pid": {"type": "integer"},
        "started_at": TIME,
        "kinds": {"type": "array", "items": {"type": "string"}},
        "queues": {
            "type": ["array", "null"],
            "items": {"type": "string"},
            "description": "the queues it claims from; null: every queue",
        },
        "workers": {"type": "integer"},
        "busy": {"type": "integer", "description": "workers running a job at its last beat"},
        "last_seen": {
            **TIME,
            "description": "its own clock at its last beat; on SQLite, when this read saw its lock held",
        },
    }
)

SCHEDULE = _object(
    {
        "name": {"type": "string"},
        "kind": {"type": "string"},
        "expression": {
            "type": "string",
            "description": "a five-field cron expression, or `every Ns`",
        },
        "timezone": {"type": "string", "description": "the zone a cron expression is read in"},
        "queue": {"type": "string", "description": "the queue its jobs go to"},
        "queue_paused": {"type": "boolean"},
        "next_run": {
            **OPTIONAL_TIME,
            "description": "its next tick; null when its expression cannot be read",
        },
        "last_tick": {
            **OPTIONAL_TIME,
            "description": "the latest tick whose job is still kept (null: none yet, or pruned)",
        },
    }
)

BULK_FILTER = {
    "type": "object",
    "additionalProperties": False,
    "description": "Which jobs: each field left out (or null) means any.",
    "properties": {
        "state": {"anyOf": [{"$ref": "#/components/schemas/State"}, {"type": "null"}]},
        "kind": {"type": ["string", "null"], "minLength": 1, "pattern": PLAIN_TEXT_PATTERN},
        "queue": {"type": ["string", "null"], "pattern": f"^{QUEUE_NAME.pattern}$"},
        "created_after": {
            **OPTIONAL_TIME,
            "description": "created at or after this time (RFC 3339 with an offset)",
        },
        "created_before": {
            **OPTIONAL_TIME,
            "description": "created before this time (RFC 3339 with an offset)",
        },
    },
}
BULK_REQUEST = {
    "type": "object",
    "required": ["filter"],
    "additionalProperties": False,
    "properties": {
        "filter": {"$ref": "#/components/schemas/BulkFilter"},
        "dry_run": {
            "type": "boolean",
            "description": "count the jobs it would act on, change none (default false)",
        },
    },
}
BULK_RESULT = _object(
    {
        "matched": {
            "type": "integer",
            "minimum": 0,
            "description": "jobs the filter matched that the action applies to",
        },
        "changed": {
            "type": "integer",
            "minimum": 0,
            "description": "of those, the ones it changed (a running job asked to stop "
            "counts); 0 on a dry run",
        },
    }
)

SCHEMAS = {
    "Error": ERROR,
    "Job": JOB,
    "ListedJob": LISTED_JOB,
    "JobRequest": JOB_REQUEST,
    "BatchRequest": BATCH_REQUEST,
    "JobDetail": JOB_DETAIL,
    "Attempt": ATTEMPT,
    "Queue": QUEUE,
    "QueueLimits": QUEUE_LIMITS,
    "Runner": RUNNER,
    "Schedule": SCHEDULE,
    "State": STATE,
    "BulkFilter": BULK_FILTER,
    "BulkRequest": BULK_REQUEST,
    "BulkResult": BULK_RESULT,
}
