"""Jobs held back: due jobs a limit or a rate keeps from starting now, counted for the
queues list, the dashboard and the metrics.

A due job is counted once, by the first of these that holds it: its queue's limit, its
queue's rate (every due job of a full queue), then its kind's limit, its kind's rate (per
key where keyed). The stores count; which slots are full is decided here.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence

import attrs

from jobtable.core.limits import QueueLimit, RateLimit, RunningLimit

QUEUE_LIMIT = "queue_limit"
QUEUE_RATE = "queue_rate"
KIND_LIMIT = "limit"
KIND_RATE = "rate"
LIMIT_TYPES = (QUEUE_LIMIT, QUEUE_RATE, KIND_LIMIT, KIND_RATE)
"""The ``limit`` a held-back count is labelled with, in the order they are checked."""


@attrs.frozen
class HeldBack:
    """``count`` due jobs of ``kind`` in ``queue`` that ``limit`` (one of LIMIT_TYPES) holds
    back now."""

    kind: str
    queue: str
    limit: str
    count: int


@attrs.frozen
class QueueUse:
    """A limited queue's limits and what of them is in use now."""

    limit: QueueLimit
    running: int
    starts: Sequence[datetime.datetime]
    """Its starts in its rate's window ending now, oldest first (none without a rate)."""

    @property
    def full(self) -> str | None:
        """QUEUE_LIMIT or QUEUE_RATE when that holds every due job of the queue back now."""
        if self.limit.running is not None and self.running >= self.limit.running:
            return QUEUE_LIMIT
        rate = self.limit.rate
        if rate is not None and len(self.starts) >= rate.n:
            return QUEUE_RATE
        return None

    @property
    def opens_at(self) -> datetime.datetime | None:
        """When its rate lets one more start (None: it has room, or no rate)."""
        rate = self.limit.rate
        if rate is None or len(self.starts) < rate.n:
            return None
        return self.starts[len(self.starts) - rate.n] + datetime.timedelta(seconds=rate.per)


@attrs.frozen
class FullSlots:
    """Which of a kind's slots are full: all of them (``every``), or those of ``keys``."""

    every: bool = False
    keys: frozenset[str] = frozenset()

    @property
    def none(self) -> bool:
        return not self.every and not self.keys


def full_slots(limit: RunningLimit | RateLimit | None, used: Mapping[str | None, int]) -> FullSlots:
    """The full slots of ``limit`` given how many each key (None: no key) uses: running jobs
    for a limit, starts in its window for a rate."""
    if limit is None:
        return FullSlots()
    if not limit.keyed:
        return FullSlots(every=sum(used.values()) >= limit.n)
    return FullSlots(
        keys=frozenset(key for key, n in used.items() if key is not None and n >= limit.n)
    )


def held_back_of_kind(kind: str, by_queue: Mapping[str, tuple[int, int]]) -> list[HeldBack]:
    """A kind's held-back counts from ``queue -> (held by its limit, held by its rate only)``."""
    counts = []
    for queue, (by_limit, by_rate) in sorted(by_queue.items()):
        if by_limit:
            counts.append(HeldBack(kind=kind, queue=queue, limit=KIND_LIMIT, count=by_limit))
        if by_rate:
            counts.append(HeldBack(kind=kind, queue=queue, limit=KIND_RATE, count=by_rate))
    return counts


def total_by_queue(counts: Sequence[HeldBack]) -> dict[str, int]:
    """Held-back jobs per queue, every kind and limit summed."""
    totals: dict[str, int] = {}
    for each in counts:
        totals[each.queue] = totals.get(each.queue, 0) + each.count
    return totals
