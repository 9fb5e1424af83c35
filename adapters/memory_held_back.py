"""What limits hold back now, in the in-memory store: as adapters/sql/held_back.py counts it,
over its rows (core/held_back.py decides which slots are full)."""

from __future__ import annotations

import datetime
from collections.abc import Mapping

from jobtable.adapters.memory_state import MemoryState
from jobtable.core.held_back import HeldBack, QueueUse, full_slots, held_back_of_kind
from jobtable.core.limits import QueueLimit, RateLimit, RunningLimit, smallest
from jobtable.core.status import Status


class MemoryHeldBack(MemoryState):
    def queue_use(self, name: str, *, now: datetime.datetime) -> QueueUse | None:
        with self._lock:
            limit = self._queue_limits.get(name)
            return None if limit is None else self._use(name, limit, now)

    def held_back(
        self,
        limits: Mapping[str, RunningLimit],
        rates: Mapping[str, RateLimit],
        *,
        now: datetime.datetime,
    ) -> list[HeldBack]:
        with self._lock:
            due = [row for row in self._rows.values() if row.status is Status.QUEUED]
            counts: list[HeldBack] = []
            passed = set(self._paused)  # a paused queue's jobs wait for its resume, not a limit
            for name, limit in sorted(self._queue_limits.items()):
                why = None if name in passed else self._use(name, limit, now).full
                if why is None:
                    continue
                passed.add(name)
                by_kind: dict[str, int] = {}
                for row in due:
                    if row.queue == name:
                        by_kind[row.kind] = by_kind.get(row.kind, 0) + 1
                counts += [
                    HeldBack(kind=kind, queue=name, limit=why, count=count)
                    for kind, count in sorted(by_kind.items())
                ]
            declared = (dict(row.info.limits) for row in self._runners.values())
            lowest = smallest(limits, declared)
            for kind in sorted(lowest.keys() | rates.keys()):
                running: dict[str | None, int] = {}
                for row in self._rows.values():
                    if row.status is Status.RUNNING and row.kind == kind:
                        running[row.limit_key] = running.get(row.limit_key, 0) + 1
                started: dict[str | None, int] = {}
                rate = rates.get(kind)
                if rate is not None:
                    since = now - datetime.timedelta(seconds=rate.per)
                    for of, key, at in self._starts:
                        if of == kind and at > since:
                            started[key] = started.get(key, 0) + 1
                by_limit = full_slots(lowest.get(kind), running)
                by_rate = full_slots(rate, started)
                by_queue: dict[str, tuple[int, int]] = {}
                for row in due:
                    if row.kind != kind or row.queue in passed:
                        continue
                    held_by_limit = by_limit.every or row.limit_key in by_limit.keys
                    held_by_rate = by_rate.every or row.rate_key in by_rate.keys
                    a, b = by_queue.get(row.queue, (0, 0))
                    by_queue[row.queue] = (
                        a + held_by_limit,
                        b + (not held_by_limit and held_by_rate),
                    )
                counts += held_back_of_kind(
                    kind, {queue: n for queue, n in by_queue.items() if any(n)}
                )
            return counts

    def _use(self, name: str, limit: QueueLimit, now: datetime.datetime) -> QueueUse:
        running = sum(
            row.queue == name and row.status is Status.RUNNING for row in self._rows.values()
        )
        starts: list[datetime.datetime] = []
        if limit.rate is not None:
            since = now - datetime.timedelta(seconds=limit.rate.per)
            starts = sorted(at for queue, at in self._queue_starts if queue == name and at > since)
        return QueueUse(limit=limit, running=running, starts=starts)
