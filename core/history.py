"""What the dashboard's charts show, read from the store's per-minute rollup (core/minutes.py)
and each queue's oldest waiting job: one read of a few small rows, whatever the jobs table
holds."""

from __future__ import annotations

import datetime
from collections.abc import Collection

import attrs

from jobtable.core.minutes import HOUR_MINUTES, KindSummary, MinutePoint, by_kind, chart, minute_of
from jobtable.core.ports import JobStore


@attrs.frozen(kw_only=True)
class History:
    """The last hour, one point a minute (the current minute last), of ``queue`` and
    ``kind`` (None: all); every kind's hour; and how long each queue's oldest waiting job
    has been due, in seconds."""

    at: datetime.datetime
    queue: str | None
    kind: str | None
    points: list[MinutePoint]
    kinds: list[KindSummary]
    oldest_waiting: dict[str, float]
    queues: list[str]
    """Every queue the hour or the oldest waits name, for the charts' choices."""


def read_history(
    store: JobStore,
    now: datetime.datetime,
    *,
    queues: Collection[str],
    queue: str | None = None,
    kind: str | None = None,
) -> History:
    """The charts of the last hour; the oldest waiting job of ``queues`` and of every queue
    the hour names."""
    since = minute_of(now) - datetime.timedelta(minutes=HOUR_MINUTES - 1)
    rows = store.minutes(since)
    oldest = oldest_waiting(store, now, {row.queue for row in rows} | set(queues))
    return History(
        at=now,
        queue=queue,
        kind=kind,
        points=chart(rows, now=now, queue=queue, kind=kind),
        kinds=by_kind([row for row in rows if queue is None or row.queue == queue], now=now),
        oldest_waiting=oldest,
        queues=sorted({row.queue for row in rows} | set(queues)),
    )


def oldest_waiting(
    store: JobStore, now: datetime.datetime, queues: Collection[str]
) -> dict[str, float]:
    """Seconds each of ``queues`` that has a job due now has had its oldest one due, by name."""
    found = store.oldest_waiting(queues)
    return {name: max(0.0, (now - due).total_seconds()) for name, due in sorted(found.items())}
