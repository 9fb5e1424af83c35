"""Value objects for jobs, as stored and as shown."""

from __future__ import annotations

import datetime
import enum
import json
from typing import Any

import attrs

from jobtable.core.limits import QueueLimit
from jobtable.core.policies import RetryPolicy
from jobtable.core.states import STORED_STATUS, State
from jobtable.core.status import Status

DEFAULT_QUEUE = "default"
PRIORITIES = range(10)
"""0 runs first, 9 last."""

MAX_PAGE = 500
"""The most jobs one page of a list holds."""

EVENTS_KEPT = 1000
"""How many of its latest changes each job's history keeps (the stores' triggers agree)."""

ATTEMPTS_KEPT = 20
"""How many of its latest ended attempts a job's log keeps (the stores' queries agree), so a
job that snoozes or retries for ever stays the same size."""


@attrs.frozen(kw_only=True)
class Job:
    """A job as shown to anyone: exactly what GET /api/v1/jobs/{id} serves.

    ``result`` is the latest partial or final result as its decoded JSON
    value (a dict, list, str, number, bool, or None until one is published);
    ``error`` is a failure code, set only on a failed job.
    """

    id: str
    kind: str
    status: Status
    result: Any = attrs.field(hash=False)
    """Left out of the hash (a dict has none), kept in equality."""
    error: str | None
    version: int = attrs.field(default=0, eq=False)
    """How many visible changes the job has had (0: as created). Its HTTP ETag; not
    part of equality, so two reads of one state compare equal whatever carried them."""
    state: str | None = attrs.field(default=None, eq=False)
    """Its operator's state (core/states.py) where the read tells it (lists, the detail);
    never one of GET's five keys."""

    def to_public(self) -> dict[str, Any]:
        """The job as a JSON object with exactly the keys id, kind, status, result, error."""
        return {
            "id": self.id,
            "kind": self.kind,
            "status": self.status.value,
            "result": self.result,
            "error": self.error,
        }


def stored_result(text: str | None) -> Any:
    """A stored result's JSON text as the value a Job holds; None for none, or for text that
    is not JSON (a row written by hand): a read never fails on it."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return None


@attrs.frozen(kw_only=True)
class NewJob:
    """A job about to be stored queued; ``payload`` is JSON text."""

    id: str
    kind: str
    payload: str
    max_attempts: int = 1
    """How many times it may be claimed: stored with it, so any runner can settle it."""
    retry: RetryPolicy | None = None
    """Which codes retry and how long between; stored with it (None: the defaults)."""
    queue: str = DEFAULT_QUEUE
    priority: int = 0
    run_at: datetime.datetime | None = None
    """When it is due; None: at once (its creation time, so oldest-first order holds)."""
    timeout: float | None = None
    """Seconds an attempt may run before its handler is told to stop (None: no limit)."""
    unique_key: str | None = None
    """With its kind, at most one job holds this key (see ``unique_while_active``)."""
    unique_while_active: bool = True
    """True: the key is let go when the job finishes; False: it is kept for good (a key
    that already names its period, such as a cron tick's)."""
    key_until: datetime.datetime | None = None
    """For a key kept past the job's end: when no enqueue can make it again (its period's
    end, the schedule's next tick). Retention keeps the row, and so the key, until then."""
    limit_key: str | None = None
    """The value its kind's keyed limit counts it under (core/limits.py)."""
    rate_key: str | None = None
    """The value its kind's keyed rate counts its starts under."""
    fair_key: str | None = None
    """The value its kind's jobs take turns by (core/limits.py)."""
    trace_context: str | None = None
    """The W3C ``traceparent`` and ``tracestate`` of its enqueue's ``send`` span as JSON
    (core/tracing.py), stored in a column of its own, never in its payload."""

    @property
    def policy(self) -> RetryPolicy:
        return self.retry or RetryPolicy(max_attempts=self.max_attempts)


class Enqueued(str):
    """The id of the job an enqueue stored, or of the one already holding its unique key.

    A ``str``, so code that treats ``enqueue``'s answer as the id keeps
    working; ``duplicate`` tells the two apart.
    """

    duplicate: bool

    def __new__(cls, job_id: str, *, duplicate: bool = False) -> Enqueued:
        made = super().__new__(cls, job_id)
        made.duplicate = duplicate
        return made


@attrs.frozen(kw_only=True)
class Claim:
    """Who holds a running job. Every write about the job is fenced by all three fields."""

    job_id: str
    runner_id: str
    attempt: int


@attrs.frozen(kw_only=True)
class ClaimedJob:
    """A job a runner has just marked running, with what it needs to run and settle it."""

    claim: Claim
    kind: str
    payload: str
    policy: RetryPolicy = attrs.Factory(RetryPolicy)
    """The retry policy stored on the job (its registration may have changed since)."""
    timeout: float | None = None
    checkpoint: str | None = None
    """The JSON text of the last partial result an earlier attempt published, if any."""
    due_at: datetime.datetime | None = None
    """When the job fell due (its run_at): the claim's time less this is its queue wait."""
    queue: str = DEFAULT_QUEUE
    """The queue it was claimed from: its outcome frees a slot there when the queue is limited."""
    trace_context: str | None = attrs.field(default=None, repr=False)
    """Its enqueue's trace context (``NewJob.trace_context``), if one was stored."""

    @property
    def id(self) -> str:
        return self.claim.job_id


@attrs.frozen(kw_only=True)
class HeldJob:
    """A job running under a runner's claim, with what settling it needs."""

    claim: Claim
    """For a row that records no owner, ``runner_id`` is empty."""
    kind: str
    policy: RetryPolicy | None
    """The retry policy stored on it; None when its row's cannot be read (it fails)."""
    unreadable: str | None = None
    """The column of its row that cannot be read, if any: told once it is settled."""
    started: object = attrs.field(default=None, eq=False)
    """Its ``started_at`` as the store keeps it (not part of its equality): a put-back of a lost claim is fenced on it
    too, so it never moves a later run of the job under an equal claim."""


@attrs.frozen(kw_only=True)
class Recovered:
    """What a sweep for orphaned jobs did: how many it failed and how many it queued again."""

    failed: int = 0
    requeued: int = 0


@attrs.frozen(kw_only=True)
class AttemptRecord:
    """One attempt of a job, as its detail lists it."""

    attempt: int
    runner_id: str | None
    started_at: datetime.datetime | None
    ended_at: datetime.datetime | None
    outcome: str
    """``succeeded``, a failure code, ``snoozed``, or ``given back`` (never ran)."""
    error_class: str | None = None
    """The class path of the exception it raised (``builtins.ValueError``), never its
    message; None when it raised none (a declared failure code, a timeout, a cancel)."""


@attrs.frozen(kw_only=True)
class JobDetail:
    """Everything about a job that may be shown: its public view (as ``get`` gives it, with
    its version), its lifecycle, its attempts, and why it waits."""

    job: Job
    queue: str
    priority: int
    run_at: datetime.datetime
    attempt: int
    max_attempts: int
    created_at: datetime.datetime
    started_at: datetime.datetime | None
    finished_at: datetime.datetime | None
    timeout: float | None
    unique_key: str | None
    cancel_requested: bool
    claimed_by: str | None
    attempts: tuple[AttemptRecord, ...]
    last_code: str | None
    """The code the latest attempt ended with (for a retrying job, why it waits)."""
    snoozes: int = 0
    """How many times it snoozed (each gave its attempt back; ``attempts`` keeps the last
    ATTEMPTS_KEPT of any kind)."""
    waiting: tuple[str, ...] = ()
    """Why it is not running, in plain sentences (empty for a running or finished job).
    Worked out by the core (``core/waiting.py``); a store leaves it empty."""
    state: str | None = None
    """Its operator's state (core/states.py): what it waits for, or how it ended."""
    payload: str | None = attrs.field(default=None, repr=False)
    """Its payload as stored (JSON text), for code that enqueued it (Django's
    ``get_result`` gives a task's arguments back); the HTTP API and the dashboard do not
    show it."""


class CancelOutcome(enum.Enum):
    """What ``cancel`` did."""

    CANCELLED = "cancelled"
    """It was queued (or already cancelled): it is failed ``cancelled`` now."""
    REQUESTED = "requested"
    """It is running: its runner was asked to stop it."""
    REFUSED = "refused"
    """It had finished otherwise: nothing changed."""


@attrs.frozen(kw_only=True)
class QueueState:
    """A queue as ``GET /api/v1/queues`` shows it."""

    name: str
    paused: bool
    counts: dict[str, int]
    """Jobs by public status (queued counts scheduled ones too)."""
    limit: QueueLimit = attrs.field(factory=QueueLimit)
    """Limits an operator set on it at run time (none: ``QueueLimit()``)."""
    held_back: int = 0
    """Its due jobs a limit or a rate holds back now (its own, or their kinds')."""
    states: dict[str, int] = attrs.field(factory=dict)
    """Jobs by state (core/states.py), every state named."""


@attrs.frozen(kw_only=True)
class JobPage:
    """One page of a list of jobs, newest first; ``next_after`` leads to the next (None: last)."""

    jobs: tuple[Job, ...]
    next_after: str | None
    newer_before: str | None = None
    """Where the page of newer jobs ends (its ``before``); None on the newest page."""


@attrs.frozen(kw_only=True)
class JobFilter:
    """Which jobs a list shows: each field None means any. ``status`` is a public status."""

    status: Status | None = None
    kind: str | None = None
    queue: str | None = None
    state: State | None = None
    """An operator's state (core/states.py); with ``status`` too, a job must match both."""
    created_after: datetime.datetime | None = None
    """Created at or after this moment."""
    created_before: datetime.datetime | None = None
    """Created before this moment."""
    through: str | None = None
    """No job newer than this id (a bulk action's newest job when it began)."""
    id_part: str | None = None
    """Only jobs whose id starts or ends with this (lower-case hex and dashes): a search."""
    stored: tuple[str, ...] | None = None
    """Only jobs stored in these statuses, whatever their state (a bulk action's reach)."""

    def stored_statuses(self) -> tuple[str, ...]:
        """The stored statuses the public one covers (queued covers scheduled too), narrowed
        to the state's."""
        if self.stored is not None:
            return self.stored
        if self.state is not None:
            stored = STORED_STATUS[self.state]
            wanted = self.status is None or stored in _STORED_FOR[self.status]
            return (stored,) if wanted else ()
        if self.status is None:
            return (*(status.value for status in Status), "scheduled")
        if self.status is Status.QUEUED:
            return ("queued", "scheduled")
        return (self.status.value,)


_STORED_FOR = {
    status: ("queued", "scheduled") if status is Status.QUEUED else (status.value,)
    for status in Status
}


class RetryOutcome(enum.Enum):
    """What an operator's ``retry`` did."""

    RETRIED = "retried"
    """It had failed: it is queued again, with one more attempt allowed."""
    REFUSED = "refused"
    """It has not failed (queued, running or succeeded): nothing changed."""
    KEY_HELD = "key_held"
    """It failed, but another job holds its unique key now: nothing changed."""


@attrs.frozen(kw_only=True)
class JobCount:
    """How many jobs of one kind in one queue are in one stored state (for metrics)."""

    queue: str
    kind: str
    status: str
    """``queued`` (due), ``scheduled`` (due later) or ``running``."""
    count: int
    state: str = ""
    """Its state (core/states.py): available, scheduled, retrying or running; a stored
    status's jobs may come in two counts, scheduled and retrying."""


@attrs.frozen(kw_only=True)
class Pruned:
    """What one pruning transaction deleted: finished jobs, and idempotency keys past their time."""

    jobs: int = 0
    keys: int = 0


@attrs.frozen(kw_only=True)
class Retention:
    """How long finished jobs are kept, by how they ended; None keeps them for good."""

    succeeded: datetime.timedelta | None = datetime.timedelta(days=7)
    failed: datetime.timedelta | None = datetime.timedelta(days=30)

    def cutoffs(self, now: datetime.datetime) -> dict[str, datetime.datetime]:
        """For each status pruned at all, the end time before which its jobs go."""
        kept = {"succeeded": self.succeeded, "failed": self.failed}
        return {status: now - age for status, age in kept.items() if age is not None}


def every_attempt(
    logged: tuple[AttemptRecord, ...],
    *,
    job: Job,
    attempt: int,
    runner_id: str | None,
    started_at: datetime.datetime | None,
    finished_at: datetime.datetime | None,
    error_class: str | None = None,
) -> tuple[AttemptRecord, ...]:
    """The logged attempts, and the latest one when the log does not hold it.

    Stores log an attempt only when it ends without ending the job (a retry,
    a snooze): the attempt that finished the job, or the one running now, is
    told by the row itself, so the hot path writes no log.
    """
    if attempt < 1 or any(
        record.attempt == attempt and record.started_at == started_at for record in logged
    ):
        return logged  # logged already (a snooze gives its number back: the start tells)
    if job.status is Status.RUNNING:
        outcome = "running"
    elif job.status is Status.SUCCEEDED:
        outcome = "succeeded"
    elif job.status is Status.FAILED and job.error is not None:
        outcome = job.error
    else:
        return logged  # queued again with this attempt given back
    latest = AttemptRecord(
        attempt=attempt,
        runner_id=runner_id,
        started_at=started_at,
        ended_at=None if job.status is Status.RUNNING else finished_at,
        outcome=outcome,
        error_class=error_class if job.status is Status.FAILED else None,
    )
    return (*logged, latest)
