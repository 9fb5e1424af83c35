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
    JobFilter,
    NewJob,
    QueueState,
    every_attempt,
    stored_result,
)
from jobtable.core.limits import QueueLimit, RateLimit
from jobtable.core.liveness import RunnerInfo, RunnerRecord
from jobtable.core.states import (
    SQL_FAILED_STATE,
    SQL_SCHEDULED_STATE,
    SQL_STATE,
    SQL_TEST,
    STATES,
    State,
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


VERSION = "coalesce((SELECT max(version) FROM job_events WHERE job_id = jobs.id), 0)"
"""A job row's version: its newest change's number (0: never changed)."""

_SHOWN = "CASE status WHEN 'scheduled' THEN 'queued' ELSE status END"
_LISTED = (
    f"SELECT id, kind, {_SHOWN} AS shown, result, error, {VERSION} AS version, "
    f"{SQL_STATE} AS state FROM jobs"
)


_IN_INDEX = {
    status: f"status = '{status}'" + ("" if status == "running" else " AND status <> 'running'")
    for status in ("queued", "scheduled", "running", "succeeded", "failed")
}
"""Each stored status as a list's branch selects it, in the words of the partial index that
holds it (migration 0010): SQLite uses a partial index only for a query that repeats its
predicate, and a literal status, never a parameter."""


def list_statement(
    which: JobFilter,
    *,
    limit: int,
    after: str | None,
    placeholder: Callable[[str], str],
    stamp: Callable[[datetime.datetime], Any] = str,
    columns: str | None = None,
    before: str | None = None,
) -> tuple[str, dict[str, Any]]:
    """A list's statement: one index range per stored status, newest first, merged; with
    ``before``, the ``limit`` jobs just newer than it, oldest first (a previous page).

    Each branch reads at most ``limit`` rows from ``jobs_by_status``,
    ``jobs_by_kind`` or ``jobs_by_queue`` (whichever its filters pin), so a
    page costs the same however deep the table is; running jobs, which those
    indexes leave out, come from ``jobs_running`` in id order (they are few:
    one per busy worker). ``placeholder`` spells a named parameter in the
    engine's style, ``stamp`` a time in its form; ``columns`` (default: a listed job's)
    are what each row gives.
    """
    head = _LISTED if columns is None else f"SELECT {columns} FROM jobs"
    params, common = _common_conditions(which, placeholder, stamp)
    if after is not None:
        params["after"] = after
        common.append(f"id < {placeholder('after')}")
    if before is not None:
        params["before"] = before
        common.append(f"id > {placeholder('before')}")
    params["limit"] = limit
    tail = f" ORDER BY id {'DESC' if before is None else 'ASC'} LIMIT {placeholder('limit')}"
    unfiltered = which.status is None and which.state is None and which.stored is None
    if unfiltered and which.kind is None and which.queue is None:
        where = f" WHERE {' AND '.join(common)}" if common else ""
        return head + where + tail, params
    statuses = which.stored_statuses()
    if not statuses:  # a state no job of that status can be in
        return f"{head} WHERE 1 = 0{tail}", params
    branches = []
    for number, status in enumerate(statuses):
        conditions = [_IN_INDEX[status], *common]
        branch = f"{head} WHERE {' AND '.join(conditions)}{tail}"
        branches.append(f"SELECT * FROM ({branch}) AS branch{number}")
    return " UNION ALL ".join(branches) + tail, params


def count_statement(
    which: JobFilter,
    *,
    placeholder: Callable[[str], str],
    stamp: Callable[[datetime.datetime], Any],
) -> tuple[str, dict[str, Any]]:
    """How many jobs ``which`` matches, one count per stored status (each from its index)
    summed: a statement whose one row is the count."""
    params, common = _common_conditions(which, placeholder, stamp)
    statuses = which.stored_statuses()
    if not statuses:
        return "SELECT 0", params
    counts = [
        f"(SELECT count(*) FROM jobs WHERE {' AND '.join([_IN_INDEX[status], *common])})"
        for status in statuses
    ]
    return "SELECT " + " + ".join(counts), params


def _common_conditions(
    which: JobFilter, placeholder: Callable[[str], str], stamp: Callable[[datetime.datetime], Any]
) -> tuple[dict[str, Any], list[str]]:
    """The conditions every branch of a list or count shares, and their parameters."""
    params: dict[str, Any] = {}
    common: list[str] = []
    for name in ("kind", "queue"):
        value = getattr(which, name)
        if value is not None:
            params[name] = value
            common.append(f"{name} = {placeholder(name)}")
    if which.through is not None:
        params["through"] = which.through
        common.append(f"id <= {placeholder('through')}")
    if which.created_after is not None:
        params["created_after"] = stamp(which.created_after)
        common.append(f"created_at >= {placeholder('created_after')}")
    if which.created_before is not None:
        params["created_before"] = stamp(which.created_before)
        common.append(f"created_at < {placeholder('created_before')}")
    if which.id_part is not None:
        params["id_start"] = which.id_part + "%"
        params["id_end"] = "%" + which.id_part
        common.append(f"(id LIKE {placeholder('id_start')} OR id LIKE {placeholder('id_end')})")
    if which.state is not None and which.state in SQL_TEST:
        common.append(SQL_TEST[which.state])
    return params, common


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


JOB_COUNTS = (
    "SELECT queue, kind, status, count(*), retrying FROM ("
    " SELECT queue, kind, status,"
    f" CASE WHEN status = 'scheduled' AND {SQL_TEST[State.RETRYING]} THEN 1 ELSE 0 END"
    " AS retrying FROM jobs WHERE status IN ('queued', 'scheduled') AND status <> 'running'"
    " UNION ALL SELECT queue, kind, status, 0 FROM jobs WHERE status = 'running'"
    ") AS waiting_or_running GROUP BY queue, kind, status, retrying"
    " ORDER BY queue, kind, status, retrying"
)
"""Jobs waiting or running, by queue, kind, stored status and (for the scheduled) whether
they are retrying: only rows in these states are read (jobs_by_status for the waiting,
jobs_running for the running), however many finished jobs the table keeps."""

QUEUE_STATES = " UNION ALL ".join(
    f"SELECT queue, {told}, count(*) FROM jobs WHERE status = '{stored}' GROUP BY queue, 2"
    for stored, told in (("failed", SQL_FAILED_STATE), ("scheduled", SQL_SCHEDULED_STATE))
)
"""The states a stored status does not tell by itself, by queue: the rows of the scheduled and
failed jobs are told apart (the others' states are their statuses, counted from indexes
alone): the failed ones from ``jobs_failed_by_queue`` alone (migration 0016), the scheduled
ones (few: those due later) from their rows."""


def counts_and_states(counts_by_status: str) -> str:
    """The queues' counts by status (``queues.sql``) and ``QUEUE_STATES`` in one statement,
    each row tagged ``status`` or ``state``: one snapshot, on PostgreSQL too (two statements
    at READ COMMITTED see two moments)."""
    return (
        f"SELECT 'status', counted.* FROM ({counts_by_status}) AS counted "
        f"UNION ALL SELECT 'state', split.* FROM ({QUEUE_STATES}) AS split"
    )


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
