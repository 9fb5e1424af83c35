"""What metrics read from every JobStore beyond the counts (test_observe_contract.py): a
claimed job's due time, so its queue wait is the claim's time minus it."""

from __future__ import annotations

from jobtable.core.outcome import Succeed
from tests.contract.test_lifecycle_contract import RUNNER, T0, add, claim, later


def test_a_claimed_job_says_when_it_was_due(store):
    due = later(-30)
    job_id = add(store, "count", run_at=due)
    claimed = claim(store)
    assert claimed.id == job_id
    assert claimed.due_at == due


def test_the_job_claimed_with_an_outcome_says_when_it_was_due_too(store):
    add(store, "count", run_at=later(-50))
    second_due = later(-20)
    second = add(store, "count", run_at=second_due)
    first = claim(store)
    (held,), (following,) = store.record_and_claim(
        [(first.claim, Succeed(result="{}"))], limit=1, runner_id=RUNNER, now=T0
    )
    assert held
    assert (following.id, following.due_at) == (second, second_due)


def test_an_immediate_job_is_due_at_its_creation(store):
    add(store, "count", now=later(-5))
    assert claim(store).due_at == later(-5)
