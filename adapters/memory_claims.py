"""The in-memory store's claims: the first due job in claim order, kind by kind from a heap
per kind, and scheduled jobs made due."""

from __future__ import annotations

import datetime
import heapq
from collections.abc import Collection

from jobtable.adapters.memory_state import SCHEDULED, MemoryState, _parse, _Row, _stamp
from jobtable.core.jobs import Claim, ClaimedJob
from jobtable.core.status import Status


class MemoryClaims(MemoryState):
    def _start(self, row: _Row, runner_id: str, stamp: str) -> ClaimedJob:
        """Mark ``row`` running under ``runner_id``, its attempt counted."""
        row.status = Status.RUNNING
        row.started_at = row.updated_at = stamp
        row.claimed_by = runner_id
        row.held_by = None
        row.attempt += 1
        self._note(row)
        return self._claimed(row, runner_id, row.attempt)

    @staticmethod
    def _claimed(row: _Row, runner_id: str, attempt: int) -> ClaimedJob:
        return ClaimedJob(
            claim=Claim(job_id=row.id, runner_id=runner_id, attempt=attempt),
            kind=row.kind,
            payload=row.payload,
            policy=row.policy,
            timeout=row.timeout,
            checkpoint=row.result,
            due_at=_parse(row.run_at),
            queue=row.queue,
            trace_context=row.trace_context,
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
            if (
                row is None
                or row.status is not Status.QUEUED
                or row.order != order
                or row.held_by is not None
            ):
                heapq.heappop(heap)  # stale: claimed, held, finished or moved since
                continue
            passed_over = row.queue in self._paused or row.queue in self._queue_limits
            if passed_over or (queues is not None and row.queue not in queues):
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
