"""What the SQL stores share: the core's values as query parameters, and rows as its values."""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Collection, Mapping
from typing import Any

import attrs

from jobtable.core.idempotency import KeptAnswer, stale_before
from jobtable.core.job_history import JobEvent, JobEvents, events_after
from jobtable.core.jobs import (
    AttemptRecord,
    Job,
    JobDetail,
    NewJob,
    QueueState,
    every_attempt,
    stored_result,
)
from jobtable.core.limits import QueueLimit, RateLimit
from jobtable.core.liveness import RunnerInfo, RunnerRecord
from jobtable.core.states import (
    STATES,
    job_state,
)
from jobtable.core.status import Status


def new_job_parameters(job: NewJob, now: Any, *, stamp: Callable[[Any], Any]) -> dict[str, Any]:
    """A job's row as query parameters; ``stamp`` turns times into the engine's form."""
    policy = job.policy
    stamped = stamp(now)
    return {
        "id": job.id,
        "kind": job.kind,
        "payload": job.payload,
        "now": stamped,
        "max_attempts": policy.max_attempts,
        "retry": policy.to_json(),
        "queue": job.queue,
        "priority": job.priority,
        "run_at": stamped if job.run_at is None else stamp(job.run_at),
        "timeout": job.timeout,
        "unique_key": job.unique_key,
        "unique_while_active": job.unique_while_active,
        "key_until": None if job.key_until is None else stamp(job.key_until),
        "limit_key": job.limit_key,
        "rate_key": job.rate_key,
        "fair_key": job.fair_key,
        "trace_context": job.trace_context,
    }


def attempt_records(
    log: Any, *, parse_time: Callable[[Any], datetime.datetime]
) -> tuple[AttemptRecord, ...]:
    """The stored attempts log (JSON text or a decoded list) as records."""
    if log is None:
        return ()
    entries = json.loads(log) if isinstance(log, str) else log
    return tuple(
        AttemptRecord(
            attempt=entry["attempt"],
            runner_id=entry.get("runner"),
            started_at=None if entry.get("started_at") is None else parse_time(entry["started_at"]),
            ended_at=None if entry.get("ended_at") is None else parse_time(entry["ended_at"]),
            outcome=entry["outcome"],
            error_class=entry.get("error_class"),
        )
        for entry in entries
    )


def job_detail(row: Any, *, parse_time: Callable[[Any], datetime.datetime]) -> JobDetail:
    """A ``job_detail`` query's row as the detail view."""
    (
        job_id, kind, shown, result, error, queue, priority, run_at, attempt, max_attempts,
        created_at, started_at, finished_at, timeout, unique_key, cancel_requested,
        claimed_by, attempts_log, last_code, stored_status, snoozes, error_class, payload,
        version,
    ) = row  # fmt: skip
    job = public_job((job_id, kind, shown, result, error, version))
    started = None if started_at is None else parse_time(started_at)
    finished = None if finished_at is None else parse_time(finished_at)
    return JobDetail(
        job=job,
        queue=queue,
        priority=priority,
        run_at=parse_time(run_at),
        attempt=attempt,
        max_attempts=max_attempts,
        created_at=parse_time(created_at),
        started_at=started,
        finished_at=finished,
        timeout=timeout,
        unique_key=unique_key,
        cancel_requested=bool(cancel_requested),
        claimed_by=claimed_by,
        attempts=every_attempt(
            attempt_records(attempts_log, parse_time=parse_time),
            job=job,
            attempt=attempt,
            runner_id=claimed_by,
            started_at=started,
            finished_at=finished,
            error_class=error_class,
        ),
        last_code=last_code,
        snoozes=snoozes,
        payload=payload,
        state=job_state(stored_status, last_code, error).value,
    )


def listed_job(row: Any) -> Job:
    """A list's row (``public_job``'s and the state) as the job, its state told."""
    return attrs.evolve(public_job(row[:6]), state=row[6])


def public_job(row: Any) -> Job:
    """An ``id, kind, shown status, result, error, version`` row as the public job."""
    job_id, kind, status, result, error, version = row
    return Job(
        id=job_id,
        kind=kind,
        status=Status(status),
        result=stored_result(result),
        error=error,
        version=version,
    )


def job_events(rows: Any, job_id: str, *, after: int | None) -> JobEvents | None:
    """A ``job_events`` query's rows (the job now, then each kept change) as what follows
    ``after``; None for no row (no such job)."""
    if not rows:
        return None
    current = public_job((job_id, *rows[0][:5]))
    kind = current.kind
    kept = tuple(
        JobEvent(version=changed, job=public_job((job_id, kind, status, result, error, changed)))
        for *_, changed, status, result, error in rows
        if changed is not None
    )
    return events_after(current, kept, after=after)


def queue_limits(rows: Any) -> dict[str, QueueLimit]:
    """``limited_queues`` rows (name, running limit, rate n, rate per) as QueueLimits."""
    return {
        name: QueueLimit(
            running=None if running is None else int(running),
            rate=None
            if rate_n is None or rate_per is None
            else RateLimit(n=int(rate_n), per=float(rate_per), keyed=False),
        )
        for name, running, rate_n, rate_per in rows
    }


def queue_states(
    counted: Any,
    paused: Collection[str],
    limits: Mapping[str, QueueLimit] | None = None,
    split: Any = (),
) -> list[QueueState]:
    """Every queue that holds jobs or is paused or limited, by name, with its jobs by public
    status.

    ``counted``: ``queue, stored status, count`` rows; ``paused``: the paused queues' names;
    ``limits``: the limited queues' limits; ``split``: ``QUEUE_STATES``'s rows.
    """
    pauses = frozenset(paused)
    limits = limits or {}
    states: dict[str, QueueState] = {}

    def state(name: str) -> QueueState:
        if name not in states:
            counts = {status.value: 0 for status in Status}
            states[name] = QueueState(
                name=name,
                paused=name in pauses,
                counts=counts,
                limit=limits.get(name, QueueLimit()),
                states=dict.fromkeys(STATES, 0),
            )
        return states[name]

    for name in pauses | limits.keys():
        state(name)
    for name, stored, count in counted:
        shown = Status.QUEUED.value if stored == "scheduled" else stored
        state(name).counts[shown] += int(count)
        if stored not in ("scheduled", "failed"):
            state(name).states[job_state(stored, None, None).value] += int(count)
    for name, told, count in split:
        state(name).states[told] += int(count)
    return [states[name] for name in sorted(states)]


def runner_parameters(info: RunnerInfo) -> dict[str, Any]:
    """A runner's row as query parameters (``started_at`` as given; each store stamps it)."""
    return {
        "id": info.id,
        "host": info.host,
        "pid": info.pid,
        "started_at": info.started_at,
        "kinds": json.dumps(list(info.kinds)),
        "queues": None if info.queues is None else json.dumps(list(info.queues)),
        "workers": info.workers,
        "limits": json.dumps(dict(info.limits)) if info.limits else None,
    }


def runner_record(row: Any, *, parse_time: Callable[[Any], datetime.datetime]) -> RunnerRecord:
    """A ``SELECT id, host, pid, started_at, kinds, queues, workers, busy, last_seen`` row."""
    runner_id, host, pid, started_at, kinds, queues, workers, busy, last_seen = row
    info = RunnerInfo(
        id=runner_id,
        host=host,
        pid=pid,
        started_at=parse_time(started_at),
        kinds=tuple(json.loads(kinds)),
        queues=None if queues is None else tuple(json.loads(queues)),
        workers=workers,
    )
    return RunnerRecord(info=info, busy=busy, last_seen=parse_time(last_seen))


def kept_answer(row: Any, parse_time: Callable[[Any], datetime.datetime]) -> KeptAnswer:
    """A ``request_hash, status, body, created_at`` row of the idempotency table."""
    request_hash, status, body, created_at = row
    return KeptAnswer(
        request_hash=request_hash, status=status, body=body, created_at=parse_time(created_at)
    )


def idempotency_parameters(
    key: str, request_hash: str, now: datetime.datetime, *, stamp: Callable[[Any], Any]
) -> dict[str, Any]:
    """The parameters of taking an idempotency key: which kept keys are stale by now."""
    answered_before, unanswered_before = stale_before(now)
    return {
        "key": key,
        "hash": request_hash,
        "now": stamp(now),
        "answered_before": stamp(answered_before),
        "unanswered_before": stamp(unanswered_before),
    }
