"""A real, thread-safe JobStore in memory.

It passes the same contract suite as SQLite and PostgreSQL, so core tests and
users' own feature tests can rely on it behaving like the databases. Nothing
survives the process, which is the point.
"""

from __future__ import annotations

import collections
import datetime
import heapq
import json
import threading
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import attrs

from jobtable.core.codes import CANCELLED
from jobtable.core.idempotency import KeepAnswer, KeptAnswer, stale_before
from jobtable.core.jobs import (
    ATTEMPTS_KEPT,
    EVENTS_KEPT,
    AttemptRecord,
    CancelOutcome,
    Claim,
    ClaimedJob,
    Enqueued,
    HeldJob,
    Job,
    JobCount,
    JobDetail,
    JobEvent,
    JobEvents,
    JobFilter,
    NewJob,
    Pruned,
    QueueState,
    Recovered,
    RetryOutcome,
    events_after,
    every_attempt,
    stored_result,
)
from jobtable.core.liveness import (
    DeadRunner,
    LivenessTerms,
    LockState,
    RunnerInfo,
    RunnerRecord,
    RunnerSighting,
    Settlement,
)
from jobtable.core.outcome import Fail, Outcome, RunAgain, Succeed
from jobtable.core.policies import RetryPolicy
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
    attempt: int = 0
    cancel_requested: bool = False
    last_code: str | None = None
    attempts_log: list[dict[str, Any]] = attrs.Factory(list)
    """The last ATTEMPTS_KEPT attempts that ended without ending the job, oldest first."""
    snoozes: int = 0
    key_until: str | None = None
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


class MemoryStore:
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
        self._schedules: dict[str, datetime.datetime] = {}
        self._idempotency: dict[str, KeptAnswer] = {}
        self._leases: dict[str, tuple[str, datetime.datetime]] = {}
        self._locks: set[str] = set()  # runner ids holding their liveness lock
        self._runners: dict[str, _RunnerRow] = {}

    # -- enqueue -----------------------------------------------------------

    def create(
        self, job: NewJob, *, now: datetime.datetime, keep: KeepAnswer | None = None
    ) -> Enqueued:
        with self._lock:
            enqueued = self._insert(job, now)
            self._keep(keep, [enqueued])
            return enqueued

    def create_many(
        self, jobs: Collection[NewJob], *, now: datetime.datetime, keep: KeepAnswer | None = None
    ) -> list[Enqueued]:
        with self._lock:
            ids = [job.id for job in jobs]
            if len(set(ids)) != len(ids) or any(job_id in self._rows for job_id in ids):
                raise ValueError("a job with one of these ids already exists")
            enqueued = [self._insert(job, now) for job in jobs]
            self._keep(keep, enqueued)
            return enqueued

    def _keep(self, keep: KeepAnswer | None, enqueued: list[Enqueued]) -> None:
        if keep is not None:
            status, body = keep.answer(enqueued)
            self._answer(keep.key, status, body)

    def create_in(self, connection: Any, job: NewJob, *, now: datetime.datetime) -> Enqueued:
        raise TypeError("the in-memory store has no database connection to enqueue on")

    def _insert(self, job: NewJob, now: datetime.datetime) -> Enqueued:
        if job.id in self._rows:
            raise ValueError(f"job {job.id} already exists")
        if job.unique_key is not None:
            holder = self._unique.get((job.kind, job.unique_key))
            if holder is not None:
                return Enqueued(holder, duplicate=True)
            self._unique[(job.kind, job.unique_key)] = job.id
        stamp = _stamp(now)
        run_at = _stamp(job.run_at or now)
        row = _Row(
            id=job.id,
            kind=job.kind,
            status=SCHEDULED if run_at > stamp else Status.QUEUED,
            payload=job.payload,
            created_at=stamp,
            updated_at=stamp,
            run_at=run_at,
            queue=job.queue,
            priority=job.priority,
            policy=job.policy,
            timeout=job.timeout,
            unique_key=job.unique_key,
            unique_while_active=job.unique_while_active,
            key_until=None if job.key_until is None else _stamp(job.key_until),
        )
        self._rows[job.id] = row
        self._file(row)
        return Enqueued(job.id)

    def _file(self, row: _Row) -> None:
        """Put a queued or scheduled row where claims or promotion find it."""
        if row.status == SCHEDULED:
            heapq.heappush(self._scheduled, (row.run_at, row.id))
        else:
            heapq.heappush(self._ready.setdefault(row.kind, []), row.order)

    # -- claims ------------------------------------------------------------

    def claim_next(
        self,
        *,
        runner_id: str,
        now: datetime.datetime,
        kinds: Collection[str] | None = None,
        queues: Collection[str] | None = None,
    ) -> ClaimedJob | None:
        stamp = _stamp(now)
        with self._lock:
            row = self._first_due(kinds, queues)
            if row is None:
                return None
            row.status = Status.RUNNING
            row.started_at = row.updated_at = stamp
            row.claimed_by = runner_id
            row.attempt += 1
            self._note(row)
            claim = Claim(job_id=row.id, runner_id=runner_id, attempt=row.attempt)
            return ClaimedJob(
                claim=claim,
                kind=row.kind,
                payload=row.payload,
                policy=row.policy,
                timeout=row.timeout,
                checkpoint=row.result,
                due_at=_parse(row.run_at),
            )

    def _first_due(
        self, kinds: Collection[str] | None, queues: Collection[str] | None
    ) -> _Row | None:
        """The first due row in claim order among ``kinds``.

        Its heap entry stays: entries are checked against their row when read, so
        one whose row was claimed since is dropped then (lazy deletion).
        """
        best: tuple[tuple[int, str, str], str] | None = None
        for kind in list(self._ready) if kinds is None else kinds:
            order = self._peek(kind, queues)
            if order is not None and (best is None or order < best[0]):
                best = (order, kind)
        if best is None:
            return None
        return self._rows[best[0][2]]

    def _peek(self, kind: str, queues: Collection[str] | None) -> tuple[int, str, str] | None:
        """The first claimable entry of ``kind``'s heap, dropping stale ones on the way."""
        heap = self._ready.get(kind)
        passed: list[tuple[int, str, str]] = []
        found = None
        while heap:
            order = heap[0]
            row = self._rows.get(order[2])
            if row is None or row.status is not Status.QUEUED or row.order != order:
                heapq.heappop(heap)  # stale: claimed, finished or moved since
                continue
            if row.queue in self._paused or (queues is not None and row.queue not in queues):
                passed.append(heapq.heappop(heap))
                continue
            found = order
            break
        for order in passed:
            heapq.heappush(heap, order)  # type: ignore[arg-type]
        return found

    def promote_due(self, *, now: datetime.datetime) -> int:
        stamp = _stamp(now)
        moved = 0
        with self._lock:
            while self._scheduled and self._scheduled[0][0] <= stamp:
                run_at, job_id = heapq.heappop(self._scheduled)
                row = self._rows.get(job_id)
                if row is None or row.status != SCHEDULED or row.run_at != run_at:
                    continue
                row.status = Status.QUEUED
                row.updated_at = stamp
                self._file(row)
                moved += 1
        return moved

    def next_due(self) -> datetime.datetime | None:
        with self._lock:
            while self._scheduled:
                run_at, job_id = self._scheduled[0]
                row = self._rows.get(job_id)
                if row is not None and row.status == SCHEDULED and row.run_at == run_at:
                    return datetime.datetime.fromisoformat(run_at)
                heapq.heappop(self._scheduled)
            return None

    # -- outcomes ----------------------------------------------------------

    def publish(self, claim: Claim, *, result: str, now: datetime.datetime) -> bool:
        with self._lock:
            row = self._held(claim)
            if row is None:
                return False
            row.result = result
            row.updated_at = _stamp(now)
            self._note(row)
            return True

    def record(self, claim: Claim, outcome: Outcome, *, now: datetime.datetime) -> bool:
        with self._lock:
            row = self._held(claim)
            if row is None:
                return False
            self._apply(row, outcome, _stamp(now))
            return True

    def _apply(self, row: _Row, outcome: Outcome, stamp: str) -> None:
        if isinstance(outcome, Succeed):
            row.result = outcome.result
            self._finish(row, Status.SUCCEEDED, None, stamp)
            return
        row.attempt = max(row.attempt, 1)  # a job found running has had an attempt
        if isinstance(outcome, Fail):
            self._finish(row, Status.FAILED, outcome.code, stamp)
        else:
            self._run_again(row, outcome, stamp)

    def _finish(self, row: _Row, status: Status, code: str | None, stamp: str) -> None:
        """Finished for good; the attempt that ended it is told by the row, not logged."""
        row.status = status
        row.error = code
        row.last_code = code
        row.cancel_requested = False
        row.finished_at = row.updated_at = stamp
        if row.unique_key is not None and row.unique_while_active:
            self._unique.pop((row.kind, row.unique_key), None)
            row.unique_key = None
        self._note(row)

    @staticmethod
    def _note(row: _Row) -> None:
        """Record a visible change in the row's history, as the SQL stores' trigger does."""
        seen = (row.shown_status(), row.result, row.error)
        if seen == row.seen:
            return
        row.seen = seen
        row.version += 1
        row.history.append(JobEvent(version=row.version, job=MemoryStore._public(row)))

    @staticmethod
    def _log_attempt(row: _Row, outcome: str | None, ended_at: str | None) -> None:
        """Log the row's latest attempt; only the last ATTEMPTS_KEPT stay."""
        row.attempts_log.append(
            {
                "attempt": row.attempt,
                "runner": row.claimed_by,
                "started_at": row.started_at,
                "ended_at": ended_at,
                "outcome": outcome,
            }
        )
        del row.attempts_log[:-ATTEMPTS_KEPT]

    def _run_again(self, row: _Row, outcome: RunAgain, stamp: str) -> None:
        self._log_attempt(row, outcome.code, stamp)
        row.snoozes += int(not outcome.counts_attempt)
        if row.cancel_requested:  # a cancel is never lost to a retry
            self._finish(row, Status.FAILED, CANCELLED, stamp)
            return
        if not outcome.counts_attempt:
            row.attempt -= 1
        due = _stamp(outcome.run_at)
        if due > stamp:  # due later: it waits for then; due at once: it keeps its place
            row.run_at = due
        row.status = SCHEDULED if due > stamp else Status.QUEUED
        row.last_code = outcome.code
        row.updated_at = stamp
        self._note(row)
        self._file(row)

    def record_and_claim(
        self,
        outcomes: Sequence[tuple[Claim, Outcome]],
        *,
        limit: int,
        runner_id: str,
        now: datetime.datetime,
        kinds: Collection[str] | None = None,
        queues: Collection[str] | None = None,
    ) -> tuple[list[bool], list[ClaimedJob]]:
        with self._lock:
            held = [self.record(claim, outcome, now=now) for claim, outcome in outcomes]
            jobs: list[ClaimedJob] = []
            while len(jobs) < limit:
                job = self.claim_next(runner_id=runner_id, now=now, kinds=kinds, queues=queues)
                if job is None:
                    break
                jobs.append(job)
            return held, jobs

    def put_back(self, claims: Collection[Claim], *, now: datetime.datetime) -> int:
        moved = 0
        with self._lock:
            for claim in claims:
                row = self._held(claim)
                if row is None:
                    continue
                row.attempt -= 1
                # It started when it did before this claim (never, before its first attempt).
                row.started_at = row.attempts_log[-1]["started_at"] if row.attempts_log else None
                moved += 1
                if row.cancel_requested:  # cancelled meanwhile: no point running it
                    self._finish(row, Status.FAILED, CANCELLED, _stamp(now))
                    continue
                row.status = Status.QUEUED
                row.updated_at = _stamp(now)
                self._note(row)
                self._file(row)
        return moved

    # -- cancellation, queues, detail ----------------------------------------

    def cancel(self, job_id: str, *, now: datetime.datetime) -> CancelOutcome | None:
        stamp = _stamp(now)
        with self._lock:
            row = self._rows.get(job_id)
            if row is None:
                return None
            if row.status in (Status.QUEUED, SCHEDULED):
                self._finish(row, Status.FAILED, CANCELLED, stamp)
                return CancelOutcome.CANCELLED
            if row.status is Status.RUNNING:
                row.cancel_requested = True
                row.updated_at = stamp
                return CancelOutcome.REQUESTED
            return CancelOutcome.CANCELLED if row.error == CANCELLED else CancelOutcome.REFUSED

    def cancel_requests(self, runner_id: str) -> list[Claim]:
        with self._lock:
            return [
                Claim(job_id=row.id, runner_id=runner_id, attempt=row.attempt)
                for row in self._rows.values()
                if row.status is Status.RUNNING
                and row.claimed_by == runner_id
                and row.cancel_requested
            ]

    def set_queue_paused(self, name: str, *, paused: bool, now: datetime.datetime) -> None:
        with self._lock:
            if paused:
                self._paused.add(name)
            else:
                self._paused.discard(name)

    def queues(self) -> list[QueueState]:
        with self._lock:
            counts: dict[str, dict[str, int]] = {}  # queues that hold a job or a pause
            for name in self._paused | {row.queue for row in self._rows.values()}:
                counts[name] = {status.value: 0 for status in Status}
            for row in self._rows.values():
                counts[row.queue][row.shown_status().value] += 1
            return [
                QueueState(name=name, paused=name in self._paused, counts=counts[name])
                for name in sorted(counts)
            ]

    def paused_queues(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._paused)

    def begin_idempotent(
        self, key: str, request_hash: str, *, now: datetime.datetime
    ) -> KeptAnswer | None:
        answered_before, unanswered_before = stale_before(now)
        with self._lock:
            kept = self._idempotency.get(key)
            if kept is not None and (
                kept.created_at < answered_before
                or (kept.status is None and kept.created_at < unanswered_before)
            ):
                kept = None
            if kept is not None:
                return kept
            self._idempotency[key] = KeptAnswer(
                request_hash=request_hash, status=None, body=None, created_at=now
            )
            return None

    def finish_idempotent(self, key: str, *, status: int, body: str) -> None:
        with self._lock:
            self._answer(key, status, body)

    def _answer(self, key: str, status: int, body: str) -> None:
        kept = self._idempotency.get(key)
        if kept is not None:
            self._idempotency[key] = attrs.evolve(kept, status=status, body=body)

    def drop_idempotent(self, key: str) -> None:
        with self._lock:
            kept = self._idempotency.get(key)
            if kept is not None and kept.status is None:
                del self._idempotency[key]

    def record_schedule(self, name: str, *, now: datetime.datetime) -> datetime.datetime:
        with self._lock:
            return self._schedules.setdefault(name, now)

    def detail(self, job_id: str) -> JobDetail | None:
        with self._lock:
            row = self._rows.get(job_id)
            if row is None:
                return None
            job = self._public(row)
            logged = tuple(
                AttemptRecord(
                    attempt=entry["attempt"],
                    runner_id=entry["runner"],
                    started_at=_parse_or_none(entry["started_at"]),
                    ended_at=_parse_or_none(entry["ended_at"]),
                    outcome=entry["outcome"],
                )
                for entry in row.attempts_log
            )
            return JobDetail(
                job=job,
                queue=row.queue,
                priority=row.priority,
                run_at=_parse(row.run_at),
                attempt=row.attempt,
                max_attempts=row.max_attempts,
                created_at=_parse(row.created_at),
                started_at=_parse_or_none(row.started_at),
                finished_at=_parse_or_none(row.finished_at),
                timeout=row.timeout,
                unique_key=row.unique_key,
                cancel_requested=row.cancel_requested,
                claimed_by=row.claimed_by,
                attempts=every_attempt(
                    logged,
                    job=job,
                    attempt=row.attempt,
                    runner_id=row.claimed_by,
                    started_at=_parse_or_none(row.started_at),
                    finished_at=_parse_or_none(row.finished_at),
                ),
                last_code=row.last_code,
                snoozes=row.snoozes,
            )

    def jobs_ahead(self, detail: JobDetail) -> int:
        order = (detail.priority, _stamp(detail.run_at), detail.job.id)
        with self._lock:
            return sum(
                1
                for row in self._rows.values()
                if row.status is Status.QUEUED
                and row.kind == detail.job.kind
                and row.queue == detail.queue
                and row.order < order
            )

    # -- liveness ----------------------------------------------------------

    def register_runner(self, info: RunnerInfo, *, now: datetime.datetime) -> None:
        with self._lock:
            self._locks.add(info.id)
            self._runners[info.id] = _RunnerRow(info=info, busy=0, last_seen=now)

    def confirm_liveness(self, runner_id: str, *, timeout: float) -> bool:
        with self._lock:
            if runner_id in self._locks:
                return True
            self._locks.add(runner_id)
            return False

    def beat(self, runner_id: str, *, busy: int, now: datetime.datetime) -> bool:
        with self._lock:
            row = self._runners.get(runner_id)
            if row is None:
                return False
            row.beat += 1
            row.busy = busy
            row.last_seen = now
            return True

    def sight_runners(self) -> list[RunnerSighting]:
        with self._lock:
            owners = {row.claimed_by for row in self._rows.values() if row.status is Status.RUNNING}
            seen = [
                RunnerSighting(
                    runner_id=runner_id,
                    registered=True,
                    beat=row.beat,
                    lock=self._lock_state(runner_id),
                )
                for runner_id, row in self._runners.items()
            ]
            seen += [
                RunnerSighting(
                    runner_id=owner, registered=False, beat=None, lock=self._lock_state(owner)
                )
                for owner in owners
                if owner not in self._runners
            ]
            return seen

    def _lock_state(self, runner_id: str | None) -> LockState:
        return LockState.HELD if runner_id in self._locks else LockState.ABSENT

    def settle_dead(
        self, settlements: Collection[Settlement], *, now: datetime.datetime
    ) -> Recovered:
        failed = requeued = 0
        with self._lock:
            for settlement in settlements:
                verdict = settlement.verdict
                if not self._evidence_holds(verdict):
                    continue
                for job, outcome in settlement.outcomes:
                    row = self._rows.get(job.claim.job_id)
                    if (
                        row is None
                        or row.status is not Status.RUNNING
                        or row.claimed_by != verdict.runner_id
                        or row.attempt != job.claim.attempt
                    ):
                        continue  # ended, or claimed again, meanwhile
                    self._apply(row, outcome, _stamp(now))
                    requeued += isinstance(outcome, RunAgain)
                    failed += isinstance(outcome, Fail)
                if verdict.runner_id is not None:
                    self._runners.pop(verdict.runner_id, None)
        return Recovered(failed=failed, requeued=requeued)

    def _evidence_holds(self, verdict: DeadRunner) -> bool:
        row = self._runners.get(verdict.runner_id) if verdict.runner_id is not None else None
        if verdict.registered != (row is not None):
            return False
        if row is not None and row.beat != verdict.beat:
            return False
        return not (
            (verdict.lock_absent or not verdict.registered) and verdict.runner_id in self._locks
        )

    def unregister_runner(self, runner_id: str) -> None:
        with self._lock:
            self._runners.pop(runner_id, None)
            self._locks.discard(runner_id)

    def runners(self) -> list[RunnerRecord]:
        with self._lock:
            rows = sorted(self._runners.values(), key=lambda row: row.info.started_at)
            return [
                RunnerRecord(info=row.info, busy=row.busy, last_seen=row.last_seen) for row in rows
            ]

    def break_lock(self, runner_id: str) -> None:
        """For tests: take the runner's lock away, as a killed session or a removed file would."""
        with self._lock:
            self._locks.discard(runner_id)

    def running_jobs(self, owner: str | None) -> list[HeldJob]:
        with self._lock:
            return [
                HeldJob(
                    claim=Claim(job_id=row.id, runner_id=owner or "", attempt=row.attempt),
                    kind=row.kind,
                    policy=row.policy,
                )
                for row in self._rows.values()
                if row.status is Status.RUNNING and row.claimed_by == owner
            ]

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            row = self._rows.get(job_id)
            return None if row is None else self._public(row)

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

    # -- observing and operating ----------------------------------------------

    def list_jobs(self, which: JobFilter, *, limit: int, after: str | None) -> list[Job]:
        statuses = set(which.stored_statuses())
        with self._lock:
            rows = [
                row
                for row in self._rows.values()
                if (row.status.value if isinstance(row.status, Status) else row.status) in statuses
                and (which.kind is None or row.kind == which.kind)
                and (which.queue is None or row.queue == which.queue)
                and (after is None or row.id < after)
            ]
            rows.sort(key=lambda row: row.id, reverse=True)
            return [self._public(row) for row in rows[:limit]]

    def events(self, job_id: str, *, after: int | None) -> JobEvents | None:
        with self._lock:
            row = self._rows.get(job_id)
            if row is None:
                return None
            floor = 0 if after is None else after
            kept = tuple(event for event in row.history if event.version > floor)
            return events_after(self._public(row), kept, after=after)

    def retry(self, job_id: str, *, now: datetime.datetime) -> RetryOutcome | None:
        stamp = _stamp(now)
        with self._lock:
            row = self._rows.get(job_id)
            if row is None:
                return None
            if row.status is not Status.FAILED:
                return RetryOutcome.REFUSED
            if row.attempt >= 1 and not any(
                entry["attempt"] == row.attempt and entry["started_at"] == row.started_at
                for entry in row.attempts_log
            ):
                self._log_attempt(row, row.error, row.finished_at)
            most = max(row.policy.max_attempts, row.attempt + 1)
            row.policy = attrs.evolve(row.policy, max_attempts=most)
            row.status = Status.QUEUED
            row.error = None
            row.finished_at = None
            row.cancel_requested = False
            row.run_at = row.updated_at = stamp
            self._note(row)
            self._file(row)
            return RetryOutcome.RETRIED

    def take_lease(
        self, name: str, *, holder: str, until: datetime.datetime, now: datetime.datetime
    ) -> bool:
        with self._lock:
            held = self._leases.get(name)
            if held is not None and held[0] != holder and held[1] > now:
                return False
            self._leases[name] = (holder, until)
            return True

    def prune(
        self, cutoffs: Mapping[str, datetime.datetime], *, now: datetime.datetime, limit: int
    ) -> Pruned:
        stamp = _stamp(now)
        with self._lock:
            doomed = [
                row
                for row in self._rows.values()
                if isinstance(row.status, Status)
                and row.status.value in cutoffs
                and row.finished_at is not None
                and row.finished_at < _stamp(cutoffs[row.status.value])
                and (
                    row.unique_key is None or (row.key_until is not None and row.key_until <= stamp)
                )
            ]
            doomed.sort(key=lambda row: (row.finished_at or "", row.id))
            for row in doomed[:limit]:
                del self._rows[row.id]
                if row.unique_key is not None:
                    self._unique.pop((row.kind, row.unique_key), None)
            answered_before, _ = stale_before(now)
            stale = [
                key for key, kept in self._idempotency.items() if kept.created_at < answered_before
            ]
            for key in stale[:limit]:
                del self._idempotency[key]
            return Pruned(jobs=min(len(doomed), limit), keys=min(len(stale), limit))

    def job_counts(self) -> list[JobCount]:
        counts: collections.Counter[tuple[str, str, str]] = collections.Counter()
        with self._lock:
            for row in self._rows.values():
                stored = row.status.value if isinstance(row.status, Status) else row.status
                if stored in ("queued", SCHEDULED, "running"):
                    counts[(row.queue, row.kind, stored)] += 1
        return [
            JobCount(queue=queue, kind=kind, status=status, count=count)
            for (queue, kind, status), count in sorted(counts.items())
        ]

    def row(self, job_id: str) -> dict[str, Any] | None:
        """Every column of the job's row, for inspection and tests."""
        with self._lock:
            row = self._rows.get(job_id)
            if row is None:
                return None
            columns = attrs.asdict(row, recurse=False)
            columns["max_attempts"] = row.max_attempts
            columns["retry"] = row.policy.to_json()
            columns["attempts_log"] = json.dumps(row.attempts_log) if row.attempts_log else None
            del columns["policy"]
            return columns

    def close(self) -> None:
        pass

    def _held(self, claim: Claim) -> _Row | None:
        row = self._rows.get(claim.job_id)
        if (
            row is None
            or row.status is not Status.RUNNING
            or row.claimed_by != claim.runner_id
            or row.attempt != claim.attempt
        ):
            return None
        return row
