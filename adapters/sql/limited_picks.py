"""Which of one limited kind's due jobs a claim takes: those that fit its slots, in claim
order, without reading the backlog a key at its limit holds back.

The kind's due jobs are read a page at a time from a position (priority, run_at, id),
never an OFFSET. The first pages are read whole (the first is what is wanted and a few
more), so a claim whose first jobs fit costs one small page. Past them, the keys at their
limit are passed over in the statement. For a keyed
limit (with no rate) the claim then reads the kind's keys instead (one seek each in
the key's index) and the first jobs of each key with room, and takes them in claim
order: the held-back backlog is never read. What that cannot see: more keys than
MAX_KEYS (the claim pages on, passing over the full keys' jobs in the statement), and
jobs with no key (only those written before the limit had its key), which it pages to.
"""

from __future__ import annotations

import datetime
import itertools
import time
import weakref
from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any

from jobtable.adapters.sql.engine import Connection, SqlEngine
from jobtable.adapters.sql.queue_limits import PAGE, Chosen
from jobtable.adapters.sql.queue_reads import read_query
from jobtable.adapters.sql.slots import KindSlots

WHOLE_PAGES = 2
"""Pages a claim reads whole before it passes over full keys: most claims end in the first."""

FIRST_PAGE_MORE = 8
"""Jobs a claim's first page reads beyond those it wants (some may be held back)."""

MAX_KEYS = 2000
"""The most keys whose first jobs a claim reads; with more, the claim pages on instead."""

NO_KEY_LOOK_EVERY = 10.0
"""Seconds a claim that found no job without a key behind the keyed ones waits before it
pages through the backlog for one again (they are rare: written before the limit had its
key); a claim that found one looks again at once. A claim that skips the look says when
the next may look (as a rate's opening), so its runner claims again by then."""

_no_key_seen_none: weakref.WeakKeyDictionary[SqlEngine, dict[tuple[str, str], float]] = (
    weakref.WeakKeyDictionary()
)
"""Per store, when the last look for a kind's jobs without a key, in the queues a claim
served, found none (``_clock``)."""

_clock = time.monotonic

_BEFORE_ALL = (-1, "1970-01-01T00:00:00+00:00", "")
"""A position before every job's: priorities are 0 to 9, so the time is never compared."""


def pick(
    engine: SqlEngine,
    conn: Connection,
    kind: str,
    slots: KindSlots,
    picking: Mapping[str, Any],
    wanted: int,
    first: Iterator[Any],
    each_queue: bool,
    picked: list[Chosen] | None = None,
) -> list[Chosen]:
    """Up to ``wanted`` of the kind's due jobs that fit its slots: those ``first`` yields, in
    its order (a fair kind's turns), then the rest in claim order (``each_queue``: reading
    each queue on its own, queue_reads.py). Each is added to ``picked`` as it is picked
    (``first`` may read it), which is returned."""
    picked = [] if picked is None else picked
    seen: set[str] = set()

    def consider(job_id: str, limit_key: Any, rate_key: Any, fair_key: Any) -> bool:
        """Take the job if it fits; False once nothing more of the kind can."""
        if job_id in seen:
            return True
        seen.add(job_id)
        if slots.take(limit_key, rate_key):
            picked.append((job_id, kind, rate_key, fair_key, None))
            return True
        return not slots.all_full()  # a rate's opening is known from this job

    for job_id, limit_key, rate_key, fair_key in first if not slots.all_full() else ():
        if len(picked) >= wanted or not consider(job_id, limit_key, rate_key, fair_key):
            return picked
    after: tuple[Any, ...] = _BEFORE_ALL
    only_null = False
    of_kind = {"kind": kind, "queues": picking["queues"]}
    page_query = read_query(engine, "pick_limited", each_queue=each_queue)
    for pages in itertools.count():
        if len(picked) >= wanted:
            break
        heads = pages == WHOLE_PAGES and slots.keyed_limit_only()
        left = wanted - len(picked)
        if heads and _take_heads(engine, conn, of_kind, slots, left, consider, each_queue):
            if len(picked) >= wanted or slots.null_full():
                break
            looks_again = _next_look(engine, of_kind)
            if looks_again is not None:  # a look found none lately: the next may look then
                slots.opens_no_later_than(slots.at + datetime.timedelta(seconds=looks_again))
                break
            only_null = True  # every keyed job with room was seen: jobs with no key are left
        # Unkeyed slots all taken: one due job is enough to learn when a rate opens. The
        # first page is what is wanted and a few more: most claims end there.
        first_page = min(PAGE, wanted - len(picked) + FIRST_PAGE_MORE)
        page = 1 if slots.all_full() else first_page if pages == 0 else PAGE
        passing = pages >= WHOLE_PAGES
        params = _page_params(
            engine,
            of_kind,
            page,
            after=after,
            full=slots.full_limit_keys() if passing else (),
            null_full=passing and slots.null_full(),
            only_null=only_null,
        )
        rows = conn.execute(page_query, params).fetchall()
        if only_null and pages == WHOLE_PAGES:  # the first look for jobs without a key
            _remember_look(engine, of_kind, found=bool(rows))
        for job_id, limit_key, rate_key, fair_key, _, _ in rows:
            if not consider(job_id, limit_key, rate_key, fair_key):
                return picked
            if len(picked) >= wanted:
                break
        if len(rows) < page:
            break
        last = rows[-1]
        after = (last[4], last[5], last[0])
    return picked


def any_due_left(
    engine: SqlEngine,
    conn: Connection,
    kind: str,
    picking: Mapping[str, Any],
    picked: list[str],
    each_queue: bool,
) -> bool:
    """Whether the kind has a due job besides those this claim ``picked`` (still queued until
    claimed by id; those claimed at once are running already): one small page read."""
    of_kind = {"kind": kind, "queues": picking["queues"]}
    params = _page_params(engine, of_kind, len(picked) + 1)
    rows = conn.execute(read_query(engine, "pick_limited", each_queue=each_queue), params)
    return any(row[0] not in picked for row in rows.fetchall())


def _page_params(
    engine: SqlEngine,
    of_kind: Mapping[str, Any],
    limit: int,
    *,
    after: tuple[Any, ...] = _BEFORE_ALL,
    full: Collection[str] = (),
    null_full: bool = False,
    only_null: bool = False,
) -> dict[str, Any]:
    """``pick_limited``'s parameters: ``limit`` due jobs of the kind after the position
    ``after``, those of the ``full`` keys (and, ``null_full``, with no key) passed over, or
    (``only_null``) all but those with no key."""
    return {
        **of_kind,
        "limit": limit,
        "after_priority": after[0],
        "after_run_at": after[1],
        "after_id": after[2],
        "full": engine.names(full),
        "null_full": null_full,
        "only_null": only_null,
    }


def _take_heads(
    engine: SqlEngine,
    conn: Connection,
    of_kind: Mapping[str, Any],
    slots: KindSlots,
    wanted: int,
    consider: Callable[[str, Any, Any, Any], bool],
    each_queue: bool,
) -> bool:
    """Take (``consider``), in claim order, up to ``wanted`` more of the first jobs of the
    kind's keys with room; False (nothing read) when it has more than MAX_KEYS keys.

    Each key's first ``depth`` jobs are enough: a key takes at most its limit, the claim
    at most what is still wanted, and the jobs this claim took already (at most its
    limit's running count) are among its first."""
    full = slots.full_limit_keys()
    limit = MAX_KEYS + len(full) + 1
    keys = [key for (key,) in conn.execute(engine.sql("limit_keys"), {**of_kind, "limit": limit})]
    if len(keys) >= limit:
        return False
    with_room = [key for key in keys if key not in full]
    if not with_room:
        return True
    assert slots.limit is not None
    depth = min(slots.limit.n, wanted) + slots.taken
    params = {**of_kind, "limit_keys": engine.names(with_room), "limit": depth}
    taken = 0
    query = read_query(engine, "limit_heads", each_queue=each_queue)
    for job_id, limit_key, rate_key, fair_key in conn.execute(query, params):
        if taken >= wanted:
            break
        before = slots.taken
        consider(job_id, limit_key, rate_key, fair_key)
        taken += slots.taken - before
    return True


def _memo_key(of_kind: Mapping[str, Any]) -> tuple[str, str]:
    return str(of_kind["kind"]), repr(of_kind["queues"])


def _next_look(engine: SqlEngine, of_kind: Mapping[str, Any]) -> float | None:
    """Seconds until a look for the kind's jobs without a key is due again, if one found none
    less than NO_KEY_LOOK_EVERY ago; None when it is due now."""
    last = _no_key_seen_none.get(engine, {}).get(_memo_key(of_kind))
    if last is None:
        return None
    left = NO_KEY_LOOK_EVERY - (_clock() - last)
    return left if left > 0 else None


def _remember_look(engine: SqlEngine, of_kind: Mapping[str, Any], *, found: bool) -> None:
    seen_none = _no_key_seen_none.setdefault(engine, {})
    if found:
        seen_none.pop(_memo_key(of_kind), None)
    else:
        seen_none[_memo_key(of_kind)] = _clock()
