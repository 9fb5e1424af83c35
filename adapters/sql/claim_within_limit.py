"""The claim of a runner's one limited kind under a concurrency limit, a rate without a
key, or both, sent with the kind's lock so that it shares its round trip: one statement
counts what the limit and rate have left and claims what fits.

- A limit without a key: up to its room. With a key: of the first due jobs (what is
  wanted and KEYED_PAGE_MORE more), those whose key has room, in claim order; should it
  take fewer than wanted while more were due, the claim reads on job by job. Either goes
  by the smallest limit this store last read any runner declare: should a runner have
  declared a smaller one since, and the claim taken more than that allows, the batch
  fails and rolls back, and the next claims by it.
- A rate: up to its room in the window, counting the starts its store kept
  (rate_windows.py) and those recorded since, which the statement reads.
- Both: the lesser room.

Where reads cost no round trip (SQLite) a claim counts the slots first and claims at
once or picks job by job instead (limits.py, limited_picks.py): its reads and a claim
by id cost less than this statement's window over the page and its count of each job's
key (µs a job in one process, limit_batches.py: keyed 276 -> 241, a keyed limit and a
rate 329 -> 281).

On PostgreSQL what chooses the statement's branches (what the claim counts, whether a rate
and named queues are read) and its page (rounded up to a power of two above 8 jobs
wanted) are written into its text: its one plan for a text, made without the values, cost
more than a plan for them once the table had statistics, so every claim was planned anew
(0.3 to 0.7 ms, more than the claim ran).
"""

from __future__ import annotations

import datetime
import functools
import weakref
from collections.abc import Collection, Mapping
from typing import Any

import attrs

from jobtable.adapters.sql.engine import Connection, Cursor, SqlEngine
from jobtable.adapters.sql.queue_reads import read_query
from jobtable.adapters.sql.rate_windows import window_so_far
from jobtable.core.batch import Batch
from jobtable.core.errors import StoreError
from jobtable.core.limits import RunningLimit

_declared: weakref.WeakKeyDictionary[SqlEngine, dict[str, int]] = weakref.WeakKeyDictionary()
"""Per store, each limited kind's limit as its last claim read it (the smallest declared)."""

KEYED_PAGE_MORE = 8
"""Due jobs a keyed limit's claim reads beyond those it wants (some keys may be full)."""

WRITTEN_AS_WANTED = 8
"""Where a claim's page is written into its text (PostgreSQL), the jobs wanted up to which
it goes by them as they are. Above, a page rounded up reads (and locks, until the commit)
up to as many due jobs again as it takes: fewer texts for the server to keep plans of."""

_NO_WINDOW: dict[str, Any] = {"rate_n": None, "kept": None, "latest": None, "since": None}


@attrs.frozen
class ClaimWithinLimit:
    kind: str
    n: int | None
    """The limit the claim went by (None: it has none)."""
    room_of: str | None
    """What of the limit it counted: 'limit', 'keyed' (a limit with a key), None (none)."""
    rated: bool
    """It counted a rate's room too."""
    page: int
    """The due jobs it read at most: it took fewer than wanted while more were due only if
    it read that many."""
    claimed: Cursor

    @property
    def keyed(self) -> bool:
        return self.room_of == "keyed"


def sole_limited_kind(rules: Batch, apart: Collection[str], wanted: int) -> str | None:
    """The batch's one limited kind, when a claim of it may be sent with its lock: it wants
    jobs, and no queue an operator limited is known (those are claimed after the kinds)."""
    if len(apart) != 1 or rules.limited_queues or wanted <= 0:
        return None
    (kind,) = apart
    return kind


def send_claim_within_limit(
    engine: SqlEngine,
    conn: Connection,
    rules: Batch,
    picking: Mapping[str, Any],
    wanted: int,
    apart: Collection[str],
    now: datetime.datetime,
    *,
    each_queue: bool,
) -> ClaimWithinLimit | None:
    """Send the claim, when the batch's limited kinds are one kind, not fair, with no limited
    queue known, under a limit a claim read before, a rate without a key whose window this
    store has seen, or both; send it after the kind's lock. ``each_queue``: read each queue
    on its own (queue_reads.py). None where reads cost no round trip."""
    if engine.reads_cost_no_round_trip:
        return None
    kind = sole_limited_kind(rules, apart, wanted)
    if kind is None or kind in rules.fair:
        return None
    limit, rate = rules.limits.get(kind), rules.rates.get(kind)
    if rate is not None and rate.keyed:
        return None
    n, room_of, window = None, None, _NO_WINDOW
    if limit is not None:
        known = _declared.get(engine, {}).get(kind)
        if known is None:
            return None
        n, room_of = min(limit.n, known), "keyed" if limit.keyed else "limit"
    if rate is not None:
        so_far = window_so_far(engine, kind, rate, now)
        if so_far is None:
            return None
        latest, since, kept = so_far
        window = {
            "rate_n": rate.n,
            "kept": kept,
            "latest": engine.stamp(latest),
            "since": engine.stamp(since),
        }
    query, page = claim_text(
        engine,
        wanted,
        room_of,
        rated=rate is not None,
        every_queue=picking["queues"] is None,
        each_queue=each_queue,
    )
    params = {
        **picking,
        **window,
        "kind": kind,
        "n": n,
        "limit": wanted,
        "page": page,
        "room_of": room_of,
    }
    return ClaimWithinLimit(kind, n, room_of, rate is not None, page, conn.execute(query, params))


def claim_text(
    engine: SqlEngine,
    wanted: int,
    room_of: str | None,
    *,
    rated: bool,
    every_queue: bool,
    each_queue: bool,
) -> tuple[str, int]:
    """The claim's statement and its page (the due jobs it reads at most), for a claim of
    ``wanted`` jobs counting ``room_of`` (and a rate's room if ``rated``), by a runner that
    serves every queue or names some. The page is written in with what chooses the
    branches (PostgreSQL, the one engine that sends this claim, plans a text once), going
    by ``wanted`` as it is up to WRITTEN_AS_WANTED, rounded up to a power of two above."""
    keyed = room_of == "keyed"
    query = read_query(engine, "claim_within_limit", each_queue=each_queue)
    if wanted > WRITTEN_AS_WANTED:
        wanted = 1 << (wanted - 1).bit_length()
    page = wanted + KEYED_PAGE_MORE if keyed else wanted
    written = {"page": str(page), "room_of": "NULL" if room_of is None else f"'{room_of}'"}
    if not rated:
        written["rate_n"] = "NULL"
    if every_queue:
        written["queues"] = "NULL"
    marks = tuple((engine.placeholder(name), sql) for name, sql in written.items())
    return _written_in(query, marks), page


@functools.lru_cache(maxsize=64)
def _written_in(query: str, values: tuple[tuple[str, str], ...]) -> str:
    """``query`` with each of its parameters ``values`` names (as the engine spells them)
    written in as the SQL given."""
    for placeholder, sql in values:
        query = query.replace(placeholder, sql)
    return query


def remember_limits(engine: SqlEngine, limits: Mapping[str, RunningLimit]) -> None:
    """Keep the limits a claim read (each the smallest any runner declared)."""
    _declared.setdefault(engine, {}).update({kind: limit.n for kind, limit in limits.items()})


@attrs.frozen
class ClaimedWithin:
    rows: list[Any]
    """The claimed rows (as ``claim_next_job`` returns them), in claim order."""
    read_all_due: bool
    """The due jobs it read were all there were (None claimed: not known, so False)."""


def checked_rows(
    claim: ClaimWithinLimit,
    limits: Mapping[str, RunningLimit],
    running: Mapping[str, list[Any]],
) -> ClaimedWithin:
    """The claimed rows; StoreError (the batch rolls back) when a runner declared a smaller
    limit since the last claim, and the claim took more than it allows (``running``: the
    kind's running jobs per limit key, counted before the claim). Under a keyed limit the
    claimed jobs' keys are not read: the claim fails if the busiest key could not have
    taken them all; and, the limit raised since, if it took any (going by the lower one,
    it may have passed over a key's job that now comes first). (No runner lowers a rate:
    it is the kind's own.)"""
    read = claim.claimed.fetchall()
    rows = [tuple(row[:-1]) for row in read]  # the last: how many due jobs it read
    claimed = ClaimedWithin(rows, bool(read) and int(read[0][-1]) < claim.page)
    if claim.n is None:  # a rate alone
        return claimed
    n = limits[claim.kind].n
    counts = [int(count) for _, count in running.get(claim.kind, ())]
    before = max(counts, default=0) if claim.keyed else sum(counts)
    if n < claim.n and len(rows) > max(0, n - before):
        raise StoreError("a runner declared a lower limit since the last claim")
    if n > claim.n and claim.keyed and rows:  # may have passed over a key with room now
        raise StoreError("the lowest limit a runner declared was raised since the last claim")
    return claimed
