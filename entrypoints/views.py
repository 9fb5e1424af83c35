"""The JSON shapes of a job's detail, a queue and a runner: one definition for HTTP and the CLI.

``jobtable get --detail`` prints exactly what ``GET /api/v1/jobs/{id}/detail``
serves, and ``jobtable queues`` and ``runners`` print the items the API
lists, so a script can move from one to the other unchanged. Only what is
named here is shown: a job's unique key, its payload and its claim fence
stay in the store.
"""

from __future__ import annotations

from typing import Any

from jobtable.core import RunnerRecord, Status
from jobtable.core.jobs import AttemptRecord, Job, JobDetail, QueueState
from jobtable.core.schedules import StoredSchedule
from jobtable.core.states import STATES
from jobtable.entrypoints.times import format_time


def job_detail(detail: JobDetail, payload: Any = None) -> dict[str, Any]:
    """The five public keys of the job, then its lifecycle, then why it waits (if it does).

    ``payload``: the payload as it may be shown (``core.redaction.shown_payload``), or None.
    """
    return {
        **detail.job.to_public(),
        "state": detail.state,
        "payload": payload,
        "queue": detail.queue,
        "priority": detail.priority,
        "run_at": format_time(detail.run_at),
        "attempt": detail.attempt,
        "max_attempts": detail.max_attempts,
        "snoozes": detail.snoozes,
        "created_at": format_time(detail.created_at),
        "started_at": format_time(detail.started_at),
        "finished_at": format_time(detail.finished_at),
        "timeout": None if detail.timeout is None else float(detail.timeout),
        "waited": waited(detail),
        "attempts": [_attempt(record) for record in detail.attempts],
        "waiting": list(detail.waiting),
    }


def _attempt(record: AttemptRecord) -> dict[str, Any]:
    return {
        "attempt": record.attempt,
        "runner": record.runner_id,
        "started_at": format_time(record.started_at),
        "ended_at": format_time(record.ended_at),
        "outcome": record.outcome,
        "error_class": record.error_class,
        "seconds": attempt_seconds(record),
    }


def attempt_seconds(record: AttemptRecord) -> float | None:
    """How long an attempt ran; None while it runs (or when it never started)."""
    if record.started_at is None or record.ended_at is None:
        return None
    return max(0.0, (record.ended_at - record.started_at).total_seconds())


def waited(detail: JobDetail) -> float | None:
    """Seconds its latest attempt waited from when it was due to when it started; None when
    it has not started since it was last due (queued, scheduled or retrying)."""
    if detail.started_at is None or detail.started_at < detail.run_at:
        return None
    return (detail.started_at - detail.run_at).total_seconds()


def queue(state: QueueState) -> dict[str, Any]:
    """A queue as the API shows it: its counts, its limits as PATCH takes them, and their use."""
    rate = state.limit.rate
    return {
        "name": state.name,
        "paused": state.paused,
        "counts": dict(state.counts),
        "states": dict(state.states),
        "limit": state.limit.running,
        "rate": None if rate is None else {"n": rate.n, "per": rate.per},
        "running": state.counts.get(Status.RUNNING.value, 0),
        "held_back": state.held_back,
    }


def queue_limit_text(state: QueueState) -> str:
    """A queue's limits in a few words ("" when it has none): ``2 running, 10/60s``."""
    parts = []
    if state.limit.running is not None:
        parts.append(f"{state.limit.running} running")
    if state.limit.rate is not None:
        parts.append(f"{state.limit.rate.n}/{state.limit.rate.per:g}s")
    return ", ".join(parts)


def queue_named(states: list[QueueState], name: str, *, paused: bool) -> QueueState:
    """The queue ``name`` among ``states``; one not listed (it holds no jobs) as empty."""
    for state in states:
        if state.name == name:
            return state
    return QueueState(
        name=name,
        paused=paused,
        counts={status.value: 0 for status in Status},
        states=dict.fromkeys(STATES, 0),
    )


def cancel_refusal(status: str, error: str | None) -> str:
    """Why a finished job cannot be cancelled, naming its status (and code: both are public)."""
    ended = status if error is None else f"{status} with {error}"
    return f"the job already {ended}; only a queued or running job can be cancelled"


def retry_refusal(status: str) -> str:
    """Why a job cannot be retried, naming its status."""
    return f"only a failed job can be retried; this one is {status}"


KEY_HELD_REFUSAL = "another job holds this job's unique key now; retry it once that job has ended"
"""Why a failed job cannot be retried while another holds its unique key."""


def listed(job: Job) -> dict[str, Any]:
    """A job as a list shows it: GET's five keys and its state."""
    return {**job.to_public(), "state": job.state}


def schedule(stored: StoredSchedule) -> dict[str, Any]:
    """A schedule as ``GET /api/v1/schedules`` lists it."""
    return {
        "name": stored.name,
        "kind": stored.kind,
        "expression": stored.expression,
        "timezone": stored.timezone,
        "queue": stored.queue,
        "queue_paused": stored.queue_paused,
        "next_run": format_time(stored.next_run),
        "last_tick": format_time(stored.last_tick),
    }


def runner(record: RunnerRecord) -> dict[str, Any]:
    info = record.info
    return {
        "id": info.id,
        "host": info.host,
        "pid": info.pid,
        "started_at": format_time(info.started_at),
        "kinds": list(info.kinds),
        "queues": None if info.queues is None else list(info.queues),
        "workers": info.workers,
        "busy": record.busy,
        "last_seen": format_time(record.last_seen),
    }
