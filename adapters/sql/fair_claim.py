"""The claim of a runner's one limited kind when it is fair and nothing more, sent with the
kind's lock so that it shares its round trip: one statement takes the oldest due job of
each of the first keys in turn order, by the priority and the keys its store's last claim
listed (fair_order.py), while that priority is still the first with a due job. What it
does not take (a listed key ran dry, the first priority moved) the claim then takes in
fair_order's order.

The claimed rows come back with their keys' last turns and the kind's last turn, so a
claim that took all it wanted reads no other turn and no first priority (on SQLite, where
nothing is saved by sending them ahead, those reads were most of its cost); one that fell
short reads them then (limits.py)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import attrs

from jobtable.adapters.sql.claim_within_limit import sole_limited_kind
from jobtable.adapters.sql.engine import Connection, Cursor, SqlEngine
from jobtable.adapters.sql.fair_order import FAIR_CHUNK, listed_keys, turn_place
from jobtable.adapters.sql.fair_round import Round, checked_round
from jobtable.adapters.sql.queue_reads import read_query
from jobtable.core.batch import Batch


@attrs.frozen
class FairClaim:
    kind: str
    priority: int
    """The priority whose listed keys it took heads of."""
    listed: frozenset[str]
    """The keys listed at that priority (it took heads of the first few in turn order)."""
    round: Round | None
    """The kind's kept round it went by, exact as checked under the lock (fair_round.py);
    None: it sent every listed key for the database to order."""
    claimed: Cursor


def send_fair_claim(
    engine: SqlEngine,
    conn: Connection,
    rules: Batch,
    picking: Mapping[str, Any],
    wanted: int,
    apart: Collection[str],
    *,
    each_queue: bool,
) -> FairClaim | None:
    """Send the claim, when the batch's limited kinds are one fair kind with no limit, no
    rate and no limited queue known, whose keys this store listed less than
    FAIR_KEYS_FRESH ago; send it after the kind's lock."""
    kind = sole_limited_kind(rules, apart, wanted)
    if kind is None or kind not in rules.fair or kind in rules.limits or kind in rules.rates:
        return None
    listed = listed_keys(engine, kind)
    if listed is None or not listed[1]:
        return None
    priority, keys = listed
    chunk = max(2 * wanted, FAIR_CHUNK)  # a few listed keys may have run dry
    kept = checked_round(engine, conn, kind)
    kept = kept.within(keys) if kept is not None else None
    first = kept.first(keys, chunk) if kept is not None else None
    params = {
        **picking,
        "kind": kind,
        "priority": priority,
        "after": -1,  # :priority must be the kind's first of all
        "fair_keys": engine.key_set(keys) if first is None else engine.names(first),
        "chunk": chunk,
        "limit": wanted,
    }
    query = read_query(engine, "claim_fair_heads", each_queue=each_queue)
    went_by = kept if first is not None else None
    return FairClaim(kind, priority, keys, went_by, conn.execute(query, params))


@attrs.frozen
class FairTaken:
    rows: list[Any]
    """The claimed rows (as ``claim_next_job`` returns them), in turn order."""
    keys: list[str | None]
    """Their fair keys, in the same order."""
    last_turn: int | None
    """The kind's last turn before this claim (0: none yet); None when it claimed nothing."""


def claimed_in_turn(claim: FairClaim) -> FairTaken:
    """The claimed rows and their keys in turn order (``turn_place``), by the turns the
    claim read under the lock."""
    rows = claim.claimed.fetchall()
    rows.sort(key=lambda row: turn_place(row[-2], row[-3]))
    last_turn = int(rows[0][-1] or 0) if rows else None
    return FairTaken([tuple(row[:-3]) for row in rows], [row[-3] for row in rows], last_turn)
