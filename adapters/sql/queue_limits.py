"""Claims from a limited queue: its due jobs, of every kind the runner serves, in claim
order (each kind's read from its claim index a page at a time, merged), taken while the
queue's slots (and their kinds') allow."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Collection, Iterator
from typing import Any

from jobtable.adapters.sql.engine import Connection, SqlEngine
from jobtable.adapters.sql.slots import KindSlots, QueueSlots

PAGE = 200
"""Due jobs read at a time (of a kind, or of a kind in a queue) while looking for free slots."""

Chosen = tuple[str, str, str | None, str | None, str | None]
"""A job picked: its id, kind, rate key, fair key, and its queue when that has a rate."""


def pick_in_queue(
    engine: SqlEngine,
    conn: Connection,
    queue: QueueSlots,
    kinds: Collection[str] | None,
    wanted: int,
    slots_of: Callable[[str], KindSlots | None],
) -> list[Chosen]:
    """Up to ``wanted`` of a limited queue's due jobs (of ``kinds``; None: any) that fit its
    slots and their kind's, in claim order across the kinds."""
    if not queue.fits():
        if queue.opens_at is not None and next(_queue_due(engine, conn, queue.name, kinds), None):
            return []  # a rate holds back a due job: the runner looks again when it opens
        queue.opens_at = None
        return []
    picked: list[Chosen] = []
    rated = queue.name if queue.limit.rate is not None else None
    for job_id, limit_key, rate_key, fair_key, kind, *_ in _queue_due(
        engine, conn, queue.name, kinds, skip=lambda kind: _all_full(slots_of(kind))
    ):
        slots = slots_of(kind)
        if slots is not None and not slots.fits(limit_key, rate_key):
            continue
        if not queue.fits():
            break
        queue.count()
        if slots is not None:
            slots.count(limit_key, rate_key)
        picked.append((job_id, kind, rate_key, fair_key, rated))
        if len(picked) >= wanted:
            break
    return picked


def any_due_in(
    engine: SqlEngine, conn: Connection, kind: str, queues: Collection[str], picked: list[str]
) -> bool:
    """Whether the kind has a due job in one of the limited ``queues`` besides those this
    claim ``picked``: a small page read a queue, until one has."""
    params = {"kind": kind, "limit": len(picked) + 1, "offset": 0}
    sql = engine.sql("pick_in_queue")
    return any(
        row[0] not in picked
        for name in sorted(queues)
        for row in conn.execute(sql, {**params, "queue": name}).fetchall()
    )


def _all_full(slots: KindSlots | None) -> bool:
    return slots is not None and slots.all_full()


def _queue_due(
    engine: SqlEngine,
    conn: Connection,
    name: str,
    kinds: Collection[str] | None,
    skip: Callable[[str], bool] = lambda kind: False,
) -> Iterator[Any]:
    """A limited queue's due jobs in claim order: each kind's read a page at a time from its
    claim index, merged (the kinds ``skip`` names are passed over)."""

    def pages(sql: str, params: dict[str, Any]) -> Iterator[Any]:
        for offset in itertools.count(0, PAGE):
            rows = conn.execute(sql, {**params, "limit": PAGE, "offset": offset}).fetchall()
            yield from rows
            if len(rows) < PAGE:
                return

    if kinds is None:
        yield from pages(engine.sql("pick_in_queue_any"), {"queue": name})
        return
    sql = engine.sql("pick_in_queue")
    each = [pages(sql, {"queue": name, "kind": kind}) for kind in sorted(kinds) if not skip(kind)]
    yield from heapq.merge(*each, key=lambda row: (row[5], row[6], row[0]))
