"""Claims of limited kinds in the in-memory store: the SQL stores' rules (adapters/sql/limits.py)
over its rows: count what runs and what started in each rate's window, take what fits."""

from __future__ import annotations

import datetime
import itertools
from collections.abc import Collection, Iterable, Iterator, Mapping

from jobtable.adapters.memory_state import _Row
from jobtable.core.held_back import QueueUse
from jobtable.core.limits import PRUNE_MARGIN, QueueLimit, RateLimit, RunningLimit
from jobtable.core.status import Status

Start = tuple[str, str | None, datetime.datetime]
"""One start of a rate-limited kind's job: its kind, rate key and time."""


def limited_due(
    rows: Iterable[_Row],
    *,
    limits: Mapping[str, RunningLimit],
    rates: Mapping[str, RateLimit],
    starts: list[Start],
    paused: Collection[str],
    queues: Collection[str] | None,
    wanted: int,
    now: datetime.datetime,
    fair: frozenset[str] = frozenset(),
    turns: dict[tuple[str, str], int] | None = None,
    queue_limits: Mapping[str, QueueLimit] | None = None,
    queue_starts: list[tuple[str, datetime.datetime]] | None = None,
    kinds: Collection[str] | None = None,
) -> tuple[list[_Row], datetime.datetime | None]:
    """Up to ``wanted`` due rows of limited kinds with free slots, kind by kind, each kind's in
    claim order, then of the limited queues (``queue_limits``, of ``kinds``) likewise; each
    taken row of a rate-limited kind is recorded in ``starts``, of a rate-limited queue in
    ``queue_starts`` (older starts are pruned). Also when a due row a rate held back may
    start."""
    every = list(rows)
    queue_limits = queue_limits or {}
    queue_starts = [] if queue_starts is None else queue_starts
    starts[:] = [  # kept PRUNE_MARGIN past the window, as the SQL stores keep them
        start
        for start in starts
        if start[0] not in rates
        or start[2] > now - _per(rates, start) - datetime.timedelta(seconds=PRUNE_MARGIN)
    ]
    running: dict[tuple[str, str | None], int] = {}
    for row in every:
        limit = limits.get(row.kind)
        if row.status is Status.RUNNING and limit is not None:
            slot = (row.kind, row.limit_key if limit.keyed else None)
            running[slot] = running.get(slot, 0) + 1
    stamp: dict[str, datetime.datetime] = {}  # never before a kind's latest start
    for kind, _, at in starts:
        stamp[kind] = max(stamp.get(kind, now), at)
    started: dict[tuple[str, str | None], list[datetime.datetime]] = {}
    for kind, key, at in starts:
        rate = rates.get(kind)
        if rate is not None and at > stamp[kind] - datetime.timedelta(seconds=rate.per):
            started.setdefault((kind, key if rate.keyed else None), []).append(at)
    picked: list[_Row] = []
    opens: list[datetime.datetime] = []
    turns = {} if turns is None else turns

    def fits(row: _Row) -> bool:
        """Whether the row's kind has a free slot for it (if its rate is spent: when it
        opens, whether or not its limit holds it back too)."""
        limit, rate = limits.get(row.kind), rates.get(row.kind)
        rate_slot = (row.kind, row.rate_key if rate is not None and rate.keyed else None)
        if rate is not None and len(times := started.get(rate_slot, [])) >= rate.n:
            opens.append(min(times) + datetime.timedelta(seconds=rate.per))
            return False
        limit_slot = (row.kind, row.limit_key if limit is not None and limit.keyed else None)
        return limit is None or running.get(limit_slot, 0) < limit.n

    def take(row: _Row) -> None:
        kind = row.kind
        limit, rate = limits.get(kind), rates.get(kind)
        limit_slot = (kind, row.limit_key if limit is not None and limit.keyed else None)
        if rate is not None:
            rate_slot = (kind, row.rate_key if rate.keyed else None)
            started.setdefault(rate_slot, []).append(stamp.get(kind, now))
            starts.append((kind, row.rate_key, stamp.get(kind, now)))
        running[limit_slot] = running.get(limit_slot, 0) + 1
        picked.append(row)
        if kind in fair and row.fair_key is not None:
            last = max((turn for (of, _), turn in turns.items() if of == kind), default=0)
            turns[(kind, row.fair_key)] = last + 1

    for kind in sorted(set(limits) | set(rates) | fair):
        limit, rate = limits.get(kind), rates.get(kind)
        due = sorted(
            (
                row
                for row in every
                if row.kind == kind
                and row.status is Status.QUEUED
                and row.held_by is None
                and row.queue not in paused
                and row.queue not in queue_limits
                and (queues is None or row.queue in queues)
            ),
            key=lambda row: row.order,
        )
        reached = len(picked) < wanted
        for row in _taking_turns(kind, due, turns) if kind in fair else due:
            if len(picked) >= wanted:
                break
            if not fits(row):
                continue
            take(row)
        # A rate without a key this claim found or left spent: when it opens, if a job is
        # left for it (whether or not the claim looked at that job).
        spent = started.get((kind, None), []) if rate is not None and not rate.keyed else []
        spent_out = reached and rate is not None and len(spent) >= rate.n
        if rate is not None and spent_out and any(row not in picked for row in due):
            opens.append(min(spent) + datetime.timedelta(seconds=rate.per))

    for name in sorted(queue_limits):
        if queues is not None and name not in queues:
            continue
        opening = _QueueSlots(name, queue_limits[name], every, queue_starts, now)
        for row in sorted(
            (
                row
                for row in every
                if row.queue == name
                and row.status is Status.QUEUED
                and row.held_by is None
                and row.queue not in paused
                and (kinds is None or row.kind in kinds)
            ),
            key=lambda row: row.order,
        ):
            if len(picked) >= wanted:
                break
            if not fits(row):
                continue
            if not opening.fits():
                break
            opening.count()
            take(row)
        if opening.opens_at is not None:
            opens.append(opening.opens_at)
    return picked, min(opens) if opens else None


class _QueueSlots:
    """A limited queue's free slots (as adapters/sql/limits.py counts them)."""

    def __init__(
        self,
        name: str,
        limit: QueueLimit,
        rows: list[_Row],
        starts: list[tuple[str, datetime.datetime]],
        now: datetime.datetime,
    ) -> None:
        self.name, self.limit, self.starts = name, limit, starts
        self.running = sum(row.queue == name and row.status is Status.RUNNING for row in rows)
        self.opens_at: datetime.datetime | None = None
        self.at = max([now] + [at for queue, at in starts if queue == name])
        rate = limit.rate
        if rate is not None:
            kept = datetime.timedelta(seconds=rate.per + PRUNE_MARGIN)
            starts[:] = [(queue, at) for queue, at in starts if queue != name or at > now - kept]
        self.started = sorted(
            at
            for queue, at in starts
            if queue == name and rate is not None and at > self.at - _seconds(rate.per)
        )

    def fits(self) -> bool:
        """Whether one more of its jobs may start now (if its rate is spent: when it opens)."""
        use = QueueUse(limit=self.limit, running=self.running, starts=self.started)
        if use.full is None:
            return True
        self.opens_at = use.opens_at
        return False

    def count(self) -> None:
        self.running += 1
        if self.limit.rate is not None:
            self.started.append(self.at)
            self.starts.append((self.name, self.at))


def _seconds(per: float) -> datetime.timedelta:
    return datetime.timedelta(seconds=per)


def _per(rates: Mapping[str, RateLimit], start: Start) -> datetime.timedelta:
    return datetime.timedelta(seconds=rates[start[0]].per)


def _taking_turns(kind: str, due: list[_Row], turns: dict[tuple[str, str], int]) -> Iterator[_Row]:
    """A fair kind's due rows (in claim order) as its keys take turns within each priority,
    the key whose last turn is oldest (or never came) first; rows with no key after. Each
    priority is ordered as it is reached, by ``turns`` as the claim's takes left them."""
    for _, same_priority in itertools.groupby(due, key=lambda row: row.priority):
        ordered: list[_Row] = []
        rows = list(same_priority)
        by_key: dict[str, list[_Row]] = {}
        for row in rows:
            if row.fair_key is not None:
                by_key.setdefault(row.fair_key, []).append(row)
        keys = sorted(
            by_key, key=lambda key: ((kind, key) in turns, turns.get((kind, key), 0), key)
        )
        for depth in range(max((len(each) for each in by_key.values()), default=0)):
            ordered += [by_key[key][depth] for key in keys if depth < len(by_key[key])]
        ordered += [row for row in rows if row.fair_key is None]
        yield from ordered
