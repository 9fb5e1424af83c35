"""A store's rate window (adapters/sql/rate_windows.py) counts each start once, whatever
order claims keep what they read in, and counts a claim's unkept reads with it."""

from __future__ import annotations

import datetime

from jobtable.adapters.sql.rate_windows import _Window

T = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def at(seconds: float) -> datetime.datetime:
    return T + datetime.timedelta(seconds=seconds)


def counted(window: _Window, rows, now: float):
    stamp, started = window.count(rows, at(now))
    return stamp, {key: (count, oldest) for key, count, oldest in started}


def test_two_claims_that_read_from_one_stamp_keep_each_start_once_in_either_order():
    first = [(None, at(0)), (None, at(0)), (None, at(1))]
    second = [*first, (None, at(2))]  # read from the same stamp, after the first committed
    for order in ((first, second), (second, first)):
        window = _Window(per=60)
        for rows in order:
            window.keep(rows)
        assert counted(window, [], 3) == (at(3), {None: (4, at(0))})


def test_starts_at_the_latest_stamp_are_told_apart_by_their_count_per_key():
    window = _Window(per=60)
    window.keep([("a", at(5)), ("b", at(5))])
    again = [("a", at(5)), ("a", at(5)), ("b", at(5))]  # one more of a's at that stamp
    assert counted(window, again, 6) == (at(6), {"a": (2, at(5)), "b": (1, at(5))})
    window.keep(again)
    assert counted(window, [], 6)[1] == {"a": (2, at(5)), "b": (1, at(5))}


def test_a_claim_counts_what_it_read_before_it_is_kept_and_stamps_no_earlier_than_it():
    window = _Window(per=10)
    window.keep([(None, at(0))])
    read = [(None, at(0)), (None, at(20))]  # another clock ran ahead
    assert counted(window, read, 15) == (at(20), {None: (1, at(20))})  # 0 left the window
    assert counted(window, [], 15) == (at(15), {})  # nothing kept: the read was not


def test_stamps_a_lagging_claim_may_still_count_are_kept_a_margin_past_the_window():
    window = _Window(per=10)
    window.keep([(None, at(0)), (None, at(1))])
    assert counted(window, [], 50)[1] == {}  # out of this claim's window
    assert counted(window, [], 5)[1] == {None: (2, at(0))}  # 45 s behind: within the margin
    assert counted(window, [], 200)[1] == {}
    assert counted(window, [], 5)[1] == {}  # 195 s behind: let go, as the table prunes them
