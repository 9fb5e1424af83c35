"""A rate-limited kind's starts in its window, as a store's claims count them: kept in
memory per store and brought up to date, under the kind's lock, from the starts recorded
since it last looked (an index seek), not by reading the whole window each claim.

Starts are stamped in order (a claim stamps its starts no earlier than the kind's latest,
under its lock), so the rows not seen yet are those stamped at or after the latest seen;
of those stamped exactly then, the ones already counted are told apart by their number.
"""

from __future__ import annotations

import bisect
import collections
import datetime
import time
import weakref
from typing import Any

from jobtable.adapters.sql.engine import Connection, Cursor, SqlEngine
from jobtable.core.limits import PRUNE_MARGIN, RateLimit

PRUNE_EVERY = 1.0
"""Seconds between prunes of a kind's old starts by one store's claims (a window's count
never reads them, so the prune only keeps the table small)."""

Started = tuple[Any, int, datetime.datetime]
"""Starts of one rate key in a window: the key, how many, and the oldest."""

_clock = time.monotonic


class _Window:
    """The starts of one kind seen by one store, per rate key in stamp order, from its
    window (less PRUNE_MARGIN: a claim whose clock lags must still count them) on."""

    def __init__(self, per: float) -> None:
        self.per = per
        self.latest: datetime.datetime | None = None
        """The latest stamp seen."""
        self.at_latest: collections.Counter[Any] = collections.Counter()
        """How many starts stamped ``latest`` were seen, per rate key."""
        self.by_key: dict[Any, _Stamps] = {}
        self.pruned_at = -PRUNE_EVERY

    def take(self, rows: list[tuple[Any, datetime.datetime]]) -> None:
        """Count the starts read since ``latest`` (in stamp order; those stamped exactly
        ``latest`` include the ones already counted)."""
        latest = self.latest
        if latest is not None:
            again = collections.Counter(key for key, at in rows if at == latest)
            for key, count in again.items():
                for _ in range(count - self.at_latest[key]):
                    self._stamps(key).append(latest)
        for key, at in rows:
            if at != latest:
                self._stamps(key).append(at)
        if rows:
            newest = rows[-1][1]
            self.at_latest = collections.Counter(key for key, at in rows if at == newest)
            self.latest = newest

    def _stamps(self, key: Any) -> _Stamps:
        if key not in self.by_key:
            self.by_key[key] = _Stamps()
        return self.by_key[key]

    def since(self, since: datetime.datetime) -> list[Started]:
        """The starts stamped after ``since``, per rate key; those a margin older let go."""
        counted = []
        for key, stamps in list(self.by_key.items()):
            stamps.let_go(since - datetime.timedelta(seconds=PRUNE_MARGIN))
            if not stamps:
                del self.by_key[key]
                continue
            count, oldest = stamps.after(since)
            if count:
                counted.append((key, count, oldest))
        return counted


class _Stamps:
    """One rate key's start stamps, in order (appended in order, let go from the front)."""

    def __init__(self) -> None:
        self._stamps: list[datetime.datetime] = []
        self._first = 0

    def append(self, at: datetime.datetime) -> None:
        self._stamps.append(at)

    def __bool__(self) -> bool:
        return self._first < len(self._stamps)

    def let_go(self, until: datetime.datetime) -> None:
        """Forget the stamps at or before ``until``."""
        self._first = bisect.bisect_right(self._stamps, until, lo=self._first)
        if self._first > 1024 and self._first * 2 > len(self._stamps):
            del self._stamps[: self._first]
            self._first = 0

    def after(self, since: datetime.datetime) -> tuple[int, datetime.datetime]:
        """How many stamps are after ``since``, and the oldest of them (if any)."""
        first = bisect.bisect_right(self._stamps, since, lo=self._first)
        count = len(self._stamps) - first
        return count, (self._stamps[first] if count else since)


_windows: weakref.WeakKeyDictionary[SqlEngine, dict[str, _Window]] = weakref.WeakKeyDictionary()
"""Per store, each rate-limited kind's starts as its claims last saw them."""


def send_new_starts(
    engine: SqlEngine, conn: Connection, kind: str, rate: RateLimit, now: datetime.datetime
) -> Cursor:
    """The kind's starts recorded since its claims here last looked, sent (the first look:
    those in the window before ``now``, and a margin); send it once the kind's lock is
    taken."""
    windows = _windows.setdefault(engine, {})
    window = windows.get(kind)
    if window is None or window.per != rate.per:
        window = windows[kind] = _Window(rate.per)
    if window.latest is None:  # as far back as a claim whose clock lags may count
        first = now - datetime.timedelta(seconds=rate.per + PRUNE_MARGIN)
        return conn.execute(
            engine.sql("starts_after"), {"kind": kind, "since": engine.stamp(first)}
        )
    return conn.execute(
        engine.sql("starts_from"), {"kind": kind, "since": engine.stamp(window.latest)}
    )


def count_starts(
    engine: SqlEngine,
    conn: Connection,
    kind: str,
    rate: RateLimit,
    now: datetime.datetime,
    new_starts: Cursor,
) -> tuple[datetime.datetime, list[Started]]:
    """When the claim's starts of the kind are stamped (``now``, or the latest start if
    later: windows stay in order when clocks differ), and the starts in the window before
    it, per rate key. ``new_starts``: what ``send_new_starts`` sent. Starts older than any
    window needs are pruned now and then."""
    window = _windows[engine][kind]
    window.take([(key, engine.parse_time(at)) for key, at in new_starts.fetchall()])
    if _clock() - window.pruned_at >= PRUNE_EVERY:
        kept = datetime.timedelta(seconds=rate.per + PRUNE_MARGIN)
        conn.execute(engine.sql("prune_starts"), {"kind": kind, "since": engine.stamp(now - kept)})
        window.pruned_at = _clock()
    at = now if window.latest is None else max(now, window.latest)
    return at, window.since(at - datetime.timedelta(seconds=rate.per))
