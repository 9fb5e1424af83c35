"""A real, thread-safe JobStore in memory.

It passes the same contract suite as SQLite and PostgreSQL, so core tests and
users' own feature tests can rely on it behaving like the databases. Nothing
survives the process, which is the point.
"""

from __future__ import annotations

import datetime
import heapq
import threading
from collections.abc import Collection
from typing import Any

import attrs

from jobtable.core.jobs import Claim, ClaimedJob, Job, NewJob, Recovered
from jobtable.core.liveness import (
    DeadRunner,
    LivenessTerms,
    LockState,
    RunnerInfo,
    RunnerRecord,
    RunnerSighting,
)
from jobtable.core.outcome import Fail, Succeed
from jobtable.core.status import Status


@attrs.define(kw_only=True)
class _Row:
    id: str
    kind: str
    status: Status
    payload: str
    created_at: str
    updated_at: str
    result: str | None = None
    error: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    claimed_by: str | None = None
    attempt: int = 0
    max_attempts: int = 1


@attrs.define(kw_only=True)
class _RunnerRow:
    info: RunnerInfo
    busy: int
    last_seen: datetime.datetime
    beat: int = 0


def _stamp(now: datetime.datetime) -> str:
    return now.astimezone(datetime.UTC).isoformat(timespec="microseconds")


class MemoryStore:
    liveness_terms = LivenessTerms()
    """One process: a lock (a set entry) is lost only when a test takes it away."""

    def __init__(self, *, liveness_terms: LivenessTerms | None = None) -> None:
        if liveness_terms is not None:
            self.liveness_terms = liveness_terms  # tests of leases and lock timeouts
        self._lock = threading.RLock()  # finish_and_claim_next nests the other writes
        self._rows: dict[str, _Row] = {}
        self._queued: list[str] = []  # a heap of queued ids: the oldest is first
        self._locks: set[str] = set()  # runner ids holding their liveness lock
        self._runners: dict[str, _RunnerRow] = {}

    def create(self, job: NewJob, *, now: datetime.datetime) -> None:
        stamp = _stamp(now)
        with self._lock:
            if job.id in self._rows:
                raise ValueError(f"job {job.id} already exists")
            self._rows[job.id] = _Row(
                id=job.id,
                kind=job.kind,
                status=Status.QUEUED,
                payload=job.payload,
                created_at=stamp,
                updated_at=stamp,
                max_attempts=job.max_attempts,
            )
            heapq.heappush(self._queued, job.id)

    def claim_next(
        self, *, runner_id: str, now: datetime.datetime, kinds: Collection[str] | None = None
    ) -> ClaimedJob | None:
        stamp = _stamp(now)
        with self._lock:
            row = self._pop_oldest(kinds)
            if row is None:
                return None
            row.status = Status.RUNNING
            row.started_at = row.updated_at = stamp
            row.claimed_by = runner_id
            row.attempt += 1
            claim = Claim(job_id=row.id, runner_id=runner_id, attempt=row.attempt)
            return ClaimedJob(claim=claim, kind=row.kind, payload=row.payload)

    def publish(self, claim: Claim, *, result: str, now: datetime.datetime) -> bool:
        with self._lock:
            row = self._held(claim)
            if row is None:
                return False
            row.result = result
            row.updated_at = _stamp(now)
            return True

    def succeed(self, claim: Claim, *, result: str, now: datetime.datetime) -> bool:
        with self._lock:
            row = self._held(claim)
            if row is None:
                return False
            row.status = Status.SUCCEEDED
            row.result = result
            row.finished_at = row.updated_at = _stamp(now)
            return True

    def fail(self, claim: Claim, *, code: str, now: datetime.datetime) -> bool:
        with self._lock:
            row = self._held(claim)
            if row is None:
                return False
            row.status = Status.FAILED
            row.error = code
            row.finished_at = row.updated_at = _stamp(now)
            return True

    def _pop_oldest(self, kinds: Collection[str] | None) -> _Row | None:
        """The oldest queued row of ``kinds`` off the heap; rows of other kinds stay queued."""
        passed: list[str] = []
        found = None
        while self._queued:
            row = self._rows[heapq.heappop(self._queued)]
            if row.status is not Status.QUEUED:
                continue  # a stale heap entry
            if kinds is None or row.kind in kinds:
                found = row
                break
            passed.append(row.id)
        for job_id in passed:
            heapq.heappush(self._queued, job_id)
        return found

    def finish_and_claim_next(
        self,
        claim: Claim,
        outcome: Succeed | Fail,
        *,
        runner_id: str,
        now: datetime.datetime,
        kinds: Collection[str] | None = None,
    ) -> tuple[bool, ClaimedJob | None]:
        with self._lock:
            if isinstance(outcome, Succeed):
                held = self.succeed(claim, result=outcome.result, now=now)
            else:
                held = self.fail(claim, code=outcome.code, now=now)
            return held, self.claim_next(runner_id=runner_id, now=now, kinds=kinds)

    def interrupt(self, claim: Claim, *, code: str, now: datetime.datetime) -> bool:
        with self._lock:
            row = self._held(claim)
            if row is None:
                return False
            self._settle_interrupted(row, code, _stamp(now))
            return True

    def _settle_interrupted(self, row: _Row, code: str, stamp: str) -> bool:
        """Queued again while attempts last, else failed with ``code``; True when requeued."""
        row.updated_at = stamp
        if row.attempt < row.max_attempts:
            row.status = Status.QUEUED
            heapq.heappush(self._queued, row.id)
            return True
        row.status = Status.FAILED
        row.error = code
        row.finished_at = stamp
        return False

    def release_claims(self, claims: Collection[Claim], *, now: datetime.datetime) -> int:
        moved = 0
        with self._lock:
            for claim in claims:
                row = self._held(claim)
                if row is None:
                    continue
                row.status = Status.QUEUED
                row.attempt -= 1
                row.updated_at = _stamp(now)
                heapq.heappush(self._queued, row.id)
                moved += 1
        return moved

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
        self, verdicts: Collection[DeadRunner], *, code: str, now: datetime.datetime
    ) -> Recovered:
        stamp = _stamp(now)
        failed = requeued = 0
        with self._lock:
            for verdict in verdicts:
                if not self._evidence_holds(verdict):
                    continue
                for row in self._rows.values():
                    if row.status is Status.RUNNING and row.claimed_by == verdict.runner_id:
                        if self._settle_interrupted(row, code, stamp):
                            requeued += 1
                        else:
                            failed += 1
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

    def running_claims(self, runner_id: str) -> list[Claim]:
        with self._lock:
            return [
                Claim(job_id=row.id, runner_id=runner_id, attempt=row.attempt)
                for row in self._rows.values()
                if row.status is Status.RUNNING and row.claimed_by == runner_id
            ]

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            row = self._rows.get(job_id)
            if row is None:
                return None
            return Job(
                id=row.id, kind=row.kind, status=row.status, result=row.result, error=row.error
            )

    def row(self, job_id: str) -> dict[str, Any] | None:
        """Every column of the job's row, for inspection and tests."""
        with self._lock:
            row = self._rows.get(job_id)
            return None if row is None else attrs.asdict(row)

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
