"""A rate-limited kind's starts in its window, as a store's claims count them: kept in
memory per store and brought up to date, under the kind's lock, from the starts recorded
since it last looked (an index seek), not by reading the whole window each claim.

Starts are stamped in order (a claim stamps its starts no earlier than the kind's latest,
under its lock), so the rows not seen yet are those stamped at or after the latest seen;
of those stamped exactly then, the ones already counted are told apart by their number.
What a claim read is kept only once its batch has committed (``WindowLook.keep``): a batch
that rolls back may have read its own starts, or another's in one group commit.
"""

from __future__ import annotations

import bisect
import collections
import datetime
import threading
import time
import weakref
from typing import Any

import attrs

from jobtable.adapters.sql.engine import Connection, Cursor, SqlEngine
from jobtable.core.limits import PRUNE_MARGIN, RateLimit

PRUNE_EVERY = 1.0
"""Seconds between prunes of a kind's old starts by one store's claims (a window's count
never reads them, so the prune only keeps the table small)."""

Started = tuple[Any, int, datetime.datetime]
"""Starts of one rate key in a window: the key, how many, and the oldest."""

Row = tuple[Any, datetime.datetime]
"""A start as read: its rate key and stamp."""

_clock = time.monotonic


class _Window:
    """The starts of one kind seen by one store, per rate key in stamp order, from its
    window (less PRUNE_MARGIN: a claim whose clock lags must still count them) on."""

    def __init__(self, per: float) -> None:
        self.per = per
        self.latest: datetime.datetime | None = None
        """The latest stamp kept."""
        self.at_latest: collections.Counter[Any] = collections.Counter()
        """How many starts stamped ``latest`` are kept, per rate key."""
        self.by_key: dict[Any, _Stamps] = {}
        self.pruned_at = -PRUNE_EVERY
        self._lock = threading.Lock()  # runners of one store count and keep in threads

    def count(
        self, rows: list[Row], now: datetime.datetime
    ) -> tuple[datetime.datetime, list[Started]]:
        """When a claim that read ``rows`` stamps its starts (``now``, or the latest start
        if later), and the starts in the window before then, per rate key."""
        with self._lock:
            unseen = self._unseen(rows)
            stamps = [at for at in (self.latest, *(at for _, at in unseen)) if at is not None]
            at = max([now, *stamps])
            return at, self._since(at - datetime.timedelta(seconds=self.per), unseen)

    def so_far(
        self, now: datetime.datetime
    ) -> tuple[datetime.datetime, datetime.datetime, int] | None:
        """The latest stamp kept, when the window a claim at ``now`` counts begins (from
        ``now`` or that stamp if later, less ``per``), and how many starts kept are after
        that and before the latest; None when none is kept."""
        with self._lock:
            latest = self.latest
            if latest is None:
                return None
            since = max(now, latest) - datetime.timedelta(seconds=self.per)
            after = sum(stamps.after(since)[0] for stamps in self.by_key.values())
            return latest, since, after - (sum(self.at_latest.values()) if latest > since else 0)

    def _unseen(self, rows: list[Row]) -> list[Row]:
        """Of ``rows`` (read in stamp order from a stamp at or before ``latest``), those not
        kept yet: every one after ``latest``, and at ``latest`` those beyond its count."""
        latest = self.latest
        if latest is None:
            return rows
        kept = dict(self.at_latest)
        unseen = []
        for key, at in rows:
            if at < latest:
                continue
            if at == latest and kept.get(key, 0) > 0:
                kept[key] -= 1
                continue
            unseen.append((key, at))
        return unseen

    def keep(self, rows: list[Row]) -> None:
        """Keep the starts of ``rows`` not kept yet (in any order of claims' commits)."""
        with self._lock:
            self._keep(rows)

    def _keep(self, rows: list[Row]) -> None:
        for key, at in self._unseen(rows):
            if key not in self.by_key:
                self.by_key[key] = _Stamps()
            self.by_key[key].append(at)
            if self.latest is None or at > self.latest:
                self.latest = at
                self.at_latest = collections.Counter()
            self.at_latest[key] += 1

    def _since(self, since: datetime.datetime, unseen: list[Row]) -> list[Started]:
        """The starts stamped after ``since`` per rate key, those kept and ``unseen``; kept
        ones a margin older are let go."""
        counted: dict[Any, tuple[int, datetime.datetime]] = {}
        for key, stamps in list(self.by_key.items()):
            stamps.let_go(since - datetime.timedelta(seconds=PRUNE_MARGIN))
            if not stamps:
                del self.by_key[key]
                continue
            count, oldest = stamps.after(since)
            if count:
                counted[key] = (count, oldest)
        for key, at in unseen:
            if at > since:
                count, oldest = counted.get(key, (0, at))
                counted[key] = (count + 1, min(oldest, at))
        return [(key, count, oldest) for key, (count, oldest) in counted.items()]


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


@attrs.define
class WindowLook:
    """One claim's look at a kind's window: the starts it read, counted with those kept."""

    window: _Window
    new_starts: Cursor
    rows: list[Row] = attrs.Factory(list)

    def keep(self) -> None:
        """Keep what the look read (call once its batch has committed)."""
        self.window.keep(self.rows)


def look_at_window(
    engine: SqlEngine, conn: Connection, kind: str, rate: RateLimit, now: datetime.datetime
) -> WindowLook:
    """Send the read of the kind's starts recorded since its claims here last looked (the
    first look: those in the window before ``now``, and a margin); send it once the
    kind's lock is taken."""
    windows = _windows.setdefault(engine, {})
    window = windows.get(kind)
    if window is None or window.per != rate.per:
        window = windows[kind] = _Window(rate.per)
    if window.latest is None:  # as far back as a claim whose clock lags may count
        first = now - datetime.timedelta(seconds=rate.per + PRUNE_MARGIN)
        params = {"kind": kind, "since": engine.stamp(first)}
        return WindowLook(window, conn.execute(engine.sql("starts_after"), params))
    params = {"kind": kind, "since": engine.stamp(window.latest)}
    return WindowLook(window, conn.execute(engine.sql("starts_from"), params))


def window_so_far(
    engine: SqlEngine, kind: str, rate: RateLimit, now: datetime.datetime
) -> tuple[datetime.datetime, datetime.datetime, int] | None:
    """What a claim of the kind at ``now`` may count its window by without reading it: the
    latest start kept here, the window's beginning, and the starts kept after it and
    before the latest (those at or after the latest, the claim counts itself); None when
    this store has kept none (a first look reads the window whole)."""
    window = _windows.get(engine, {}).get(kind)
    if window is None or window.per != rate.per:
        return None
    return window.so_far(now)


def count_starts(
    engine: SqlEngine,
    conn: Connection,
    kind: str,
    rate: RateLimit,
    now: datetime.datetime,
    look: WindowLook,
) -> tuple[datetime.datetime, list[Started]]:
    """When the claim's starts of the kind are stamped (``now``, or the latest start if
    later: windows stay in order when clocks differ), and the starts in the window before
    it, per rate key. ``look``: what ``look_at_window`` sent. Starts older than any window
    needs are pruned now and then."""
    window = look.window
    look.rows = [(key, engine.parse_time(at)) for key, at in look.new_starts.fetchall()]
    if _clock() - window.pruned_at >= PRUNE_EVERY:
        kept = datetime.timedelta(seconds=rate.per + PRUNE_MARGIN)
        conn.execute(engine.sql("prune_starts"), {"kind": kind, "since": engine.stamp(now - kept)})
        window.pruned_at = _clock()
    return window.count(look.rows, now)


def forget_windows(engine: SqlEngine) -> None:
    """Let go of every window the store kept (a batch failed: what it read may not be so);
    the next claims read them whole."""
    _windows.pop(engine, None)
