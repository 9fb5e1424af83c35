"""The liveness rules as pure functions: when a runner is certainly dead, when it may claim."""

from __future__ import annotations

import pytest

from jobtable.core.liveness import (
    DeadRunner,
    DeathJudge,
    LivenessTerms,
    LockState,
    OwnLiveness,
    RunnerSighting,
)

HELD, ABSENT, UNKNOWN = LockState.HELD, LockState.ABSENT, LockState.UNKNOWN


def seen(lock: LockState, beat: int | None = 7, *, runner: str | None = "r", registered=True):
    return RunnerSighting(runner_id=runner, registered=registered, beat=beat, lock=lock)


def test_an_absent_lock_is_death_only_once_watched_for_two_sweeps_with_a_still_beat():
    judge = DeathJudge(LivenessTerms(), interval=0.5)
    assert judge.judge([seen(ABSENT)], at=0.0) == []
    assert judge.judge([seen(ABSENT)], at=0.5) == []
    assert judge.judge([seen(ABSENT)], at=0.9) == []  # too soon after the first
    assert judge.judge([seen(ABSENT)], at=1.0) == [
        DeadRunner(runner_id="r", registered=True, beat=7, lock_absent=True)
    ]


def test_a_live_owner_beating_slower_than_the_observer_sweeps_is_not_judged_dead():
    """The owner's beat period is its sweep plus the sweep's own length: the window covers it."""
    judge = DeathJudge(LivenessTerms(), interval=0.5)
    beats = {0.0: 1, 0.45: 1, 0.9: 2, 1.35: 2, 1.8: 3, 2.25: 3, 2.7: 4}  # a beat each 0.9 s
    assert all(judge.judge([seen(ABSENT, beat=b)], at=at) == [] for at, b in beats.items())


def test_a_slow_sweep_cannot_make_two_sightings_look_further_apart_than_they_were():
    judge = DeathJudge(LivenessTerms(), interval=0.5)
    judge.judge([seen(ABSENT)], at=0.0, returned_at=0.8)  # its query took 0.8 s
    assert judge.judge([seen(ABSENT)], at=1.0, returned_at=1.01) == []  # only 0.2 s apart
    assert judge.judge([seen(ABSENT)], at=1.8) != []


def test_a_beat_between_two_sweeps_clears_an_absent_lock():
    judge = DeathJudge(LivenessTerms(), interval=0.5)
    judge.judge([seen(ABSENT, beat=7)], at=0.0)
    judge.judge([seen(ABSENT, beat=7)], at=0.5)
    assert judge.judge([seen(ABSENT, beat=8)], at=1.0) == []  # alive: it beat meanwhile
    assert judge.judge([seen(ABSENT, beat=8)], at=1.5) == []
    assert judge.judge([seen(ABSENT, beat=8)], at=2.0) != []


def test_a_lock_taken_again_between_two_sweeps_clears_the_suspicion():
    judge = DeathJudge(LivenessTerms(), interval=0.5)
    judge.judge([seen(ABSENT)], at=0.0)
    assert judge.judge([seen(HELD)], at=0.5) == []
    assert judge.judge([seen(ABSENT)], at=1.0) == []  # a new suspicion starts over
    assert judge.judge([seen(ABSENT)], at=1.5) == []
    assert judge.judge([seen(ABSENT)], at=2.0) != []


def test_a_held_or_unknown_lock_is_never_death_without_a_lease():
    judge = DeathJudge(LivenessTerms(), interval=0.5)
    for step in range(100):
        assert judge.judge([seen(HELD), seen(UNKNOWN, runner="u")], at=step * 0.5) == []


def test_with_a_lease_a_beat_that_stops_for_the_lease_is_death_whatever_the_lock():
    judge = DeathJudge(LivenessTerms(lease=10.0), interval=0.5)
    for step in range(20):
        assert judge.judge([seen(UNKNOWN)], at=step * 0.5) == []  # up to 9.5 s
    assert judge.judge([seen(UNKNOWN)], at=10.0) == [
        DeadRunner(runner_id="r", registered=True, beat=7, lock_absent=False)
    ]


def test_a_lease_counts_from_when_this_observer_first_saw_the_beat():
    judge = DeathJudge(LivenessTerms(lease=10.0), interval=0.5)
    verdicts = {}
    for step in range(40):
        at = step * 0.5
        verdicts[at] = judge.judge([seen(HELD, beat=1 if at < 8 else 2)], at=at)
    assert [at for at, dead in verdicts.items() if dead] == [18.0, 18.5, 19.0, 19.5]


def test_an_observer_that_could_not_watch_starts_over():
    """Silence it could not see is no evidence: after its own outage it needs two sweeps again."""
    judge = DeathJudge(LivenessTerms(lease=10.0), interval=0.5)
    judge.judge([seen(ABSENT)], at=0.0)
    assert judge.judge([seen(ABSENT)], at=30.0) == []  # neither fast nor lease: it starts over
    assert judge.judge([seen(ABSENT)], at=30.5) == []
    assert judge.judge([seen(ABSENT)], at=31.0) != []


def test_an_owner_with_no_row_is_dead_after_two_sweeps_unless_its_lock_is_held():
    judge = DeathJudge(LivenessTerms(), interval=0.5)
    gone = seen(UNKNOWN, beat=None, runner="gone", registered=False)
    locked = seen(HELD, beat=None, runner="locked", registered=False)
    legacy = seen(ABSENT, beat=None, runner=None, registered=False)
    assert judge.judge([gone, locked, legacy], at=0.0) == []
    assert judge.judge([gone, locked, legacy], at=0.5) == []
    dead = judge.judge([gone, locked, legacy], at=1.0)
    assert {verdict.runner_id for verdict in dead} == {"gone", None}


def test_a_runner_not_sighted_is_forgotten():
    judge = DeathJudge(LivenessTerms(), interval=0.5)
    judge.judge([seen(ABSENT)], at=0.0)
    judge.judge([seen(ABSENT)], at=0.5)
    judge.judge([], at=1.0)
    assert judge.judge([seen(ABSENT)], at=1.5) == []


def test_an_owner_claims_only_with_a_lock_confirmed_within_the_freshness():
    own = OwnLiveness(LivenessTerms(), freshness=0.5)
    assert not own.may_claim(0.0)  # never confirmed
    own.lock_confirmed(10.0)
    assert own.may_claim(10.5)
    assert not own.may_claim(10.51)
    own.lock_confirmed(11.0, retaken=True)
    assert not own.may_claim(11.0)  # until it compared its jobs with the store's
    own.reconciled()
    assert own.may_claim(11.0)


@pytest.mark.parametrize(
    ("terms", "deadline"),
    [
        (LivenessTerms(), None),
        (LivenessTerms(lock_timeout=20.0), 100.0 + 20.0 - 5.0),
        (LivenessTerms(lease=20.0, lock_timeout=20.0), 90.0 + 20.0 - 5.0),
        (LivenessTerms(lease=6.0, lock_timeout=6.0), 90.0 + 6.0 - 2.0),
    ],
)
def test_handlers_stop_a_margin_before_the_earlier_of_lease_and_lock_timeout(terms, deadline):
    own = OwnLiveness(terms)
    own.lock_confirmed(100.0)
    own.beat_landed(90.0, busy=0)
    assert own.handler_deadline() == deadline


def test_an_owners_deadline_comes_before_any_observers_verdict():
    """Whatever the terms, the owner's handlers are told to stop before a lease verdict."""
    for lease in (3.0, 6.0, 20.0, 60.0):
        terms = LivenessTerms(lease=lease, lock_timeout=lease)
        own = OwnLiveness(terms)
        own.lock_confirmed(0.0)
        own.beat_landed(0.0, busy=0)  # sent at 0: any observer saw this beat later
        judge = DeathJudge(terms, interval=0.5)
        verdict_at = next(
            at for at in (n * 0.5 for n in range(1000)) if judge.judge([seen(HELD)], at=at)
        )
        assert own.handler_deadline() < verdict_at


def test_an_owner_that_knows_its_lock_is_absent_stops_before_an_observers_window_closes():
    from jobtable.core.liveness import FAST_WINDOW

    own = OwnLiveness(LivenessTerms(), freshness=0.5)  # SQLite: no lease, no lock timeout
    own.lock_confirmed(10.0)
    assert own.handler_deadline() is None
    own.lock_absent(10.1)  # the file could not be made again
    own.lock_absent(10.2)  # it counts from the first
    assert own.handler_deadline() == pytest.approx(10.1 + FAST_WINDOW / 2)
    assert own.handler_deadline() < 10.1 + FAST_WINDOW  # before any fast verdict
    assert not own.may_claim(10.1 + FAST_WINDOW / 2)
    own.lock_confirmed(10.3)  # taken back after all
    assert own.handler_deadline() is None


def test_an_owner_past_its_handler_deadline_claims_nothing_even_with_a_fresh_lock():
    own = OwnLiveness(LivenessTerms(lease=6.0, lock_timeout=6.0), freshness=0.5)
    own.beat_landed(0.0, busy=0)
    own.lock_confirmed(10.0)  # its lock confirms, but its beats stopped landing at 0
    assert not own.may_claim(10.1)


def test_where_the_lock_is_proof_an_idle_owner_beats_only_when_its_busy_count_changes():
    own = OwnLiveness(LivenessTerms())  # SQLite: a file lock, no lease
    own.beat_landed(0.0, busy=0)  # the row, as registered
    assert not any(own.must_beat(at, busy=0) for at in (0.5, 1.0, 60.0, 3600.0))
    assert own.must_beat(3600.5, busy=1)  # it started a job: the row says so once
    own.beat_landed(3600.5, busy=1)
    assert not own.must_beat(3601.0, busy=1)  # still one: nothing new to say
    assert own.must_beat(3601.5, busy=0)
    own.beat_landed(3601.5, busy=0)
    assert not own.must_beat(3602.0, busy=0)


def test_an_owner_asked_to_beat_beats_once_whatever_its_count():
    own = OwnLiveness(LivenessTerms())
    own.beat_landed(0.0, busy=0)
    own.ask_beat()  # its lock was taken again, or its row was not seen
    assert own.must_beat(0.5, busy=0)
    own.beat_landed(0.5, busy=0)
    assert not own.must_beat(1.0, busy=0)


def test_where_a_lease_runs_an_idle_owner_beats_often_enough_to_keep_it_and_no_more():
    terms = LivenessTerms(lease=20.0, lock_timeout=20.0)
    period = terms.idle_beat_period
    # A beat that fails is tried again at the next sweep: a few may fail within the margin.
    assert period is not None and period + 4 * 1.25 <= terms.lease - terms.margin
    own = OwnLiveness(terms)
    own.beat_landed(0.0, busy=0)
    assert not own.must_beat(period - 0.1, busy=0)
    assert own.must_beat(period, busy=0)
    assert own.must_beat(period + 1.25, busy=0)  # that beat failed: the next sweep tries again
    own.beat_landed(period + 1.25, busy=0)
    assert not own.must_beat(period + 2.5, busy=0)


def test_where_a_lease_runs_an_owner_running_jobs_beats_every_sweep():
    own = OwnLiveness(LivenessTerms(lease=20.0, lock_timeout=20.0))
    own.beat_landed(0.0, busy=2)
    assert own.must_beat(0.5, busy=2)  # the beat is an observer's evidence beside the lock
