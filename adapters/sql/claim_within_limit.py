"""The claim of a runner's one limited kind under a concurrency limit alone, sent with the
kind's lock so that it shares its round trip: one statement counts the kind's running
jobs and claims what fits (without a key: up to the room; with one: all it wants, if the
busiest key has room for them all, else none), by the smallest limit this store last read
any runner declare for it. Should a runner have declared a smaller one since, and the
claim taken more than that allows, the batch fails and rolls back, and the next claims by
it."""

from __future__ import annotations

import weakref
from collections.abc import Collection, Mapping
from typing import Any

import attrs

from jobtable.adapters.sql.engine import Connection, Cursor, SqlEngine
from jobtable.core.batch import Batch
from jobtable.core.errors import StoreError
from jobtable.core.limits import RunningLimit

_declared: weakref.WeakKeyDictionary[SqlEngine, dict[str, int]] = weakref.WeakKeyDictionary()
"""Per store, each limited kind's limit as its last claim read it (the smallest declared)."""


@attrs.frozen
class ClaimWithinLimit:
    kind: str
    n: int
    """The limit the claim went by."""
    keyed: bool
    claimed: Cursor


def send_claim_within_limit(
    engine: SqlEngine,
    conn: Connection,
    rules: Batch,
    picking: Mapping[str, Any],
    wanted: int,
    apart: Collection[str],
) -> ClaimWithinLimit | None:
    """Send the claim, when the batch's limited kinds are one kind under a concurrency limit
    (no rate, not fair, no limited queue known) that a claim read before; send it after the
    kind's lock and its running count."""
    if len(apart) != 1 or rules.limited_queues:
        return None
    (kind,) = apart
    limit = rules.limits.get(kind)
    if limit is None or kind in rules.rates or kind in rules.fair:
        return None
    known = _declared.get(engine, {}).get(kind)
    if known is None:
        return None
    n = min(limit.n, known)
    params = {**picking, "kind": kind, "n": n, "limit": wanted, "keyed": limit.keyed}
    claimed = conn.execute(engine.sql("claim_within_limit"), params)
    return ClaimWithinLimit(kind, n, limit.keyed, claimed)


def remember_limits(engine: SqlEngine, limits: Mapping[str, RunningLimit]) -> None:
    """Keep the limits a claim read (each the smallest any runner declared)."""
    _declared.setdefault(engine, {}).update({kind: limit.n for kind, limit in limits.items()})


def checked_rows(
    claim: ClaimWithinLimit,
    limits: Mapping[str, RunningLimit],
    running: Mapping[str, list[Any]],
) -> list[Any]:
    """The claimed rows; StoreError (the batch rolls back) when a runner declared a smaller
    limit since the last claim, and the claim took more than it allows (``running``: the
    kind's running jobs per limit key, counted before the claim). Under a keyed limit the
    claimed jobs' keys are not read: the claim fails if the busiest key could not have
    taken them all."""
    rows = claim.claimed.fetchall()
    n = limits[claim.kind].n
    counts = [int(count) for _, count in running.get(claim.kind, ())]
    before = max(counts, default=0) if claim.keyed else sum(counts)
    if n < claim.n and len(rows) > max(0, n - before):
        raise StoreError("a runner declared a lower limit since the last claim")
    return rows
