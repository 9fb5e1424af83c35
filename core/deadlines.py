"""Deadlines on running handlers (a timeout, the grace after a stop), earliest first.

Pure bookkeeping on the runner's monotonic clock; the scheduler acts on them as they fall due.
"""

from __future__ import annotations

import heapq
import itertools
import threading

from jobtable.core.attempts import Attempt

COMPACT_AT = 1024
"""Entries of finished jobs are swept out once the heap holds this many and has doubled."""

STOP = "stop"
"""Tell the handler to stop (its timeout came)."""
ABANDON = "abandon"
"""Leave the handler behind (its grace after a stop ran out)."""


class Deadlines:
    """A heap of (when, action, attempt); thread-safe, read by the runner's scheduler."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._heap: list[tuple[float, int, str, str, Attempt]] = []
        self._order = itertools.count()
        self._compacted = 0  # the heap's size after its last compaction

    def add(self, when: float, action: str, code: str, attempt: Attempt) -> bool:
        """At ``when``: ``STOP`` tells the handler to stop with ``code``; ``ABANDON`` leaves it.

        True when it is now the earliest deadline (the scheduler must wake to
        shorten its wait); most jobs end long before theirs, so most adds are not.
        """
        with self._lock:
            heapq.heappush(self._heap, (when, next(self._order), action, code, attempt))
            if len(self._heap) >= COMPACT_AT and len(self._heap) >= 2 * self._compacted:
                # Most entries belong to jobs long finished: keep the live ones only.
                self._heap = [entry for entry in self._heap if entry[4].settled_by is None]
                heapq.heapify(self._heap)
                self._compacted = len(self._heap)
            self._drop_settled()
            return bool(self._heap) and self._heap[0][4] is attempt and self._heap[0][0] == when

    def next_at(self) -> float | None:
        """The earliest deadline of a handler still running (settled ones are dropped)."""
        with self._lock:
            self._drop_settled()
            return self._heap[0][0] if self._heap else None

    def _drop_settled(self) -> None:
        while self._heap and self._heap[0][4].settled_by is not None:
            heapq.heappop(self._heap)

    def due(self, now: float) -> list[tuple[str, str, Attempt]]:
        """Every action whose time has come, in time order, taken off the heap."""
        taken = []
        with self._lock:
            while self._heap and self._heap[0][0] <= now:
                _, _, action, code, attempt = heapq.heappop(self._heap)
                taken.append((action, code, attempt))
        return taken
