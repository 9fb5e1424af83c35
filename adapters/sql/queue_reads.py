"""Which way a limited or fair kind's statements read its due jobs: across every queue
at once, or each queue on its own.

Across every queue (``claim_within_limit``, ``claim_fair_heads``, ``pick_limited``,
``fair_priority``, ``fair_heads``, ``fair_unkeyed``, ``limit_heads``): one index range
in claim order (or a key's), each row's queue checked; cheapest, but it reads past the
kind's jobs in a queue that is paused, limited or not served. Each queue on its own (their
``*_by_queue`` forms, ``_kind_queues.sql``): the queues found one seek each, those passed
over left out, the reads merged; what it costs grows with the queues holding the kind's
jobs, never with a passed-over backlog, but planning and merging cost a PostgreSQL claim
0.2 ms more. A store reads each queue on its own while its last limited claim saw a paused
or limited queue (and before any has looked), and for a runner that names 8 queues or
fewer; a queue paused since that look is passed over row by row for one claim.
"""

from __future__ import annotations

import weakref
from collections.abc import Collection
from typing import Any

from jobtable.adapters.sql.engine import SqlEngine

NAMED_QUEUES_APART = 8
"""A runner naming this many queues or fewer has each read on its own (as _pick_next)."""

_passed_over: weakref.WeakKeyDictionary[SqlEngine, bool] = weakref.WeakKeyDictionary()
"""Per store: whether its last limited claim saw a paused or limited queue."""


def remember(engine: SqlEngine, passed_over: list[Any]) -> list[Any]:
    """Keep whether the look found any queue passed over (its rows, a queue's name first:
    one with none is no queue, the lock's own row); return the queues'."""
    queues = [row for row in passed_over if row[0] is not None]
    _passed_over[engine] = bool(queues)
    return queues


def by_queue(engine: SqlEngine, queues: Collection[str] | None) -> bool:
    """Whether a claim of a runner serving ``queues`` (None: every queue) reads each
    queue on its own."""
    named = queues is not None and len(queues) <= NAMED_QUEUES_APART
    return named or _passed_over.get(engine, True)


def read_query(engine: SqlEngine, name: str, *, each_queue: bool) -> str:
    """The query file ``name``, or its ``_by_queue`` form when ``each_queue``."""
    return engine.sql(f"{name}_by_queue" if each_queue else name)
