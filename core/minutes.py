"""Per-minute history for the dashboard's charts: a small rollup, not a scan of the jobs table.

Each runner tallies, per minute, queue and kind, the attempts that ended a job (succeeded or
failed) and how long each job it started had waited since it was due (a histogram of
``WAIT_BUCKETS``, as the queue-wait metric measures it). ``MinuteTally`` keeps the counts
in memory; ``MinutesLoop`` (core/minutes_loop.py) adds them to the store every ``FLUSH_EVERY`` seconds (nothing
when nothing ran) and at stop. ``chart`` reads the rows of the last hour back as series:
throughput per minute, and the p50 and p95 wait per minute from the merged histograms.
"""

from __future__ import annotations

import bisect
import datetime
import math
import threading
from collections.abc import Iterable, Sequence

import attrs

WAIT_BUCKETS = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0,
    3600.0, math.inf,
)  # fmt: skip
"""Upper bounds, in seconds, of the wait histogram's buckets (the last takes the rest)."""
FLUSH_EVERY = 10.0
"""Seconds between a runner's writes of its tally (real time)."""
HOUR_MINUTES = 60
KEEP_MINUTES = 24 * 60
"""Rows older than this many minutes are deleted as new ones are written."""


def minute_of(moment: datetime.datetime) -> datetime.datetime:
    """The start of ``moment``'s minute, in UTC."""
    utc = moment.astimezone(datetime.UTC)
    return utc.replace(second=0, microsecond=0)


def bucket_of(waited: float) -> int:
    return bisect.bisect_left(WAIT_BUCKETS, max(0.0, waited))


@attrs.frozen(kw_only=True)
class MinuteCounts:
    """One minute of one queue and kind: finished jobs, and waits by bucket (index into
    ``WAIT_BUCKETS``: how many started jobs waited that long)."""

    minute: datetime.datetime
    queue: str
    kind: str
    succeeded: int = 0
    failed: int = 0
    waits: tuple[tuple[int, int], ...] = ()
    """(bucket, jobs) pairs, buckets without a job left out."""


class _Open:
    __slots__ = ("failed", "succeeded", "waits")

    def __init__(self) -> None:
        self.succeeded = 0
        self.failed = 0
        self.waits: dict[int, int] = {}

    def add(self, row: MinuteCounts) -> None:
        self.succeeded += row.succeeded
        self.failed += row.failed
        for bucket, jobs in row.waits:
            self.waits[bucket] = self.waits.get(bucket, 0) + jobs


class MinuteTally:
    """The counts a runner gathered since its last write; thread-safe and quick."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[tuple[datetime.datetime, str, str], _Open] = {}

    def started(
        self, queue: str, kind: str, *, waited: float | None, at: datetime.datetime
    ) -> None:
        if waited is None:
            return
        bucket = bucket_of(waited)
        with self._lock:
            counts = self._counts(minute_of(at), queue, kind)
            counts.waits[bucket] = counts.waits.get(bucket, 0) + 1

    def ended(self, queue: str, kind: str, *, succeeded: bool, at: datetime.datetime) -> None:
        """A job's last attempt ended (a retry or a snooze is no end)."""
        with self._lock:
            counts = self._counts(minute_of(at), queue, kind)
            if succeeded:
                counts.succeeded += 1
            else:
                counts.failed += 1

    def _counts(self, minute: datetime.datetime, queue: str, kind: str) -> _Open:
        key = (minute, queue, kind)
        found = self._open.get(key)
        if found is None:
            found = self._open[key] = _Open()
        return found

    def take(self) -> list[MinuteCounts]:
        """Everything gathered, handed over and forgotten here."""
        with self._lock:
            taken, self._open = self._open, {}
        return [
            MinuteCounts(
                minute=minute,
                queue=queue,
                kind=kind,
                succeeded=counts.succeeded,
                failed=counts.failed,
                waits=tuple(sorted(counts.waits.items())),
            )
            for (minute, queue, kind), counts in taken.items()
        ]

    def give_back(self, rows: Iterable[MinuteCounts]) -> None:
        """Counts a write lost: added again, for the next write."""
        with self._lock:
            for row in rows:
                self._counts(row.minute, row.queue, row.kind).add(row)


@attrs.frozen(kw_only=True)
class MinutePoint:
    minute: datetime.datetime
    succeeded: int
    failed: int
    started: int
    wait_p50: float | None
    """Seconds; None for a minute in which no job started."""
    wait_p95: float | None


@attrs.frozen(kw_only=True)
class KindSummary:
    """A kind over the hour: jobs finished, and the waits of the jobs it started."""

    kind: str
    succeeded: int
    failed: int
    wait_p50: float | None
    wait_p95: float | None


def quantile(waits: dict[int, int], q: float) -> float | None:
    """The ``q`` quantile of a histogram, read as the upper bound of the bucket it falls in
    (the last bucket's lower bound, when it falls there)."""
    total = sum(waits.values())
    if total == 0:
        return None
    rank = q * total
    seen = 0
    for bucket in sorted(waits):
        seen += waits[bucket]
        if seen >= rank:
            bound = WAIT_BUCKETS[bucket]
            return WAIT_BUCKETS[bucket - 1] if math.isinf(bound) else bound
    return None


def chart(
    rows: Iterable[MinuteCounts],
    *,
    now: datetime.datetime,
    queue: str | None = None,
    kind: str | None = None,
    minutes: int = HOUR_MINUTES,
) -> list[MinutePoint]:
    """One point per minute of the last ``minutes`` (the current one last), of the rows of
    ``queue`` and ``kind`` (None: every one)."""
    last = minute_of(now)
    first = last - datetime.timedelta(minutes=minutes - 1)
    merged: dict[datetime.datetime, _Open] = {}
    for row in rows:
        if row.minute < first or row.minute > last:
            continue
        if (queue is not None and row.queue != queue) or (kind is not None and row.kind != kind):
            continue
        merged.setdefault(row.minute, _Open()).add(row)
    points = []
    for step in range(minutes):
        minute = first + datetime.timedelta(minutes=step)
        counts = merged.get(minute, _Open())
        points.append(
            MinutePoint(
                minute=minute,
                succeeded=counts.succeeded,
                failed=counts.failed,
                started=sum(counts.waits.values()),
                wait_p50=quantile(counts.waits, 0.5),
                wait_p95=quantile(counts.waits, 0.95),
            )
        )
    return points


def by_kind(rows: Sequence[MinuteCounts], *, now: datetime.datetime) -> list[KindSummary]:
    """Each kind over the last hour, by name."""
    first = minute_of(now) - datetime.timedelta(minutes=HOUR_MINUTES - 1)
    merged: dict[str, _Open] = {}
    for row in rows:
        if row.minute < first:
            continue
        merged.setdefault(row.kind, _Open()).add(row)
    return [
        KindSummary(
            kind=kind,
            succeeded=counts.succeeded,
            failed=counts.failed,
            wait_p50=quantile(counts.waits, 0.5),
            wait_p95=quantile(counts.waits, 0.95),
        )
        for kind, counts in sorted(merged.items())
    ]
