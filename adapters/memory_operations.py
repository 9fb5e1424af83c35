"""The in-memory store's operator actions: cancel, retry, pause, prune, idempotency keys."""

from __future__ import annotations

import datetime
from collections.abc import Mapping

import attrs

from jobtable.adapters.memory_state import (
    SCHEDULED,
    MemoryState,
    _Row,
    _stamp,
    newest_first,
)
from jobtable.core.bulk import BulkBatch
from jobtable.core.codes import CANCELLED
from jobtable.core.idempotency import KeptAnswer, stale_before
from jobtable.core.jobs import (
    CancelOutcome,
    Claim,
    JobFilter,
    Pruned,
    RetryOutcome,
)
from jobtable.core.limits import QueueLimit
from jobtable.core.schedules import StoredSchedule
from jobtable.core.status import Status


class MemoryOperations(MemoryState):
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

    def cancel_jobs(
        self, which: JobFilter, *, after: str | None, limit: int, now: datetime.datetime
    ) -> BulkBatch:
        changed, stop_requested = [], []
        with self._lock:
            ids = [
                row.id for row in newest_first(self._rows.values(), which, limit=limit, after=after)
            ]
            for job_id in ids:
                row = self._rows[job_id]
                asked = row.status is Status.RUNNING and not row.cancel_requested
                if self.cancel(job_id, now=now) is CancelOutcome.CANCELLED:
                    changed.append(job_id)
                elif asked:
                    stop_requested.append(job_id)
        return BulkBatch.of(ids, changed, stop_requested)

    def retry_jobs(
        self, which: JobFilter, *, after: str | None, limit: int, now: datetime.datetime
    ) -> BulkBatch:
        with self._lock:
            ids = [
                row.id for row in newest_first(self._rows.values(), which, limit=limit, after=after)
            ]
            changed = tuple(
                job_id for job_id in ids if self.retry(job_id, now=now) is RetryOutcome.RETRIED
            )
        return BulkBatch.of(ids, changed)

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

    def set_queue_limit(self, name: str, limit: QueueLimit, *, now: datetime.datetime) -> None:
        with self._lock:
            if limit.empty:
                self._queue_limits.pop(name, None)
            else:
                self._queue_limits[name] = limit

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

    def record_schedule(
        self, schedule: StoredSchedule, *, now: datetime.datetime
    ) -> datetime.datetime:
        with self._lock:
            self._stored_schedules[schedule.name] = schedule
            return self._schedules.setdefault(schedule.name, now)

    def retry(self, job_id: str, *, now: datetime.datetime) -> RetryOutcome | None:
        stamp = _stamp(now)
        with self._lock:
            row = self._rows.get(job_id)
            if row is None:
                return None
            if row.status is not Status.FAILED:
                return RetryOutcome.REFUSED
            if row.unique_key is not None and row.unique_while_active:
                holder = self._unique.setdefault((row.kind, row.unique_key), row.id)
                if holder != row.id:
                    return RetryOutcome.KEY_HELD  # two jobs never hold one key
            if row.attempt >= 1 and not any(
                entry["attempt"] == row.attempt and entry["started_at"] == row.started_at
                for entry in row.attempts_log
            ):
                self._log_attempt(row, row.error, row.finished_at, row.error_class)
            most = max(row.policy.max_attempts, row.attempt + 1)
            row.policy = attrs.evolve(row.policy, max_attempts=most)
            row.status = Status.QUEUED
            row.error = row.error_class = None
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

    def prunable(self, cutoffs: Mapping[str, datetime.datetime], *, now: datetime.datetime) -> bool:
        with self._lock:
            return bool(self._doomed(cutoffs, now) or self._stale_keys(now))

    def _doomed(
        self, cutoffs: Mapping[str, datetime.datetime], now: datetime.datetime
    ) -> list[_Row]:
        stamp = _stamp(now)
        return [
            row
            for row in self._rows.values()
            if isinstance(row.status, Status)
            and row.status.value in cutoffs
            and row.finished_at is not None
            and row.finished_at < _stamp(cutoffs[row.status.value])
            and (
                row.unique_key is None
                or row.unique_while_active
                or (row.key_until is not None and row.key_until <= stamp)
            )
        ]

    def _stale_keys(self, now: datetime.datetime) -> list[str]:
        answered_before, _ = stale_before(now)
        return [key for key, kept in self._idempotency.items() if kept.created_at < answered_before]

    def prune(
        self, cutoffs: Mapping[str, datetime.datetime], *, now: datetime.datetime, limit: int
    ) -> Pruned:
        with self._lock:
            doomed = self._doomed(cutoffs, now)
            doomed.sort(key=lambda row: (row.finished_at or "", row.id))
            for row in doomed[:limit]:
                del self._rows[row.id]
                self._let_go_of_key(row)
            stale = self._stale_keys(now)
            for key in stale[:limit]:
                del self._idempotency[key]
            return Pruned(jobs=min(len(doomed), limit), keys=min(len(stale), limit))
