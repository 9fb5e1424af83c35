"""Claims of limited kinds on the shared SQL body: count what runs and what started, then
claim what fits.

Each limited kind (a concurrency limit, a rate, or both) is locked for the claim's
transaction (PostgreSQL: an advisory lock; SQLite's one writer takes turns already); its
running jobs are counted per limit key, its starts in the rate's window per rate key
(older ones pruned), and its due jobs read in claim order, taking each whose slots are
free, until the batch is full or the kind has no more due jobs (limited_picks.py). Then each
queue an operator limited, under its own lock, likewise (adapters/sql/queue_limits.py).
Each start of a rate-limited job is recorded in the same transaction.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Callable, Collection, Mapping
from typing import Any

import attrs

from jobtable.adapters.sql.claim_within_limit import (
    checked_rows,
    remember_limits,
    send_claim_within_limit,
)
from jobtable.adapters.sql.engine import Connection, SqlEngine
from jobtable.adapters.sql.fair_claim import claimed_in_turn, send_fair_claim
from jobtable.adapters.sql.fair_order import (
    Turns,
    begun,
    fair_order,
    forget_listed,
    send_fair_start,
)
from jobtable.adapters.sql.fair_round import keep_round, kept_round, read_round
from jobtable.adapters.sql.limited_picks import any_due_left, pick
from jobtable.adapters.sql.queue_limits import Chosen, any_due_in, pick_in_queue
from jobtable.adapters.sql.queue_reads import by_queue, remember
from jobtable.adapters.sql.rate_windows import count_starts, look_at_window
from jobtable.adapters.sql.slots import (
    KindSlots,
    QueueSlots,
    count_running,
    declared_limits,
    send_counts,
)
from jobtable.adapters.sql_rows import queue_limits
from jobtable.core.batch import Batch


@attrs.frozen
class LimitedClaim:
    rows: list[Any]
    """The claimed rows (as ``claim_next_job`` returns them), in claim order."""
    opens_at: datetime.datetime | None
    """When a due job a rate held back may start (its window's oldest start leaves it)."""
    limited_queues: frozenset[str] = frozenset()
    """Every queue an operator limits, as read in this claim."""
    kept_once_committed: tuple[Callable[[], None], ...] = ()
    """What this claim read of the rate windows and left of a fair round, each kept (by its
    call) once the batch has committed."""


def claim_limited(
    engine: SqlEngine,
    conn: Connection,
    rules: Batch,
    picking: Mapping[str, Any],
    wanted: int,
    now: datetime.datetime,
    *,
    kinds: Collection[str] | None,
    queues: Collection[str] | None,
) -> LimitedClaim:
    """Claim up to ``wanted`` due jobs of the limited kinds (``rules``) and of the limited
    queues among ``queues``, within their limits and rates, in this transaction; a fair
    kind's keys take turns (adapters/sql/fair_order.py). ``kinds``: every kind served (None: any).

    What needs no result before it is sent first, and read after (on PostgreSQL, one
    round trip): the limited queues, the kinds' locks, then what is counted under them."""
    rates, fair = rules.rates, rules.fair
    each_queue = by_queue(engine, queues)  # as the last claim saw the queues; this one looks
    apart = sorted(rules.kinds_apart)  # locked in one order by every runner (kinds, then
    # queues): no two wait for each other; after the look at the queues passed over (the
    # limited ones, claimed apart)
    look = engine.look_then_lock(conn, apart)  # rows for ``remember``
    counting = send_counts(engine, conn, apart, rules.limits)
    within_limit = send_claim_within_limit(
        engine, conn, rules, picking, wanted, apart, now, each_queue=each_queue
    )
    looks = {kind: look_at_window(engine, conn, kind, rates[kind], now) for kind in sorted(rates)}
    fair_claim = send_fair_claim(engine, conn, rules, picking, wanted, apart, each_queue=each_queue)
    fair_starts = {  # the fair claim's own kind reads them only if it falls short
        kind: send_fair_start(engine, conn, kind, picking, each_queue)
        for kind in sorted(fair)
        if fair_claim is None or kind != fair_claim.kind
    }
    passed_over = remember(engine, look.fetchall())  # what was sent so far comes back
    read = queue_limits(row for row in passed_over if row[1] is not None or row[2] is not None)
    running, declared = counting.read()
    fair_begun = {kind: begun(start) for kind, start in fair_starts.items()}
    last_turns = {kind: turns.last for kind, (turns, _) in fair_begun.items()}
    rounds = {  # each fair kind's kept round, exact (its last turn is the one read): kept on
        kind: kept for kind in fair_begun if (kept := kept_round(engine, kind, last_turns[kind]))
    }
    limited = {name: limit for name, limit in read.items() if queues is None or name in queues}
    for name in sorted(limited):
        engine.lock_limited(conn, "lock_limited_queue", {"queue": name})
    if rules.clock is not None:  # read now that the locks are held: a rate's stamps are fresh
        now = max(now, rules.clock())
    limits = declared_limits(rules.limits, declared)
    remember_limits(engine, limits)
    within = checked_rows(within_limit, limits, running) if within_limit else None
    kind_slots: dict[str, KindSlots] = {}

    def slots_of(kind: str) -> KindSlots:
        if kind not in kind_slots:
            rate = rates.get(kind)
            at, started = (
                count_starts(engine, conn, kind, rate, now, looks[kind]) if rate else (now, [])
            )
            kind_slots[kind] = KindSlots(
                limits.get(kind), rate, running=running.get(kind, ()), at=at, started=started
            )
        return kind_slots[kind]

    chosen: list[Chosen] = []
    openings: list[datetime.datetime] = []
    direct: dict[str, Any] = {}  # claimed as they were picked
    reached: list[str] = []  # the kinds the claim came to with room left
    for kind in apart:
        if len(chosen) >= wanted:
            break
        reached.append(kind)
        slots = slots_of(kind)
        if within_limit is not None and within is not None and kind == within_limit.kind:
            left = wanted - len(chosen)
            _take_at_once(kind, slots, within.rows, chosen, direct)  # with the lock
            read_n = within_limit.n  # the limit it went by: else raised since, claim on
            limit_as_read = read_n is not None and limits[kind].n <= read_n
            if len(within.rows) >= left:
                continue  # all it wanted
            # a limit without a key and a rate: both have room, the rate by the clock read
            # since the statement counted it (a start may have left the window)
            room_since = within_limit.rated and not slots.rate_spent() and slots.fits(None, None)
            if slots.rate_spent():
                pass  # a due job left (one read, below) says when the window opens
            elif within_limit.keyed and within.read_all_due and limit_as_read:
                continue  # the due jobs it did not take are held back by their keys
            elif within_limit.keyed and within.rows:  # their keys unread: count them again
                slots.recount(count_running(engine, conn, kind).fetchall())
            elif within_limit.room_of == "limit" and limit_as_read and not room_since:
                continue  # the limit's room taken, or no more due
            # fewer than wanted while the window, as read since, has room (a rate, with or
            # without a limit that has room too); keyed: more may be due past the jobs it
            # read; so pick on
        taking = None if kind in fair else slots.claimable_at_once(wanted - len(chosen))
        if taking is not None:  # its first due jobs fit, whatever their keys: claimed at once
            params = {**picking, "kinds": engine.names([kind]), "limit": taking}
            rows = conn.execute(engine.sql("claim_next_job"), params).fetchall() if taking else []
            _take_at_once(kind, slots, rows, chosen, direct)
            continue
        turns, first_priority = fair_begun.get(kind, (Turns(0), None))
        if fair_claim is not None and kind == fair_claim.kind:  # with the lock: keys' heads
            taken = claimed_in_turn(fair_claim)
            before = fair_claim.round
            if before is None and taken.last_turn is not None:  # before any turn is taken
                before = read_round(engine, conn, kind, fair_claim.listed, taken.last_turn)
            if before is not None:
                rounds[kind] = before
            _take_at_once(kind, slots, taken.rows, chosen, direct, taken.keys)
            if len(chosen) >= wanted:
                last_turns[kind] = taken.last_turn or 0
                continue
            forget_listed(engine, kind, fair_claim.priority)  # some listed keys ran dry
            started = send_fair_start(engine, conn, kind, picking, each_queue)
            turns, first_priority = begun(started)
            last_turns[kind] = turns.last
            turns = turns.after(taken.keys)  # what more it takes: turns after these
        of_kind: list[Chosen] = []  # as they are picked: a fair kind's keys take turns on
        candidates = (
            fair_order(engine, conn, kind, picking, turns, first_priority, each_queue, of_kind)
            if kind in fair
            else iter(())
        )
        left = wanted - len(chosen)
        chosen += pick(engine, conn, kind, slots, picking, left, candidates, each_queue, of_kind)
    queue_stamps: dict[str, Any] = {}
    ruled = {kind for kind in apart if kind in limits or kind in rates}
    for name in sorted(limited):
        if len(chosen) >= wanted:
            break
        queue = QueueSlots(engine, conn, name, limited[name], now)
        queue_stamps[name] = engine.stamp(queue.at)
        chosen += pick_in_queue(
            engine, conn, queue, kinds, wanted - len(chosen), lambda kind: (
                slots_of(kind) if kind in ruled else None
            )
        )  # fmt: skip
        if queue.opens_at is not None:
            openings.append(queue.opens_at)
    for kind in reached:  # a rate this claim spent: when it opens, if a job is left for it
        slots = kind_slots[kind]  # (in a limited queue too, whose claim passed the kind over)
        if slots.rate_spent() and slots.opens_at is None:
            ids = [job_id for job_id, of, *_ in chosen if of == kind and job_id not in direct]
            if any_due_left(engine, conn, kind, picking, ids, each_queue) or any_due_in(
                engine, conn, kind, limited, ids
            ):
                slots.note_rate_opening()
    openings += [slots.opens_at for slots in kind_slots.values() if slots.opens_at is not None]
    claimed_rows = dict(direct)
    picked = [job_id for job_id, *_ in chosen if job_id not in direct]
    if picked:
        params = {**picking, "ids": engine.names(picked)}
        for row in conn.execute(engine.sql("claim_jobs_by_id"), params).fetchall():
            claimed_rows[row[0]] = row  # none whose cancel came since the pick
    claimed = [job for job in chosen if job[0] in claimed_rows]
    _record_turns_and_starts(engine, conn, claimed, rules, kind_slots, queue_stamps, last_turns)
    rows = [claimed_rows[job_id] for job_id, *_ in claimed]
    keep = [looks[kind].keep for kind in sorted(looks) if kind in kind_slots]
    for kind, before in sorted(rounds.items()):  # with the turns this claim took, as recorded
        took = [key for _, of, _, key, _ in claimed if of == kind and key is not None]
        keep.append(functools.partial(keep_round, engine, before.after(took)))
    return LimitedClaim(
        rows=rows,
        opens_at=min(openings) if openings else None,
        limited_queues=frozenset(read),
        kept_once_committed=tuple(keep),
    )


def _take_at_once(
    kind: str,
    slots: KindSlots,
    rows: list[Any],
    chosen: list[Chosen],
    direct: dict[str, Any],
    fair_keys: list[str | None] | None = None,
) -> None:
    """Count the kind's jobs claimed at once (``rows``; a fair kind's with their
    ``fair_keys``) in its slots and with the claim's."""
    slots.count_at_once(len(rows))
    keys: list[str | None] = [None] * len(rows) if fair_keys is None else fair_keys
    for row, fair_key in zip(rows, keys, strict=True):
        direct[row[0]] = row
        chosen.append((row[0], kind, None, fair_key, None))


def _record_turns_and_starts(
    engine: SqlEngine,
    conn: Connection,
    claimed: list[Chosen],
    rules: Batch,
    kind_slots: Mapping[str, KindSlots],
    queue_stamps: Mapping[str, Any],
    last_turns: Mapping[str, int],
) -> None:
    """Record each claimed job's start where a rate counts it (its kind's, its queue's) and
    its fair key's turn (numbered on from ``last_turns``, each fair kind's last as read
    under its lock): one statement each, sent together, no result read."""
    starts, queue_starts, turns = [], [], []
    turn: dict[str, int] = {}
    stamps = {kind: engine.stamp(slots.at) for kind, slots in kind_slots.items() if slots.rate}
    for job_id, kind, _, fair_key, rated_queue in claimed:
        if kind in rules.rates:  # under the job's own rate key, whatever the claim read
            starts.append({"id": job_id, "now": stamps[kind]})
        if rated_queue is not None:
            queue_starts.append({"queue": rated_queue, "now": queue_stamps[rated_queue]})
        if kind in rules.fair and fair_key is not None:
            turn[kind] = turn.get(kind, last_turns[kind]) + 1
            turns.append({"kind": kind, "fair_key": fair_key, "turn": turn[kind]})
    for query, params in (
        ("record_job_start", starts),
        ("record_queue_start", queue_starts),
        ("take_fair_turn", turns),
    ):
        if params:
            conn.cursor().executemany(engine.sql(query), params)
