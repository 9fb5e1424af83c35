"""A fair kind's round as a store keeps it (adapters/sql/fair_round.py): keys in turn
order, each that takes a turn going to the back; a round kept only over an older one (the
batches of one group commit keep theirs in any order)."""

from __future__ import annotations

from typing import Any, cast

from jobtable.adapters.sql.engine import SqlEngine
from jobtable.adapters.sql.fair_order import Turns
from jobtable.adapters.sql.fair_round import Round, _rounds, keep_round


class _Store:
    """Stands for a store's engine: rounds are kept per engine (weakly)."""


def test_keys_that_take_turns_go_to_the_back_in_the_order_they_took_them():
    start = Round("tenant", Turns(7, {"new": None, "a": 3, "b": 5, "c": 7}))
    after = start.after(["a", "new"])
    assert (list(after.turns.of_key), after.last) == (["b", "c", "a", "new"], 9)
    assert (after.turns.of_key["a"], after.turns.of_key["new"]) == (8, 9)
    assert list(start.turns.of_key) == ["new", "a", "b", "c"]  # a round is never changed in place


def test_the_first_listed_keys_in_turn_order_or_none_when_one_is_unknown():
    kept = Round("tenant", Turns(7, {"new": None, "a": 3, "b": 5, "c": 7}))
    assert kept.first(frozenset({"c", "b", "new"}), 2) == ["new", "b"]  # a: not listed now
    assert kept.first(frozenset({"a", "late"}), 2) is None  # late's turn is not known here


def test_a_round_is_kept_only_over_an_older_one():
    store = cast(SqlEngine, cast(Any, _Store()))
    older, newer = Round("tenant", Turns(4, {"a": 4})), Round("tenant", Turns(6, {"a": 6}))
    keep_round(store, newer)
    keep_round(store, older)  # its batch's keep came second: the newer round stays
    assert _rounds[store]["tenant"] is newer


def test_a_round_keeps_only_the_listed_keys_once_it_holds_many_more():
    many = Round("tenant", Turns(300, {f"gone-{n}": n for n in range(200)} | {"a": 250, "b": 300}))
    assert many.within(frozenset({"a", "b", "late"})).turns.of_key == {"a": 250, "b": 300}
    assert many.within(frozenset({"a", "b", "late"})).last == 300
    few = Round("tenant", Turns(3, {"gone": 1, "a": 2, "b": 3}))
    assert few.within(frozenset({"a"})) is few  # a few dry keys stay: no copy each claim
