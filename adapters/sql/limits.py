"""Claims of limited kinds on the shared SQL body: count what runs and what started, then
claim what fits.

Each limited kind (a concurrency limit, a rate, or both) is locked for the claim's
transaction (PostgreSQL: an advisory lock; SQLite's one writer takes turns already); its
running jobs are counted per limit key, its starts in the rate's window per rate key
(older ones pruned), and its due jobs read in claim order a page at a time, taking each
whose slots are free, until the batch is full or the kind has no more due jobs. Each
start of a rate-limited job is recorded in the same transaction.
"""

from __future__ import annotations

import datetime
import itertools
import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

from jobtable.adapters.sql.engine import Connection, SqlEngine
from jobtable.core.limits import PRUNE_MARGIN, RateLimit, RunningLimit, smallest

PAGE = 200
"""Due jobs of a kind read at a time while looking for keys with a free slot."""

FAIR_DEPTH = 4
"""A fair key's jobs read at a time as its turns come round."""

FAIR_CHUNK = 8
"""Fair keys whose jobs one statement reads (a claim rarely needs more than the first few)."""

_ALL = "*"
"""The one slot of a limit or rate without a key."""


@attrs.frozen
class LimitedClaim:
    rows: list[Any]
    """The claimed rows (as ``claim_next_job`` returns them), in claim order."""
    opens_at: datetime.datetime | None
    """When a due job a rate held back may start (its window's oldest start leaves it)."""


def claim_limited(
    engine: SqlEngine,
    conn: Connection,
    limits: Mapping[str, RunningLimit],
    rates: Mapping[str, RateLimit],
    picking: Mapping[str, Any],
    wanted: int,
    now: datetime.datetime,
    fair: frozenset[str] = frozenset(),
    clock: Callable[[], datetime.datetime] | None = None,
) -> LimitedClaim:
    """Claim up to ``wanted`` due jobs of the limited kinds, within their limits and rates, in
    this transaction; a ``fair`` kind's keys take turns (``_fair_order``)."""
    kinds = sorted(set(limits) | set(rates) | fair)
    for kind in kinds:  # one order for every runner: no two wait for each other
        conn.execute(engine.sql("lock_limited_kind"), {"kind": kind})
    if clock is not None:  # read now that the locks are held: a rate's stamps are fresh
        now = max(now, clock())
    if limits:
        declared = conn.execute(engine.sql("registered_limits"), {}).fetchall()
        limits = smallest(limits, (_parsed(text) for (text,) in declared))
    chosen: list[tuple[str, str, str | None, str | None]] = []  # id, kind, rate and fair keys
    openings: list[datetime.datetime] = []
    stamped: dict[str, Any] = {}  # when each rate-limited kind's starts are stamped
    for kind in kinds:
        if len(chosen) >= wanted:
            break
        slots = _Slots(engine, conn, kind, limits.get(kind), rates.get(kind), now)
        stamped[kind] = engine.stamp(slots.at)
        candidates = _fair_order(engine, conn, kind, picking) if kind in fair else iter(())
        chosen += _pick(engine, conn, kind, slots, picking, wanted - len(chosen), candidates)
        if slots.opens_at is not None:
            openings.append(slots.opens_at)
    rows: list[Any] = []
    if chosen:
        ids = engine.names([job_id for job_id, _, _, _ in chosen])
        rows = conn.execute(engine.sql("claim_jobs_by_id"), {**picking, "ids": ids}).fetchall()
        claimed = {row[0] for row in rows}
        for job_id, kind, rate_key, fair_key in chosen:
            if job_id not in claimed:
                continue
            if kind in rates:
                start = {"kind": kind, "rate_key": rate_key, "now": stamped[kind]}
                conn.execute(engine.sql("record_start"), start)
            if kind in fair and fair_key is not None:
                turn = {"kind": kind, "fair_key": fair_key}
                conn.execute(engine.sql("take_fair_turn"), turn)
        place = {job_id: n for n, (job_id, _, _, _) in enumerate(chosen)}
        rows.sort(key=lambda row: place[row[0]])
    return LimitedClaim(rows=rows, opens_at=min(openings) if openings else None)


class _Slots:
    """One kind's free slots, as counted at the claim: running per limit key, started per
    rate key in the window."""

    def __init__(
        self,
        engine: SqlEngine,
        conn: Connection,
        kind: str,
        limit: RunningLimit | None,
        rate: RateLimit | None,
        now: datetime.datetime,
    ) -> None:
        self.limit = limit
        self.rate = rate
        self.running: dict[str | None, int] = {}
        self.started: dict[str | None, int] = {}
        self.oldest: dict[str | None, datetime.datetime] = {}
        self.opens_at: datetime.datetime | None = None
        if limit is not None:
            counts = conn.execute(engine.sql("running_by_limit_key"), {"kind": kind}).fetchall()
            for key, count in counts:
                slot = key if limit.keyed else _ALL
                self.running[slot] = self.running.get(slot, 0) + int(count)
        self.at = now
        """When this claim's starts of the kind are stamped: never before the latest one."""
        if rate is not None:
            window = datetime.timedelta(seconds=rate.per)
            kept = datetime.timedelta(seconds=rate.per + PRUNE_MARGIN)
            conn.execute(
                engine.sql("prune_starts"), {"kind": kind, "since": engine.stamp(now - kept)}
            )
            (latest,) = conn.execute(engine.sql("latest_start"), {"kind": kind}).fetchone()
            if latest is not None:
                self.at = max(now, engine.parse_time(latest))
            since = {"kind": kind, "since": engine.stamp(self.at - window)}
            for key, count, first in conn.execute(engine.sql("starts_by_rate_key"), since):
                slot = key if rate.keyed else _ALL
                self.started[slot] = self.started.get(slot, 0) + int(count)
                first_at = engine.parse_time(first)
                self.oldest[slot] = min(self.oldest.get(slot, first_at), first_at)

    def take(self, limit_key: str | None, rate_key: str | None) -> bool:
        """Whether a job with these keys fits now; if so, its slots are counted as taken."""
        limit, rate = self.limit, self.rate
        if limit is None and rate is None:
            return True  # a fair kind with neither
        running_slot = (limit_key if limit.keyed else _ALL) if limit is not None else None
        rate_slot = (rate_key if rate.keyed else _ALL) if rate is not None else None
        if limit is not None and self.running.get(running_slot, 0) >= limit.n:
            return False
        if rate is not None and self.started.get(rate_slot, 0) >= rate.n:
            opens = self.oldest[rate_slot] + datetime.timedelta(seconds=rate.per)
            self.opens_at = opens if self.opens_at is None else min(self.opens_at, opens)
            return False
        if limit is not None:
            self.running[running_slot] = self.running.get(running_slot, 0) + 1
        if rate is not None:
            self.started[rate_slot] = self.started.get(rate_slot, 0) + 1
            self.oldest.setdefault(rate_slot, self.at)  # this start, if none before it
        return True

    def all_full(self) -> bool:
        """No job of the kind can start now (every slot is unkeyed and taken)."""
        limit, rate = self.limit, self.rate
        if (limit is not None and limit.keyed) or (rate is not None and rate.keyed):
            return False
        if limit is None and rate is None:
            return False
        full_limit = limit is not None and self.running.get(_ALL, 0) >= limit.n
        full_rate = rate is not None and self.started.get(_ALL, 0) >= rate.n
        return full_limit or full_rate


def _parsed(text: Any) -> dict[str, int]:
    """A runner's declared limits; none from text no runner of ours wrote."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _fair_order(
    engine: SqlEngine, conn: Connection, kind: str, picking: Mapping[str, Any]
) -> Iterator[Any]:
    """A fair kind's due jobs, priority by priority; within one, its keys take turns (the one
    whose last turn is oldest, or never came, first), each key's oldest job first, then its
    jobs with no key. Each key's jobs are read as its turns come round, a few at a time."""
    turns = dict(conn.execute(engine.sql("fair_turns"), {"kind": kind}).fetchall())
    priority = -1
    while True:
        params = {"kind": kind, "queues": picking["queues"]}
        (found,) = conn.execute(
            engine.sql("fair_priority"), {**params, "after": priority}
        ).fetchone()
        if found is None:
            return
        priority = int(found)
        keys = [
            key
            for (key,) in conn.execute(engine.sql("fair_keys"), {**params, "priority": priority})
        ]
        keys.sort(key=lambda key: (key in turns, int(turns.get(key, 0)), key))
        heads: dict[str, list[Any]] = {key: [] for key in keys}
        for depth in itertools.count():
            more = False
            for start in range(0, len(keys), FAIR_CHUNK):
                chunk = keys[start : start + FAIR_CHUNK]
                due = [key for key in chunk if depth % FAIR_DEPTH == 0 and len(heads[key]) == depth]
                if due:  # their turns reached the end of what was read: read a few more each
                    rows = conn.execute(
                        engine.sql("fair_heads"),
                        {**params, "priority": priority, "fair_keys": engine.names(due),
                         "limit": FAIR_DEPTH, "offset": depth},
                    ).fetchall()  # fmt: skip
                    for row in rows:
                        heads[row[3]].append(row)
                for key in chunk:
                    if depth < len(heads[key]):
                        more = True
                        yield heads[key][depth]
            if not more:
                break
        for offset in itertools.count(0, PAGE):  # then this priority's jobs with no key
            unkeyed = conn.execute(
                engine.sql("fair_unkeyed"),
                {**params, "priority": priority, "limit": PAGE, "offset": offset},
            ).fetchall()
            yield from unkeyed
            if len(unkeyed) < PAGE:
                break


def _pick(
    engine: SqlEngine,
    conn: Connection,
    kind: str,
    slots: _Slots,
    picking: Mapping[str, Any],
    wanted: int,
    first: Iterator[Any],
) -> list[tuple[str, str, str | None, str | None]]:
    """Up to ``wanted`` of the kind's due jobs that fit its slots: those ``first`` yields, in
    its order (a fair kind's turns), then the rest in claim order."""
    picked: list[tuple[str, str, str | None, str | None]] = []
    seen: set[str] = set()
    for job_id, limit_key, rate_key, fair_key in first if not slots.all_full() else ():
        if len(picked) >= wanted:
            return picked
        seen.add(job_id)
        if slots.take(limit_key, rate_key):
            picked.append((job_id, kind, rate_key, fair_key))
        elif slots.all_full():
            return picked  # a rate's opening is known from this job
    offset = 0
    while len(picked) < wanted:
        # Unkeyed slots all taken: one due job is enough to learn when a rate opens.
        page = 1 if slots.all_full() else PAGE
        rows = _page(engine, conn, kind, picking, limit=page, offset=offset)
        for job_id, limit_key, rate_key, fair_key in rows:
            if job_id in seen:
                continue
            if slots.take(limit_key, rate_key):
                picked.append((job_id, kind, rate_key, fair_key))
                if len(picked) >= wanted:
                    break
            elif slots.all_full():
                return picked
        if len(rows) < page:
            break
        offset += page
    return picked


def _page(
    engine: SqlEngine,
    conn: Connection,
    kind: str,
    picking: Mapping[str, Any],
    *,
    limit: int,
    offset: int,
) -> list[Any]:
    params = {"kind": kind, "queues": picking["queues"], "limit": limit, "offset": offset}
    return list(conn.execute(engine.sql("pick_limited"), params).fetchall())
