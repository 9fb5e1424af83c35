"""The in-memory store's rows and state, shared by its parts (adapters/memory*.py)."""

from __future__ import annotations

import collections
import datetime
import heapq
import threading
from collections.abc import Iterable, Iterator
from typing import Any

import attrs

from jobtable.core.codes import CANCELLED
from jobtable.core.idempotency import KeptAnswer
from jobtable.core.job_history import JobEvent
from jobtable.core.jobs import ATTEMPTS_KEPT, EVENTS_KEPT, Job, JobFilter, stored_result
from jobtable.core.limits import QueueLimit
from jobtable.core.liveness import (
    LivenessTerms,
    RunnerInfo,
)
from jobtable.core.minutes import MinuteCounts
from jobtable.core.policies import RetryPolicy
from jobtable.core.schedules import StoredSchedule
from jobtable.core.states import job_state
from jobtable.core.status import Status

SCHEDULED = "scheduled"
"""The stored state of a queued job that is not due yet (shown as queued)."""


@attrs.define(kw_only=True)
class _Row:
    id: str
    kind: str
    status: Status | str  # a Status, or SCHEDULED
    payload: str
    created_at: str
    updated_at: str
    run_at: str
    queue: str
    priority: int
    policy: RetryPolicy
    timeout: float | None
    unique_key: str | None
    unique_while_active: bool
    result: str | None = None
    error: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    claimed_by: str | None = None
    held_by: str | None = None
    """The runner holding it ahead of its workers (it stays queued), if any."""
    attempt: int = 0
    cancel_requested: bool = False
    last_code: str | None = None
    error_class: str | None = None
    """The class path of the exception that ended the latest attempt, if it raised one."""
    attempts_log: list[dict[str, Any]] = attrs.Factory(list)
    """The last ATTEMPTS_KEPT attempts that ended without ending the job, oldest first."""
    snoozes: int = 0
    key_until: str | None = None
    limit_key: str | None = None
    rate_key: str | None = None
    fair_key: str | None = None
    trace_context: str | None = None
    version: int = 0
    history: collections.deque[JobEvent] = attrs.Factory(
        lambda: collections.deque(maxlen=EVENTS_KEPT)
    )
    """The last changes, as the SQL stores' trigger keeps them."""
    seen: tuple[Status, str | None, str | None] = (Status.QUEUED, None, None)
    """The public status, result and error as of ``version``."""

    @property
    def max_attempts(self) -> int:
        return self.policy.max_attempts

    @property
    def order(self) -> tuple[int, str, str]:
        """Claim order: priority, then due time, then id."""
        return (self.priority, self.run_at, self.id)

    def shown_status(self) -> Status:
        return Status.QUEUED if self.status == SCHEDULED else Status(self.status)


@attrs.define(kw_only=True)
class _RunnerRow:
    info: RunnerInfo
    busy: int
    last_seen: datetime.datetime
    beat: int = 0


def _stamp(now: datetime.datetime) -> str:
    return now.astimezone(datetime.UTC).isoformat(timespec="microseconds")


def _parse(stamp: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(stamp)


def _parse_or_none(stamp: str | None) -> datetime.datetime | None:
    return None if stamp is None else _parse(stamp)


class MemoryState:
    """What every part of the memory store reads and writes, under one lock."""

    liveness_terms = LivenessTerms()
    """One process: a lock (a set entry) is lost only when a test takes it away."""

    def __init__(self, *, liveness_terms: LivenessTerms | None = None) -> None:
        if liveness_terms is not None:
            self.liveness_terms = liveness_terms  # tests of leases and lock timeouts
        self._lock = threading.RLock()  # record_and_claim nests the other writes
        self._rows: dict[str, _Row] = {}
        self._ready: dict[str, list[tuple[int, str, str]]] = {}  # kind -> heap of due rows' order
        self._scheduled: list[tuple[str, str]] = []  # a heap of (run_at, id) not yet due
        self._unique: dict[tuple[str, str], str] = {}  # (kind, key) -> the id holding it
        self._paused: set[str] = set()
        self._queue_limits: dict[str, QueueLimit] = {}  # queues an operator limits
        self._queue_starts: list[tuple[str, datetime.datetime]] = []  # rate-limited queues'
        self._schedules: dict[str, datetime.datetime] = {}  # by name: when first seen
        self._stored_schedules: dict[str, StoredSchedule] = {}  # by name: as last recorded
        self._minutes: dict[tuple[datetime.datetime, str, str], MinuteCounts] = {}
        self._idempotency: dict[str, KeptAnswer] = {}
        self._leases: dict[str, tuple[str, datetime.datetime]] = {}
        self._locks: set[str] = set()  # runner ids holding their liveness lock
        self._runners: dict[str, _RunnerRow] = {}
        self._starts: list[tuple[str, str | None, datetime.datetime]] = []  # rate-limited
        self._fair_turns: dict[tuple[str, str], int] = {}  # fair kinds' keys: last turn's number

    def _file(self, row: _Row) -> None:
        """Put a queued or scheduled row where claims or promotion find it."""
        if row.status == SCHEDULED:
            heapq.heappush(self._scheduled, (row.run_at, row.id))
        else:
            heapq.heappush(self._ready.setdefault(row.kind, []), row.order)

    def _finish(
        self,
        row: _Row,
        status: Status,
        code: str | None,
        stamp: str,
        error_class: str | None = None,
    ) -> None:
        """Finished for good; the attempt that ended it is told by the row, not logged."""
        row.status = status
        row.error = code
        row.last_code = code
        row.error_class = error_class
        row.cancel_requested = False
        row.held_by = None
        row.finished_at = row.updated_at = stamp
        if row.unique_while_active:  # a key held while active is let go; the row keeps it
            self._let_go_of_key(row)
        self._note(row)

    def _let_go_of_key(self, row: _Row) -> None:
        """No longer hold ``row``'s unique key (another job may hold it by now: then it stays)."""
        if row.unique_key is not None and self._unique.get((row.kind, row.unique_key)) == row.id:
            del self._unique[(row.kind, row.unique_key)]

    def _requeue_unless_cancelled(self, row: _Row, stamp: str) -> bool:
        """Whether the job waits in line again; one someone asked to cancel meanwhile fails
        ``cancelled`` instead (a cancel is never lost to a retry, a snooze or a put-back)."""
        if row.cancel_requested:
            self._finish(row, Status.FAILED, CANCELLED, stamp)
            return False
        return True

    @staticmethod
    def _note(row: _Row) -> None:
        """Record a visible change in the row's history, as the SQL stores' trigger does."""
        seen = (row.shown_status(), row.result, row.error)
        if seen == row.seen:
            return
        row.seen = seen
        row.version += 1
        row.history.append(JobEvent(version=row.version, job=MemoryState._public(row)))

    @staticmethod
    def _log_attempt(
        row: _Row, outcome: str | None, ended_at: str | None, error_class: str | None
    ) -> None:
        """Log the row's latest attempt; only the last ATTEMPTS_KEPT stay."""
        row.attempts_log.append(
            {
                "attempt": row.attempt,
                "runner": row.claimed_by,
                "started_at": row.started_at,
                "ended_at": ended_at,
                "outcome": outcome,
                "error_class": error_class,
            }
        )
        row.error_class = None
        del row.attempts_log[:-ATTEMPTS_KEPT]

    @staticmethod
    def _public(row: _Row) -> Job:
        return Job(
            id=row.id,
            kind=row.kind,
            status=row.shown_status(),
            result=stored_result(row.result),
            error=row.error,
            version=row.version,
        )


def _stored(row: _Row) -> str:
    return row.status.value if isinstance(row.status, Status) else str(row.status)


def _state(row: _Row) -> str:
    return job_state(_stored(row), row.last_code, row.error).value


def matching_rows(rows: Iterable[_Row], which: JobFilter) -> Iterator[_Row]:
    """The rows ``which`` matches, in their order."""
    statuses = set(which.stored_statuses())
    after = None if which.created_after is None else _stamp(which.created_after)
    before = None if which.created_before is None else _stamp(which.created_before)
    return (
        row
        for row in rows
        if _stored(row) in statuses
        and (which.kind is None or row.kind == which.kind)
        and (which.queue is None or row.queue == which.queue)
        and (which.state is None or _state(row) == which.state.value)
        and (which.through is None or row.id <= which.through)
        and (after is None or row.created_at >= after)
        and (before is None or row.created_at < before)
        and (
            which.id_part is None
            or row.id.startswith(which.id_part)
            or row.id.endswith(which.id_part)
        )
    )


def newest_first(
    rows: Iterable[_Row],
    which: JobFilter,
    *,
    limit: int,
    after: str | None,
    before: str | None = None,
) -> list[_Row]:
    """Up to ``limit`` rows ``which`` matches with ids below ``after``, newest first; with
    ``before``, the ``limit`` just above it, oldest first."""
    found = [
        row
        for row in matching_rows(rows, which)
        if (after is None or row.id < after) and (before is None or row.id > before)
    ]
    found.sort(key=lambda row: row.id, reverse=before is None)
    return found[:limit]
