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


def test_an_absent_lock_is_death_only_on_the_second_sweep_at_least_a_sweep_later():
    judge = DeathJudge(LivenessTerms(), interval=0.5)
    assert judge.judge([seen(ABSENT)], at=0.0) == []
    assert judge.judge([seen(ABSENT)], at=0.4) == []  # too soon after the first
    assert judge.judge([seen(ABSENT)], at=0.5) == [
        DeadRunner(runner_id="r", registered=True, beat=7, lock_absent=True)
    ]


def test_a_beat_between_two_sweeps_clears_an_absent_lock():
    judge = DeathJudge(LivenessTerms(), interval=0.5)
    judge.judge([seen(ABSENT, beat=7)], at=0.0)
    assert judge.judge([seen(ABSENT, beat=8)], at=0.5) == []  # alive: it beat meanwhile
    assert judge.judge([seen(ABSENT, beat=8)], at=1.0) != []


def test_a_lock_taken_again_between_two_sweeps_clears_the_suspicion():
    judge = DeathJudge(LivenessTerms(), interval=0.5)
    judge.judge([seen(ABSENT)], at=0.0)
    assert judge.judge([seen(HELD)], at=0.5) == []
    assert judge.judge([seen(ABSENT)], at=1.0) == []  # a new suspicion starts over
    assert judge.judge([seen(ABSENT)], at=1.5) != []


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
    assert judge.judge([seen(ABSENT)], at=30.5) != []


def test_an_owner_with_no_row_is_dead_after_two_sweeps_unless_its_lock_is_held():
    judge = DeathJudge(LivenessTerms(), interval=0.5)
    gone = seen(UNKNOWN, beat=None, runner="gone", registered=False)
    locked = seen(HELD, beat=None, runner="locked", registered=False)
    legacy = seen(ABSENT, beat=None, runner=None, registered=False)
    assert judge.judge([gone, locked, legacy], at=0.0) == []
    dead = judge.judge([gone, locked, legacy], at=0.5)
    assert {verdict.runner_id for verdict in dead} == {"gone", None}


def test_a_runner_not_sighted_is_forgotten():
    judge = DeathJudge(LivenessTerms(), interval=0.5)
    judge.judge([seen(ABSENT)], at=0.0)
    judge.judge([], at=0.5)
    assert judge.judge([seen(ABSENT)], at=1.0) == []


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
    own.beat_landed(90.0)
    assert own.handler_deadline() == deadline


def test_an_owners_deadline_comes_before_any_observers_verdict():
    """Whatever the terms, the owner's handlers are told to stop before a lease verdict."""
    for lease in (3.0, 6.0, 20.0, 60.0):
        terms = LivenessTerms(lease=lease, lock_timeout=lease)
        own = OwnLiveness(terms)
        own.lock_confirmed(0.0)
        own.beat_landed(0.0)  # sent at 0: any observer saw this beat later
        judge = DeathJudge(terms, interval=0.5)
        verdict_at = next(
            at for at in (n * 0.5 for n in range(1000)) if judge.judge([seen(HELD)], at=at)
        )
        assert own.handler_deadline() < verdict_at
