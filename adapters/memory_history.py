"""The in-memory store's history: per-minute counts, and each queue's oldest waiting job."""

from __future__ import annotations

import datetime
from collections.abc import Collection, Sequence

from jobtable.adapters.memory_state import MemoryState, _parse
from jobtable.core.minutes import KEEP_MINUTES, MinuteCounts
from jobtable.core.status import Status


class MemoryHistory(MemoryState):
    def add_minutes(self, rows: Sequence[MinuteCounts], *, now: datetime.datetime) -> None:
        before = now - datetime.timedelta(minutes=KEEP_MINUTES)
        with self._lock:
            for row in rows:
                key = (row.minute, row.queue, row.kind)
                kept = self._minutes.get(key)
                if kept is None:
                    self._minutes[key] = row
                    continue
                waits = dict(kept.waits)
                for bucket, jobs in row.waits:
                    waits[bucket] = waits.get(bucket, 0) + jobs
                self._minutes[key] = MinuteCounts(
                    minute=row.minute,
                    queue=row.queue,
                    kind=row.kind,
                    succeeded=kept.succeeded + row.succeeded,
                    failed=kept.failed + row.failed,
                    waits=tuple(sorted(waits.items())),
                )
            for key in [key for key in self._minutes if key[0] < before]:
                del self._minutes[key]

    def minutes(self, since: datetime.datetime) -> list[MinuteCounts]:
        with self._lock:
            return [row for row in self._minutes.values() if row.minute >= since]

    def oldest_waiting(self, queues: Collection[str]) -> dict[str, datetime.datetime]:
        wanted = set(queues)
        found: dict[str, str] = {}
        with self._lock:
            for row in self._rows.values():
                if row.status is Status.QUEUED and row.queue in wanted:
                    earliest = found.get(row.queue)
                    if earliest is None or row.run_at < earliest:
                        found[row.queue] = row.run_at
        return {queue: _parse(run_at) for queue, run_at in found.items()}
