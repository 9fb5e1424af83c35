"""How a job's end treats its unique key, on every store: a key held while the job is
active is let go however the job ends (succeeded, failed, timed out, cancelled, settled
by a dead runner's sweep), and kept while the job only waits to run again; a key kept
for good (a cron tick's, a period's) outlives every ending."""

from __future__ import annotations

import pytest

from jobtable.core import Claim, DeadRunner, NewJob, RunnerInfo, Status
from jobtable.core.codes import CANCELLED, INTERRUPTED, TIMED_OUT
from jobtable.core.ids import JobIdGenerator
from jobtable.core.jobs import CancelOutcome, RetryOutcome
from jobtable.core.outcome import Fail, Outcome, RunAgain, Succeed
from tests.contract.test_lifecycle_contract import RUNNER, T0, add, claim, later
from tests.support.settling import interrupt, settle_dead

_ids = JobIdGenerator()


def running(store, job_id: str) -> Claim:
    job = claim(store)
    assert job.id == job_id
    return job.claim


def recorded_in_a_batch(store, claim: Claim, outcome: Outcome) -> None:
    held, _ = store.record_and_claim([(claim, outcome)], limit=0, runner_id=RUNNER, now=later(1))
    assert held == [True]


def swept_from_a_dead_runner(store, job_id: str) -> None:
    info = RunnerInfo(
        id=RUNNER, host="h", pid=1, started_at=T0, kinds=("count",), queues=None, workers=1
    )
    store.register_runner(info, now=T0)
    running(store, job_id)
    store.unregister_runner(RUNNER)  # gone, leaving its job running
    verdict = DeadRunner(runner_id=RUNNER, registered=False, beat=None, lock_absent=True)
    settle_dead(store, [verdict], code=INTERRUPTED, now=later(5))


def enqueue_again(store, key: str):
    now = later(10)
    job_id = _ids.next_id(int(now.timestamp() * 1000))
    return store.create(NewJob(id=job_id, kind="count", payload="{}", unique_key=key), now=now)


# -- endings ---------------------------------------------------------------------


def succeeded(store, job_id: str) -> None:
    assert store.record(running(store, job_id), Succeed(result="{}"), now=later(1))


def succeeded_in_a_batch(store, job_id: str) -> None:
    recorded_in_a_batch(store, running(store, job_id), Succeed(result="{}"))


def failed(store, job_id: str) -> None:
    assert store.record(running(store, job_id), Fail(code="boom"), now=later(1))


def failed_in_a_batch(store, job_id: str) -> None:
    recorded_in_a_batch(store, running(store, job_id), Fail(code="boom"))


def timed_out_with_no_attempt_left(store, job_id: str) -> None:
    assert interrupt(store, running(store, job_id), code=TIMED_OUT, now=later(1))


def settled_failed_by_a_dead_runners_sweep(store, job_id: str) -> None:
    swept_from_a_dead_runner(store, job_id)


def cancelled_while_queued(store, job_id: str) -> None:
    assert store.cancel(job_id, now=later(1)) is CancelOutcome.CANCELLED


def cancelled_while_scheduled(store, job_id: str) -> None:
    assert store.record(running(store, job_id), RunAgain(run_at=later(60), code="x"), now=T0)
    assert store.cancel(job_id, now=later(1)) is CancelOutcome.CANCELLED


def cancelled_while_running(store, job_id: str) -> None:
    held = running(store, job_id)
    assert store.cancel(job_id, now=later(1)) is CancelOutcome.REQUESTED
    assert store.record(held, Fail(code=CANCELLED), now=later(2))  # its runner stopped the handler


def cancelled_while_running_then_retried(store, job_id: str) -> None:
    held = running(store, job_id)
    assert store.cancel(job_id, now=later(1)) is CancelOutcome.REQUESTED
    assert store.record(held, RunAgain(run_at=later(2), code="internal_error"), now=later(2))


def cancelled_while_running_then_given_back(store, job_id: str) -> None:
    held = running(store, job_id)
    assert store.cancel(job_id, now=later(1)) is CancelOutcome.REQUESTED
    assert store.put_back([held], now=later(2)) == 1


ENDINGS = [
    succeeded,
    succeeded_in_a_batch,
    failed,
    failed_in_a_batch,
    timed_out_with_no_attempt_left,
    settled_failed_by_a_dead_runners_sweep,
    cancelled_while_queued,
    cancelled_while_scheduled,
    cancelled_while_running,
    cancelled_while_running_then_retried,
    cancelled_while_running_then_given_back,
]


@pytest.mark.parametrize("end", ENDINGS, ids=lambda end: end.__name__)
def test_a_unique_key_held_while_active_is_let_go_however_its_job_ends(store, end):
    first = add(store, unique_key="user-7")
    end(store, first)
    assert store.get(first).status in (Status.SUCCEEDED, Status.FAILED)
    again = enqueue_again(store, "user-7")
    assert not again.duplicate
    assert again != first


@pytest.mark.parametrize("end", ENDINGS, ids=lambda end: end.__name__)
def test_a_unique_key_for_good_outlives_its_job(store, end):
    first = add(store, unique_key="tick@1", unique_while_active=False)
    end(store, first)
    assert store.get(first).status in (Status.SUCCEEDED, Status.FAILED)
    again = enqueue_again(store, "tick@1")
    assert (again, again.duplicate) == (first, True)


# -- waiting to run again: not an ending ---------------------------------------------


def retried(store, job_id: str) -> None:
    assert store.record(running(store, job_id), RunAgain(run_at=later(1), code="x"), now=later(1))


def retried_in_a_batch(store, job_id: str) -> None:
    recorded_in_a_batch(store, running(store, job_id), RunAgain(run_at=later(1), code="x"))


def snoozed(store, job_id: str) -> None:
    snooze = RunAgain(run_at=later(1), code="snoozed", counts_attempt=False)
    assert store.record(running(store, job_id), snooze, now=later(1))


def given_back(store, job_id: str) -> None:
    assert store.put_back([running(store, job_id)], now=later(1)) == 1


def interrupted_with_an_attempt_left(store, job_id: str) -> None:
    assert interrupt(store, running(store, job_id), code=INTERRUPTED, now=later(1))


def queued_again_by_a_dead_runners_sweep(store, job_id: str) -> None:
    swept_from_a_dead_runner(store, job_id)


WAITS = [
    retried,
    retried_in_a_batch,
    snoozed,
    given_back,
    interrupted_with_an_attempt_left,
    queued_again_by_a_dead_runners_sweep,
]


@pytest.mark.parametrize("wait", WAITS, ids=lambda wait: wait.__name__)
def test_a_unique_key_held_while_active_stays_held_while_its_job_waits_to_run_again(store, wait):
    first = add(store, unique_key="user-7", max_attempts=2)
    wait(store, first)
    assert store.get(first).status is Status.QUEUED
    again = enqueue_again(store, "user-7")
    assert (again, again.duplicate) == (first, True)


# -- an operator's retry takes the key again -----------------------------------------


def test_an_operators_retry_takes_the_key_again_or_is_refused_while_another_job_holds_it(store):
    first = add(store, unique_key="user-7")
    failed(store, first)
    second = enqueue_again(store, "user-7")
    assert not second.duplicate

    assert store.retry(first, now=later(11)) is RetryOutcome.KEY_HELD
    assert store.get(first).status is Status.FAILED  # nothing changed: two never hold one key
    assert (enqueue_again(store, "user-7"), enqueue_again(store, "user-7").duplicate) == (
        second,
        True,
    )

    assert store.cancel(second, now=later(12)) is CancelOutcome.CANCELLED
    assert store.retry(first, now=later(13)) is RetryOutcome.RETRIED
    assert store.get(first).status is Status.QUEUED
    again = enqueue_again(store, "user-7")
    assert (again, again.duplicate) == (first, True)  # the retried job holds it again


def test_a_job_that_ended_keeps_showing_the_key_it_held(store):
    first = add(store, unique_key="user-7")
    succeeded(store, first)
    assert store.detail(first).unique_key == "user-7"
    assert not enqueue_again(store, "user-7").duplicate


def test_a_retry_of_a_job_without_a_key_or_with_one_kept_for_good_is_never_refused_for_it(store):
    plain = add(store)
    failed(store, plain)
    assert store.retry(plain, now=later(11)) is RetryOutcome.RETRIED
    tick = add(store, unique_key="tick@1", unique_while_active=False)
    failed(store, tick)
    assert store.retry(tick, now=later(12)) is RetryOutcome.RETRIED
