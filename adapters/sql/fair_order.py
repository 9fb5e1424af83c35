"""A fair kind's claim order: within a priority its keys take turns, round robin (the key
whose last turn is oldest, or never came, first), each key's oldest job first, then the
jobs with no key.

Listing a kind's keys costs an index seek per key, so a store's claims reuse the list
for FAIR_KEYS_FRESH seconds. A key that appears meanwhile joins the round when the list
is read again: then, or as soon as the listed keys have no due job left to give.

Turns are read for the keys a claim puts in order (a seek each) and the kind's last by one
seek: jobtable_fair_turns keeps a row for every key the kind ever had.
"""

from __future__ import annotations

import itertools
import time
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from jobtable.adapters.sql.engine import Connection, Cursor, SqlEngine
from jobtable.adapters.sql.queue_limits import PAGE, Chosen
from jobtable.adapters.sql.queue_reads import read_query

FAIR_DEPTH = 4
"""A fair key's jobs read at a time as its turns come round."""

FAIR_CHUNK = 8
"""Fair keys whose jobs one statement reads (a claim rarely needs more than the first few)."""

FAIR_KEYS_FRESH = 1.0
"""Seconds a fair kind's keys, as one claim listed them, serve the store's later claims."""

_listed: weakref.WeakKeyDictionary[
    SqlEngine, dict[tuple[str, int], tuple[float, frozenset[str]]]
] = weakref.WeakKeyDictionary()
"""Per store, per fair kind and priority: when its keys were listed (``_clock``), and those
of them that still had due jobs when last read."""

_first: weakref.WeakKeyDictionary[SqlEngine, dict[str, int]] = weakref.WeakKeyDictionary()
"""Per store, per fair kind: the first priority with a due job, as its last claim found it."""

_clock = time.monotonic


@attrs.define
class Turns:
    """A fair kind's turns as one claim reads them under the kind's lock: the kind's last,
    and the last of each key it looked up (only the keys a claim puts in order: the table
    keeps a row for every key the kind ever had)."""

    last: int
    """The kind's last turn (0: none yet)."""
    of_key: dict[str, int | None] = attrs.Factory(dict)
    """Each looked-up key's last turn (None: it never had one)."""

    def look_up(self, engine: SqlEngine, conn: Connection, kind: str, keys: Iterable[str]) -> None:
        """Read the last turns of those of ``keys`` not looked up yet (one statement)."""
        unread = frozenset(keys).difference(self.of_key)
        if not unread:
            return
        params = {"kind": kind, "fair_keys": engine.key_set(unread)}
        self.take(unread, conn.execute(engine.sql("fair_turns"), params).fetchall())

    def take(self, keys: Iterable[str], rows: Iterable[tuple[str, Any]]) -> None:
        """Keep ``keys`` as looked up: each row's turn, no turn for the others."""
        self.of_key.update(dict.fromkeys(keys))
        self.of_key.update((key, int(turn)) for key, turn in rows)

    def place(self, key: str) -> tuple[bool, int, str]:
        """The key's place in the round (``turn_place``), as looked up."""
        return turn_place(self.of_key.get(key), key)

    def after(self, keys: Sequence[str | None]) -> Turns:
        """These turns once ``keys`` had theirs, in order: each goes to the back (of
        ``of_key``'s order too)."""
        of_key, last = dict(self.of_key), self.last
        for key in keys:
            last += 1
            if key is not None:
                of_key.pop(key, None)
                of_key[key] = last
        return Turns(last, of_key)


@attrs.frozen
class FairStart:
    """What ``send_fair_start`` sent: the kind's last turn, its first priority with a due
    job, and the turns of the keys its store listed last (if fresh), read ahead."""

    last: Cursor
    first: Cursor
    listed: frozenset[str] = frozenset()
    turns: Cursor | None = None


def send_fair_start(
    engine: SqlEngine, conn: Connection, kind: str, picking: Mapping[str, Any], each_queue: bool
) -> FairStart:
    """A fair kind's last turn, its first priority with a due job, and the turns of the keys
    this store listed for it less than FAIR_KEYS_FRESH ago (those a claim orders, most
    likely: sent with the rest, not looked up on their own), sent (``begun`` reads them;
    ``each_queue``: reading each queue on its own, queue_reads.py)."""
    params = {"kind": kind, "queues": picking["queues"], "after": -1}
    last = conn.execute(engine.sql("fair_last_turn"), {"kind": kind})
    first = conn.execute(read_query(engine, "fair_priority", each_queue=each_queue), params)
    listed = listed_keys(engine, kind)
    if listed is None or not listed[1]:
        return FairStart(last, first)
    keys = {"kind": kind, "fair_keys": engine.key_set(listed[1])}
    return FairStart(last, first, listed[1], conn.execute(engine.sql("fair_turns"), keys))


def begun(start: FairStart) -> tuple[Turns, Any]:
    """A fair kind's turns (its last, and the listed keys' if sent) and first priority with a
    due job, as ``send_fair_start`` sent them."""
    turns = Turns(int(start.last.fetchone()[0] or 0))
    turns.take(start.listed, start.turns.fetchall() if start.turns is not None else ())
    return turns, start.first.fetchone()[0]


def fair_order(
    engine: SqlEngine,
    conn: Connection,
    kind: str,
    picking: Mapping[str, Any],
    turns: Turns,
    first_priority: Any,
    each_queue: bool,
    picked: Sequence[Chosen] = (),
) -> Iterator[Any]:
    """A fair kind's due jobs in claim order, priority by priority, each key's read as its
    turns come round, a few at a time. ``turns`` and ``first_priority``: what
    ``send_fair_start`` sent, read (``begun``); the keys' turns are looked up as listed.
    ``picked``: the jobs picked of those yielded, as they are: the turns their keys took
    count at the next priority."""
    params = {"kind": kind, "queues": picking["queues"]}
    heads_sql, unkeyed_sql, first_sql = (
        read_query(engine, name, each_queue=each_queue)
        for name in ("fair_heads", "fair_unkeyed", "fair_priority")
    )
    found = first_priority
    if found is not None:
        _first.setdefault(engine, {})[kind] = int(found)
    counted = 0  # of ``picked``, whose turns ``turns`` has
    while found is not None:
        priority = int(found)
        turns = turns.after([key for *_, key, _ in picked[counted:] if key is not None])
        counted = len(picked)
        keys, listed_now = _keys(engine, conn, kind, priority, fresh=False)
        taken: set[str] = set()
        while True:
            turns.look_up(engine, conn, kind, keys - taken)
            round_robin = sorted(keys - taken, key=turns.place)
            taken.update(round_robin)
            yield from _turns(engine, conn, heads_sql, params, priority, round_robin)
            if listed_now:
                break
            keys, listed_now = _keys(engine, conn, kind, priority, fresh=True)  # any new key?
        for offset in itertools.count(0, PAGE):  # then this priority's jobs with no key
            unkeyed = conn.execute(
                unkeyed_sql, {**params, "priority": priority, "limit": PAGE, "offset": offset}
            ).fetchall()
            yield from unkeyed
            if len(unkeyed) < PAGE:
                break
        (found,) = conn.execute(first_sql, {**params, "after": priority}).fetchone()


def turn_place(last_turn: Any, key: str) -> tuple[bool, int, str]:
    """A fair key's place in the round by its last turn (None: it never had one): a key that
    never had a turn first, then the one whose last turn is oldest."""
    return (last_turn is not None, int(last_turn or 0), key)


def listed_keys(engine: SqlEngine, kind: str) -> tuple[int, frozenset[str]] | None:
    """The first priority with a due job as this store's last claim of the kind found it, and
    that priority's keys while their list is fresh; None when there is none to go by."""
    priority = _first.get(engine, {}).get(kind)
    kept = None if priority is None else _listed.get(engine, {}).get((kind, priority))
    if priority is None or kept is None or _clock() - kept[0] >= FAIR_KEYS_FRESH:
        return None
    return priority, kept[1]


def _keys(
    engine: SqlEngine, conn: Connection, kind: str, priority: int, *, fresh: bool
) -> tuple[frozenset[str], bool]:
    """The kind's keys with due jobs at ``priority``, as listed less than FAIR_KEYS_FRESH
    ago unless ``fresh``; and whether they were listed now."""
    listed = _listed.setdefault(engine, {})
    kept = listed.get((kind, priority))
    if not fresh and kept is not None and _clock() - kept[0] < FAIR_KEYS_FRESH:
        return kept[1], False
    params = {"kind": kind, "priority": priority}
    keys = frozenset(key for (key,) in conn.execute(engine.sql("fair_keys"), params))
    listed[(kind, priority)] = (_clock(), keys)
    return keys, True


def forget_listed(engine: SqlEngine, kind: str, priority: int) -> None:
    """Drop the kind's kept key list at ``priority``: a claim by it fell short, so some listed
    keys ran dry; the next claim lists them again rather than reuse the list stale."""
    _listed.get(engine, {}).pop((kind, priority), None)


def forget_lists(engine: SqlEngine) -> None:
    """Drop every key list the store kept: a batch failed, and what its claims listed or
    found dry (in its transaction) may not be so once it rolled back."""
    _listed.pop(engine, None)


def _forget(engine: SqlEngine, kind: str, priority: int, empty: set[str]) -> None:
    """Keys found with no due job leave the kept list (until it is listed again)."""
    listed = _listed.get(engine, {})
    kept = listed.get((kind, priority))
    if kept is not None:
        listed[(kind, priority)] = (kept[0], kept[1] - empty)


def _turns(
    engine: SqlEngine,
    conn: Connection,
    heads_sql: str,
    params: Mapping[str, Any],
    priority: int,
    keys: list[str],
) -> Iterator[Any]:
    """The due jobs of ``keys`` (in turn order) at ``priority``, each key's turn in order,
    round after round, reading a few of each key's jobs at a time."""
    heads: dict[str, list[Any]] = {key: [] for key in keys}
    for depth in itertools.count():
        more = False
        for start in range(0, len(keys), FAIR_CHUNK):
            chunk = keys[start : start + FAIR_CHUNK]
            due = [key for key in chunk if depth % FAIR_DEPTH == 0 and len(heads[key]) == depth]
            if due:  # their turns reached the end of what was read: read a few more each
                rows = conn.execute(
                    heads_sql,
                    {**params, "priority": priority, "fair_keys": engine.names(due),
                     "limit": FAIR_DEPTH, "offset": depth},
                ).fetchall()  # fmt: skip
                for row in rows:
                    heads[row[3]].append(row)
                if depth == 0:
                    _forget(engine, params["kind"], priority, {k for k in due if not heads[k]})
            for key in chunk:
                if depth < len(heads[key]):
                    more = True
                    yield heads[key][depth]
        if not more:
            break
