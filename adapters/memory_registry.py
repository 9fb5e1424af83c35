"""The in-memory store's runner registry: locks, beats, sightings and rows."""

from __future__ import annotations

import datetime

from jobtable.adapters.memory_state import (
    MemoryState,
    _RunnerRow,
)
from jobtable.core.jobs import (
    Claim,
    HeldJob,
)
from jobtable.core.liveness import (
    DeadRunner,
    LockState,
    RunnerInfo,
    RunnerRecord,
    RunnerSighting,
)
from jobtable.core.status import Status


class MemoryRegistry(MemoryState):
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
                    started=row.started_at,
                )
                for row in self._rows.values()
                if row.status is Status.RUNNING and row.claimed_by == owner
            ]
