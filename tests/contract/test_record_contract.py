"""Recording a decided outcome (``record``): each shape, on every store.

The core decides (core/outcome.py); the store applies the value, the cancel rule and the
release of a unique key held while the job is active.
"""

from __future__ import annotations

import pytest

from jobtable.core import Claim, Enqueued, NewJob, Status
from jobtable.core.codes import CANCELLED
from jobtable.core.ids import JobIdGenerator
from jobtable.core.outcome import Fail, RunAgain, Succeed
from tests.contract.test_lifecycle_contract import RUNNER, T0, add, claim, later

_ids = JobIdGenerator()

SHAPES = {
    "succeed": Succeed(result='{"done":2}'),
    "fail": Fail(code="card_declined"),
    "run again": RunAgain(run_at=later(30), code="flaky"),
    "snooze": RunAgain(run_at=later(30), code="snoozed", counts_attempt=False),
}


def test_succeed_stores_the_result_and_ends_the_job(store):
    job_id = add(store)
    running = claim(store)
    assert store.record(running.claim, Succeed(result='{"done":2}'), now=later(1))
    job = store.get(job_id)
    assert (job.status, job.result, job.error) == (Status.SUCCEEDED, {"done": 2}, None)
    assert store.detail(job_id).finished_at == later(1)


def test_fail_ends_the_job_with_its_code_keeping_the_last_partial_result(store):
    job_id = add(store, max_attempts=5)  # attempts left: the decision is the core's, not redone
    running = claim(store)
    assert store.publish(running.claim, result='{"done":1}', now=T0)
    assert store.record(running.claim, Fail(code="card_declined"), now=later(1))
    job = store.get(job_id)
    assert (job.status, job.result, job.error) == (Status.FAILED, {"done": 1}, "card_declined")
    assert claim(store, now=later(1)) is None


def test_run_again_counted_spends_the_attempt_and_waits_until_it_is_due(store):
    job_id = add(store, max_attempts=1)  # no attempt left: recorded as decided all the same
    running = claim(store)
    assert store.record(running.claim, RunAgain(run_at=later(30), code="flaky"), now=later(1))
    detail = store.detail(job_id)
    assert (detail.job.status, detail.attempt, detail.last_code) == (Status.QUEUED, 1, "flaky")
    assert [(a.attempt, a.outcome) for a in detail.attempts] == [(1, "flaky")]
    assert store.promote_due(now=later(29)) == 0
    assert store.promote_due(now=later(30)) == 1
    assert claim(store, now=later(30)).claim.attempt == 2


def test_run_again_not_counted_gives_the_attempt_back_and_counts_a_snooze(store):
    job_id = add(store, max_attempts=1)
    running = claim(store)
    snooze = RunAgain(run_at=later(30), code="snoozed", counts_attempt=False)
    assert store.record(running.claim, snooze, now=later(1))
    detail = store.detail(job_id)
    assert (detail.job.status, detail.attempt, detail.snoozes) == (Status.QUEUED, 0, 1)
    store.promote_due(now=later(30))
    assert claim(store, now=later(30)).claim.attempt == 1


def test_run_again_due_at_once_keeps_its_place_in_line(store):
    first = add(store, max_attempts=2)
    running = claim(store)
    second = add(store, now=later(0.5))  # due before the time the first runs again at
    assert store.record(running.claim, RunAgain(run_at=later(1), code="flaky"), now=later(1))
    assert claim(store, now=later(1)).id == first  # ahead of the job enqueued after it
    assert store.get(second).status is Status.QUEUED


@pytest.mark.parametrize("counts", [True, False], ids=["counted", "not counted"])
def test_a_pending_cancel_turns_run_again_into_failed_cancelled(store, counts):
    job_id = add(store, max_attempts=5, unique_key="k")
    running = claim(store)
    store.cancel(job_id, now=T0)
    again = RunAgain(run_at=later(1), code="flaky", counts_attempt=counts)
    assert store.record(running.claim, again, now=later(1))
    detail = store.detail(job_id)
    assert (detail.job.status, detail.job.error, detail.attempt) == (Status.FAILED, CANCELLED, 1)
    assert not detail.cancel_requested
    assert claim(store, now=later(1)) is None
    assert not add_again(store, "k").duplicate  # ended for good: its key is let go


@pytest.mark.parametrize("shape", ["succeed", "fail"])
def test_an_outcome_that_ends_the_job_lets_go_of_its_unique_key(store, shape):
    add(store, unique_key="k", max_attempts=3)
    running = claim(store)
    assert store.record(running.claim, SHAPES[shape], now=later(1))
    assert not add_again(store, "k").duplicate


@pytest.mark.parametrize("shape", ["run again", "snooze"])
def test_an_outcome_that_runs_the_job_again_keeps_its_unique_key(store, shape):
    job_id = add(store, unique_key="k", max_attempts=3)
    running = claim(store)
    assert store.record(running.claim, SHAPES[shape], now=later(1))
    assert add_again(store, "k") == job_id and add_again(store, "k").duplicate


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_stale_claim_records_nothing(store, shape):
    job_id = add(store, max_attempts=3)
    running = claim(store)
    for stale in (
        Claim(job_id=job_id, runner_id="someone-else", attempt=running.claim.attempt),
        Claim(job_id=job_id, runner_id=RUNNER, attempt=running.claim.attempt + 1),
    ):
        assert not store.record(stale, SHAPES[shape], now=later(1))
    detail = store.detail(job_id)
    assert (detail.job.status, detail.attempt, detail.snoozes) == (Status.RUNNING, 1, 0)
    assert [attempt.outcome for attempt in detail.attempts] == ["running"]
    assert store.record(running.claim, SHAPES[shape], now=later(1))
    assert not store.record(running.claim, SHAPES[shape], now=later(2))  # once only


def add_again(store, key: str) -> Enqueued:
    """Enqueue another job with ``key``: the holder's id (duplicate) while it holds it."""
    job_id = _ids.next_id(int(later(2).timestamp() * 1000))
    job = NewJob(id=job_id, kind="count", payload="{}", unique_key=key)
    return store.create(job, now=later(2))
