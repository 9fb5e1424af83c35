"""The retry decision: one pure function for every way an attempt can end."""

from __future__ import annotations

import datetime

import pytest

from jobtable.core.codes import CANCELLED, INTERNAL_ERROR, INTERRUPTED, TIMED_OUT
from jobtable.core.outcome import Fail, Raised, RunAgain
from jobtable.core.outcome import decide as decide_outcome
from jobtable.core.retry import (
    BACKOFF_BASE,
    BACKOFF_CAP,
    RetryPolicy,
    check_policy,
    retry_delay,
)

NOW = datetime.datetime(2026, 5, 1, tzinfo=datetime.UTC)
THREE = RetryPolicy(max_attempts=3, retry_on=frozenset({"rate_limited"}))


def decide(policy: RetryPolicy, code: str, attempt: int = 1, jitter: float = 1.0):
    failed = Raised(code=code, reason="handler failure")
    return decide_outcome(failed, policy, attempt=attempt, now=NOW, jitter=lambda: jitter)


@pytest.mark.parametrize("code", [INTERNAL_ERROR, TIMED_OUT, "rate_limited"])
def test_retryable_codes_retry_while_attempts_remain(code):
    assert isinstance(decide(THREE, code, attempt=1), RunAgain)
    assert isinstance(decide(THREE, code, attempt=2), RunAgain)
    assert decide(THREE, code, attempt=3) == Fail(code=code)


def test_a_declared_code_is_final_unless_the_kind_lists_it():
    assert decide(THREE, "card_declined") == Fail(code="card_declined")


def test_cancelled_never_retries():
    assert decide(RetryPolicy(max_attempts=9, retry_on=frozenset()), CANCELLED) == Fail(
        code=CANCELLED
    )


def test_the_default_policy_is_the_references_one_attempt():
    for code in (INTERNAL_ERROR, INTERRUPTED, TIMED_OUT):
        assert decide(RetryPolicy(), code) == Fail(code=code)


def test_an_interrupted_job_runs_again_at_once():
    assert decide(THREE, INTERRUPTED, attempt=2) == RunAgain(run_at=NOW, code=INTERRUPTED)


def test_backoff_doubles_from_its_base_up_to_its_cap_scaled_by_the_jitter():
    policy = RetryPolicy(max_attempts=20, backoff_base=1.5, backoff_cap=10.0)
    ceilings = [retry_delay(policy, attempt, 1.0) for attempt in range(1, 6)]
    assert ceilings == [1.5, 3.0, 6.0, 10.0, 10.0]
    assert retry_delay(policy, 3, 0.25) == 1.5
    assert retry_delay(policy, 3, 0.0) == 0.0
    assert retry_delay(policy, 10_000, 1.0) == 10.0  # no overflow on a huge attempt
    retry = decide(policy, INTERNAL_ERROR, attempt=2, jitter=0.5)
    assert retry == RunAgain(run_at=NOW + datetime.timedelta(seconds=1.5), code=INTERNAL_ERROR)


def test_the_policy_survives_its_stored_form():
    policy = RetryPolicy(max_attempts=4, retry_on=frozenset({"a", "b"}), backoff_base=3.0)
    assert RetryPolicy.stored(4, policy.to_json()) == policy
    assert RetryPolicy(max_attempts=2).to_json() is None  # defaults store nothing
    assert RetryPolicy.stored(2, None) == RetryPolicy(max_attempts=2)
    assert (BACKOFF_BASE, BACKOFF_CAP) == (2.0, 600.0)  # the lifecycle guide states these


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"max_attempts": 0}, "max_attempts"),
        ({"max_attempts": True}, "max_attempts"),
        ({"retry_on": "flaky"}, "not one string"),
        ({"retry_on": ["undeclared"]}, "does not declare"),
        ({"backoff": (5, 1)}, "at least its base"),
        ({"backoff": (float("nan"), 1)}, "seconds"),
        ({"backoff": (1, float("inf"))}, "seconds"),
        ({"backoff": 3}, "pair"),
    ],
)
def test_bad_retry_settings_are_refused_with_the_reason(settings, message):
    given = {"max_attempts": 2, "retry_on": (), "backoff": None, **settings}
    with pytest.raises(ValueError, match=message):
        check_policy(declared=frozenset({"flaky"}), **given)
