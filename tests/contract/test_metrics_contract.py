"""What metrics read from every JobStore: unfinished jobs counted by queue, kind and status,
and a claimed job's due time (its queue wait is the claim's time minus it)."""

from __future__ import annotations

from jobtable.core.jobs import JobCount
from jobtable.core.outcome import Succeed
from tests.contract.test_lifecycle_contract import RUNNER, T0, add, claim, later


def counts(store) -> set[tuple[str, str, str, int]]:
    return {(c.queue, c.kind, c.status, c.count) for c in store.job_counts()}


def test_job_counts_are_empty_on_an_empty_store(store):
    assert store.job_counts() == []


def test_job_counts_group_unfinished_jobs_by_queue_kind_and_status(store):
    add(store, "count")
    add(store, "count")
    add(store, "mail", queue="outbox")
    add(store, "mail", queue="outbox", run_at=later(60))  # due later: scheduled
    add(store, "count", queue="outbox")
    assert counts(store) == {
        ("default", "count", "queued", 2),
        ("outbox", "mail", "queued", 1),
        ("outbox", "mail", "scheduled", 1),
        ("outbox", "count", "queued", 1),
    }
    running = claim(store)
    assert running is not None and running.kind == "count"
    assert ("default", "count", "running", 1) in counts(store)
    assert all(isinstance(c, JobCount) for c in store.job_counts())


def test_finished_jobs_are_not_counted(store):
    add(store, "count")
    add(store, "count")
    first = claim(store)
    assert store.succeed(first.claim, result="{}", now=T0)
    second = claim(store)
    assert store.fail(second.claim, code="boom", now=T0)
    assert store.job_counts() == []


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
    held, following = store.finish_and_claim_next(
        first.claim, Succeed(result="{}"), runner_id=RUNNER, now=T0
    )
    assert held
    assert (following.id, following.due_at) == (second, second_due)


def test_an_immediate_job_is_due_at_its_creation(store):
    add(store, "count", now=later(-5))
    assert claim(store).due_at == later(-5)
