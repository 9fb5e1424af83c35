"""A fair kind's round as this store's claims last left it: its keys in turn order and the
kind's last turn, kept so that a claim on an engine whose reads cost no round trip
(SQLite) sends the first few listed keys in turn order rather than every listed key for
the database to order (100 keys: 134 -> 96 µs a claim).

Turns only grow, each claim numbering its own from the kind's last under the kind's lock,
so a kept round is exact while the kind's last turn in the table is still its own (one
seek, read before the claim under the lock). A round is kept only once its claim's batch
has committed, and only over an older one. When another store took turns since, the claim
orders every listed key as before, and the round is read again (every listed key's turn)
at most once per FAIR_KEYS_FRESH: a second store claiming the kind too would undo it
claim after claim.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Sequence

import attrs

from jobtable.adapters.sql import fair_order
from jobtable.adapters.sql.engine import Connection, SqlEngine
from jobtable.adapters.sql.fair_order import FAIR_KEYS_FRESH, Turns, turn_place

ROUND_SLACK = 64
"""Keys a kept round may hold beyond twice those listed before the dry ones leave it."""


@attrs.frozen
class Round:
    """A fair kind's turns (its last, and its keys') with the keys in turn order, the next to
    take a turn first: each key known to the claims that kept the round, not every key the
    kind ever had."""

    kind: str
    turns: Turns

    @property
    def last(self) -> int:
        """The kind's last turn (0: none yet)."""
        return self.turns.last

    def within(self, listed: frozenset[str]) -> Round:
        """This round, or its ``listed`` keys' alone once it holds more than twice as many:
        keys that ran dry leave it (one listed again is read again), so it never grows with
        every key the kind ever had, nor does a claim's work with it."""
        of_key = self.turns.of_key
        if len(of_key) <= 2 * len(listed) + ROUND_SLACK:
            return self
        kept = {key: turn for key, turn in of_key.items() if key in listed}
        return Round(self.kind, Turns(self.last, kept))

    def first(self, listed: frozenset[str], count: int) -> list[str] | None:
        """The first ``count`` of ``listed`` in turn order; None when one of them is not in
        the round (a key listed since: its turn is unknown here)."""
        of_key = self.turns.of_key
        if not listed <= of_key.keys():
            return None
        return list(itertools.islice((key for key in of_key if key in listed), count))

    def after(self, keys: Sequence[str]) -> Round:
        """The round once ``keys`` took their turns, in order: each goes to the back."""
        return Round(self.kind, self.turns.after(keys))


_rounds: weakref.WeakKeyDictionary[SqlEngine, dict[str, Round]] = weakref.WeakKeyDictionary()
"""Per store, per fair kind: its round as the store's last committed claim left it."""

_missed: weakref.WeakKeyDictionary[SqlEngine, dict[str, float]] = weakref.WeakKeyDictionary()
"""Per store, per fair kind: when its kept round was last found out of date."""


def checked_round(engine: SqlEngine, conn: Connection, kind: str) -> Round | None:
    """The kind's kept round, if exact still (its last turn is the table's), read under the
    kind's lock; None when none is kept or another store took turns since."""
    if _rounds.get(engine, {}).get(kind) is None:
        return None
    (last,) = conn.execute(engine.sql("fair_last_turn"), {"kind": kind}).fetchone()
    return kept_round(engine, kind, int(last or 0))


def kept_round(engine: SqlEngine, kind: str, last: int) -> Round | None:
    """The kind's kept round if its last turn is ``last`` (the table's, as a claim read it
    under the kind's lock); else None, the round let go as out of date."""
    kept = _rounds.get(engine, {}).get(kind)
    if kept is None or kept.last == last:
        return kept
    _rounds[engine].pop(kind, None)
    _missed.setdefault(engine, {})[kind] = fair_order._clock()
    return None


def read_round(
    engine: SqlEngine, conn: Connection, kind: str, keys: frozenset[str], last: int
) -> Round | None:
    """The kind's round over ``keys``, read under its lock (``last``: its last turn, as
    read), where a claim may order keys by a kept round and has none; None where it may not,
    or its round was found out of date less than FAIR_KEYS_FRESH ago."""
    if not engine.reads_cost_no_round_trip:
        return None
    missed = _missed.get(engine, {}).get(kind)
    if missed is not None and fair_order._clock() - missed < FAIR_KEYS_FRESH:
        return None
    turns = Turns(last)
    turns.look_up(engine, conn, kind, keys)
    order = sorted(turns.of_key.items(), key=lambda item: turn_place(item[1], item[0]))
    return Round(kind, Turns(last, dict(order)))


def keep_round(engine: SqlEngine, kept: Round) -> None:
    """Keep a round (its claim's batch has committed) unless one kept is as new."""
    rounds = _rounds.setdefault(engine, {})
    known = rounds.get(kept.kind)
    if known is None or known.last < kept.last:
        rounds[kept.kind] = kept
