"""How many of a limited kind's first due jobs a claim may take at once, whatever their keys
(adapters/sql/slots.py): up to the room of a limit or a rate without a key, all it wants
when a keyed limit's busiest key has room for them, and none to decide without looking at
each job (a keyed rate, a key with less room than is wanted)."""

from __future__ import annotations

import datetime

import pytest

from jobtable.adapters.sql.slots import KindSlots
from jobtable.core.errors import StoreError
from jobtable.core.limits import RateLimit, RunningLimit

T = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
LIMIT = RunningLimit(n=4, keyed=False)
KEYED = RunningLimit(n=4, keyed=True)
RATE = RateLimit(n=5, per=60.0, keyed=False)
KEYED_RATE = RateLimit(n=5, per=60.0, keyed=True)


def slots(
    limit: RunningLimit | None,
    rate: RateLimit | None,
    *,
    running: dict[str | None, int] | None = None,
    started: int = 0,
) -> KindSlots:
    """A kind's slots as a claim counts them: ``running`` jobs per limit key, ``started`` in
    the rate's window (under no key)."""
    return KindSlots(
        limit,
        rate,
        running=list((running or {}).items()),
        at=T,
        started=[(None, started, T)] if started else [],
    )


@pytest.mark.parametrize(
    ("limit", "rate", "running", "started", "wanted", "at_once"),
    [
        (LIMIT, None, {None: 1}, 0, 8, 3),  # the limit's room
        (None, RATE, {}, 3, 8, 2),  # the rate's room
        (None, RATE, {}, 0, 2, 2),  # all it wants
        (None, RATE, {}, 5, 2, 0),  # spent: a due job left says when it opens
        (None, RateLimit(n=2, per=60.0, keyed=False), {}, 5, 2, 0),  # lowered below it
        (LIMIT, RATE, {None: 1}, 4, 8, 1),  # the lesser room
        (KEYED, None, {"a": 2, "b": 1}, 0, 2, 2),  # the busiest key has room for all
        (KEYED, RATE, {"a": 1}, 2, 8, 3),  # for all the rate leaves
        (KEYED, RATE, {"a": 3}, 0, 2, None),  # not for all: each job's key looked at
        (KEYED, None, {"a": 3}, 0, 2, None),
        (None, KEYED_RATE, {}, 0, 2, None),  # each job's own rate key's window
        (KEYED, KEYED_RATE, {}, 0, 2, None),
        (None, None, {}, 0, 2, None),  # a fair kind alone: its keys take turns
    ],
)
def test_a_claim_takes_at_once_what_every_slot_has_room_for(
    limit, rate, running, started, wanted, at_once
):
    assert slots(limit, rate, running=running, started=started).claimable_at_once(wanted) == (
        at_once
    )


def test_a_rate_claimed_at_once_counts_its_starts_and_refuses_more_than_its_room():
    kind = slots(None, RATE, started=3)
    kind.count_at_once(2)
    assert kind.rate_spent()
    assert kind.claimable_at_once(4) == 0
    with pytest.raises(StoreError):
        slots(None, RATE, started=3).count_at_once(3)
