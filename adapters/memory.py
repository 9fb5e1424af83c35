"""A real, thread-safe JobStore in memory.

It passes the same contract suite as SQLite and PostgreSQL, so core tests and
users' own feature tests can rely on it behaving like the databases. Nothing
survives the process, which is the point.
"""

from __future__ import annotations

import datetime
import heapq
import threading
from collections.abc import Collection, Mapping
from typing import Any

import attrs

from jobtable.core.jobs import Claim, ClaimedJob, Job, NewJob, Recovered
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


def _stamp(now: datetime.datetime) -> str:
    return now.astimezone(datetime.UTC).isoformat(timespec="microseconds")


class MemoryStore:
    def __init__(self) -> None:
        self._lock = threading.RLock()  # finish_and_claim_next nests the other writes
        self._rows: dict[str, _Row] = {}
        self._queued: list[str] = []  # a heap of queued ids: the oldest is first
        self._live: set[str] = set()  # runner ids holding their liveness lock

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
            )
            heapq.heappush(self._queued, job.id)

    def claim_next(self, *, runner_id: str, now: datetime.datetime) -> ClaimedJob | None:
        stamp = _stamp(now)
        with self._lock:
            if not self._queued:
                return None
            row = self._rows[heapq.heappop(self._queued)]
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

    def finish_and_claim_next(
        self, claim: Claim, outcome: Succeed | Fail, *, runner_id: str, now: datetime.datetime
    ) -> tuple[bool, ClaimedJob | None]:
        with self._lock:
            if isinstance(outcome, Succeed):
                held = self.succeed(claim, result=outcome.result, now=now)
            else:
                held = self.fail(claim, code=outcome.code, now=now)
            return held, self.claim_next(runner_id=runner_id, now=now)

    def hold_liveness(self, runner_id: str) -> None:
        with self._lock:
            self._live.add(runner_id)

    def release_liveness(self, runner_id: str) -> None:
        with self._lock:
            self._live.discard(runner_id)

    def recover_orphans(
        self, *, code: str, max_attempts: Mapping[str, int], now: datetime.datetime
    ) -> Recovered:
        stamp = _stamp(now)
        failed = requeued = 0
        with self._lock:
            for row in self._rows.values():
                if row.status is not Status.RUNNING or row.claimed_by in self._live:
                    continue
                row.updated_at = stamp
                if row.attempt < max_attempts.get(row.kind, 1):
                    row.status = Status.QUEUED
                    heapq.heappush(self._queued, row.id)
                    requeued += 1
                else:
                    row.status = Status.FAILED
                    row.error = code
                    row.finished_at = stamp
                    failed += 1
        return Recovered(failed=failed, requeued=requeued)

    def running_claims(self, runner_id: str) -> list[Claim]:
        with self._lock:
            return [
                Claim(job_id=row.id, runner_id=runner_id, attempt=row.attempt)
                for row in self._rows.values()
                if row.status is Status.RUNNING and row.claimed_by == runner_id
            ]

    def requeue_claims(self, claims: Collection[Claim], *, now: datetime.datetime) -> int:
        moved = 0
        with self._lock:
            for claim in claims:
                row = self._held(claim)
                if row is None:
                    continue
                row.status = Status.QUEUED
                row.updated_at = _stamp(now)
                heapq.heappush(self._queued, row.id)
                moved += 1
        return moved

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
