"""Free slots of limits and rates, as a claim counts them in its transaction: a limited
kind's (running jobs per limit key, starts per rate key in the window) and a limited
queue's (running jobs, starts in its rate's window)."""

from __future__ import annotations

import datetime
import functools
import json
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, Protocol

import attrs

from jobtable.adapters.sql.engine import Connection, Cursor, SqlEngine
from jobtable.adapters.sql.rate_windows import Started
from jobtable.core.errors import StoreError
from jobtable.core.held_back import QueueUse
from jobtable.core.limits import PRUNE_MARGIN, QueueLimit, RateLimit, RunningLimit, smallest

_ALL = "*"
"""The one slot of a limit or rate without a key."""


def send_registered_limits(
    engine: SqlEngine, conn: Connection, limits: Mapping[str, RunningLimit]
) -> Cursor | None:
    """The limits every live runner registered, sent when there are ``limits`` to lower
    (``declared_limits`` reads them)."""
    return conn.execute(engine.sql("registered_limits"), {}) if limits else None


class Counted(Protocol):
    """A count's rows, sent (a cursor) or read already."""

    def fetchall(self) -> list[Any]: ...


def declared_limits(
    limits: Mapping[str, RunningLimit], declared: Counted | None
) -> Mapping[str, RunningLimit]:
    """``limits``, each lowered to the smallest any live runner registered for its kind
    (``declared``: what ``send_registered_limits`` sent, or ``SentCounts`` read)."""
    if not limits or declared is None:
        return limits
    return smallest(limits, (_parsed(text) for (text,) in declared.fetchall()))


def count_running(engine: SqlEngine, conn: Connection, kind: str) -> Counted:
    """The kind's running jobs per limit key, sent (``KindSlots`` reads the rows)."""
    return _sent(engine, conn.execute(engine.sql("running_by_limit_key"), {"kind": kind}))


def _sent(engine: SqlEngine, counted: Cursor) -> Counted:
    """A count sent. Where a read costs no round trip (SQLite) it is read at once: its cursor
    counts each key's group only as it is fetched, and would count in the jobs the claim
    that follows takes."""
    return _Read(counted.fetchall()) if engine.reads_cost_no_round_trip else counted


@attrs.frozen
class _Read:
    rows: list[Any]

    def fetchall(self) -> list[Any]:
        return list(self.rows)


@attrs.frozen
class SentCounts:
    """What a claim counts under its kinds' locks: each limited kind's running jobs per limit
    key and the limits every live runner declared (``send_counts``)."""

    running: Mapping[str, Counted]
    with_declared: str | None
    """The kind whose count's rows carry the declared limits too (those with no count)."""
    declared_apart: Counted | None

    def read(self) -> tuple[dict[str, list[Any]], Counted | None]:
        """Each kind's running jobs per limit key, and the declared limits' rows."""
        running: dict[str, list[Any]] = {}
        declared = self.declared_apart
        for kind, counted in self.running.items():
            rows = counted.fetchall()
            if kind == self.with_declared:
                declared = _Read([(limits,) for _, count, limits in rows if count is None])
                rows = [(key, count) for key, count, _ in rows if count is not None]
            running[kind] = rows
        return running, declared


def send_counts(
    engine: SqlEngine, conn: Connection, kinds: Iterable[str], limits: Mapping[str, RunningLimit]
) -> SentCounts:
    """Send, under their locks, the count of the running jobs of each of ``kinds`` that has
    one of ``limits`` (per limit key), and the limits every live runner declared when there
    are ``limits`` to lower: read with the first kind's count, in one statement (a statement
    costs a PostgreSQL client about 40 µs)."""
    counted = [kind for kind in kinds if kind in limits]
    if not counted:
        return SentCounts({}, None, send_registered_limits(engine, conn, limits))
    first, *rest = counted
    with_declared = conn.execute(engine.sql("running_and_declared_limits"), {"kind": first})
    running = {first: _sent(engine, with_declared)}
    running.update((kind, count_running(engine, conn, kind)) for kind in rest)
    return SentCounts(running, first, None)


class KindSlots:
    """One kind's free slots, as counted at the claim: running per limit key, started per
    rate key in the window."""

    def __init__(
        self,
        limit: RunningLimit | None,
        rate: RateLimit | None,
        *,
        running: Iterable[tuple[Any, Any]] = (),
        at: datetime.datetime,
        started: Iterable[Started] = (),
    ) -> None:
        self.limit = limit
        self.rate = rate
        self.running: dict[str | None, int] = {}
        self.started: dict[str | None, int] = {}
        self.oldest: dict[str | None, datetime.datetime] = {}
        self.opens_at: datetime.datetime | None = None
        self.taken = 0
        """Jobs this claim counted as started (``count``)."""
        self.at = at
        """When this claim's starts of the kind are stamped: never before the latest one."""
        self.recount(running)
        if rate is not None:
            for key, count, first in started:
                slot = key if rate.keyed else _ALL
                self.started[slot] = self.started.get(slot, 0) + count
                self.oldest[slot] = min(self.oldest.get(slot, first), first)

    def recount(self, running: Iterable[tuple[Any, Any]]) -> None:
        """Count the kind's running jobs (per limit key, as ``count_running`` reads them)
        anew: those this claim took already among them."""
        limit = self.limit
        self.running = {}
        if limit is not None:
            for key, count in running:
                slot = key if limit.keyed else _ALL
                self.running[slot] = self.running.get(slot, 0) + int(count)

    def take(self, limit_key: str | None, rate_key: str | None) -> bool:
        """Whether a job with these keys fits now; if so, its slots are counted as taken."""
        if not self.fits(limit_key, rate_key):
            return False
        self.count(limit_key, rate_key)
        return True

    def _slots(self, limit_key: str | None, rate_key: str | None) -> tuple[Any, Any]:
        limit, rate = self.limit, self.rate
        running_slot = (limit_key if limit.keyed else _ALL) if limit is not None else None
        rate_slot = (rate_key if rate.keyed else _ALL) if rate is not None else None
        return running_slot, rate_slot

    def fits(self, limit_key: str | None, rate_key: str | None) -> bool:
        """Whether a job with these keys fits now (if its rate is spent: when it opens,
        whether or not its limit holds it back too)."""
        limit, rate = self.limit, self.rate
        running_slot, rate_slot = self._slots(limit_key, rate_key)
        if rate is not None and self.started.get(rate_slot, 0) >= rate.n:
            opens = self.oldest[rate_slot] + datetime.timedelta(seconds=rate.per)
            self.opens_no_later_than(opens)
            return False
        return limit is None or self.running.get(running_slot, 0) < limit.n

    def rate_spent(self) -> bool:
        """A rate without a key has no room left: no job of the kind may start now."""
        rate = self.rate
        return rate is not None and not rate.keyed and self.started.get(_ALL, 0) >= rate.n

    def note_rate_opening(self) -> None:
        """A job is left that a spent rate without a key holds back: it may start when the
        window's oldest start leaves it."""
        assert self.rate is not None
        self.opens_no_later_than(self.oldest[_ALL] + datetime.timedelta(seconds=self.rate.per))

    def count(self, limit_key: str | None, rate_key: str | None) -> None:
        """Count a job with these keys as started: its slots are taken."""
        running_slot, rate_slot = self._slots(limit_key, rate_key)
        self.taken += 1
        if self.limit is not None:
            self.running[running_slot] = self.running.get(running_slot, 0) + 1
        if self.rate is not None:
            self.started[rate_slot] = self.started.get(rate_slot, 0) + 1
            self.oldest.setdefault(rate_slot, self.at)  # this start, if none before it

    def opens_no_later_than(self, when: datetime.datetime) -> None:
        """A due job may start by ``when``: the claim says to claim again then."""
        self.opens_at = when if self.opens_at is None else min(self.opens_at, when)

    def claimable_at_once(self, wanted: int) -> int | None:
        """How many of its first due jobs in claim order, whatever their keys, a claim
        wanting ``wanted`` may take at once: where every slot they could take has room for
        them all (a limit or a rate without a key: up to its room). None where jobs must be
        looked at one by one: a keyed rate, or a limit's key with less room than is wanted.
        Each start is recorded under its job's own rate key however it was claimed; a claim
        that spends a rate learns when it opens from a due job left (``note_rate_opening``)."""
        limit, rate = self.limit, self.rate
        if rate is not None:
            if rate.keyed:
                return None
            wanted = min(wanted, max(0, rate.n - self.started.get(_ALL, 0)))
        elif limit is None:
            return None
        if limit is None:
            return wanted
        if not limit.keyed:
            return min(wanted, max(0, limit.n - self.running.get(_ALL, 0)))
        busiest = max(self.running.values(), default=0)  # jobs with no key share one slot
        return wanted if limit.n - busiest >= wanted else None

    def count_at_once(self, count: int) -> None:
        """Count ``count`` jobs claimed at once (``claimable_at_once``, or under a rate without a
        key with the lock) as started; StoreError (the batch rolls back) if they are more
        than a rate's window had room for. Under a keyed limit their keys are not known, and
        need not be: the claim takes no more in all than every key had room for."""
        self.taken += count
        if self.limit is not None and not self.limit.keyed:
            self.running[_ALL] = self.running.get(_ALL, 0) + count
        rate = self.rate
        if rate is not None and not rate.keyed and count:
            started = self.started.get(_ALL, 0)
            if count > rate.n - started:  # a window over-full already (a rate lowered) takes 0
                raise StoreError("a claim took more than its rate's window had room for")
            self.started[_ALL] = started + count
            self.oldest.setdefault(_ALL, self.at)

    def keyed_limit_only(self) -> bool:
        """A keyed limit and no rate: what fits is decided by each key's running jobs alone."""
        return self.limit is not None and self.limit.keyed and self.rate is None

    def full_limit_keys(self) -> frozenset[str]:
        """The limit keys at their limit now (none for a limit without a key)."""
        limit = self.limit
        if limit is None or not limit.keyed:
            return frozenset()
        return frozenset(
            key for key, count in self.running.items() if key is not None and count >= limit.n
        )

    def null_full(self) -> bool:
        """Jobs with no limit key cannot start now: under a keyed limit they share one slot."""
        limit = self.limit
        return limit is not None and limit.keyed and self.running.get(None, 0) >= limit.n

    def all_full(self) -> bool:
        """No job of the kind can start now, and a claim learns nothing more from its other
        jobs: a rate without a key is spent (any one job tells when it opens), or a limit
        without a key is full while no rate has a key (whose openings each job tells)."""
        limit, rate = self.limit, self.rate
        if self.rate_spent():
            return True
        if rate is not None and rate.keyed:
            return False
        return limit is not None and not limit.keyed and self.running.get(_ALL, 0) >= limit.n


@functools.lru_cache(maxsize=256)
def _parsed(text: Any) -> Mapping[str, int]:
    """A runner's declared limits; none from text no runner of ours wrote. Cached: every
    claim reads the same few runners' texts."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        value = None
    return MappingProxyType(value if isinstance(value, dict) else {})  # shared: read-only


class QueueSlots:
    """A limited queue's free slots, as counted at the claim: its jobs running, and its
    starts in its rate's window."""

    def __init__(
        self,
        engine: SqlEngine,
        conn: Connection,
        name: str,
        limit: QueueLimit,
        now: datetime.datetime,
    ) -> None:
        self.name = name
        self.limit = limit
        self.running = 0
        self.started: list[datetime.datetime] = []
        self.opens_at: datetime.datetime | None = None
        self.at = now
        """When this claim's starts from the queue are stamped: never before the latest."""
        if limit.running is not None:
            (count,) = conn.execute(engine.sql("running_in_queue"), {"queue": name}).fetchone()
            self.running = int(count)
        rate = limit.rate
        if rate is not None:
            kept = datetime.timedelta(seconds=rate.per + PRUNE_MARGIN)
            params = {"queue": name, "since": engine.stamp(now - kept)}
            conn.execute(engine.sql("prune_queue_starts"), params)
            (latest,) = conn.execute(engine.sql("latest_queue_start"), {"queue": name}).fetchone()
            if latest is not None:
                self.at = max(now, engine.parse_time(latest))
            since = {"queue": name, "since": engine.stamp(self.at - timedelta_of(rate))}
            rows = conn.execute(engine.sql("queue_starts_since"), since).fetchall()
            self.started = [engine.parse_time(at) for (at,) in rows]

    def fits(self) -> bool:
        """Whether one more of its jobs may start now (if its rate is spent: when it opens)."""
        use = QueueUse(limit=self.limit, running=self.running, starts=self.started)
        if use.full is None:
            return True
        self.opens_at = use.opens_at
        return False

    def count(self) -> None:
        self.running += 1
        self.started.append(self.at)


def timedelta_of(rate: RateLimit) -> datetime.timedelta:
    return datetime.timedelta(seconds=rate.per)
