"""Jobs held ahead (``run_batch``'s holds, starts and give-backs): the contract on every store.

A held job stays queued in every read until a worker starts it; no other runner
claims it meanwhile; a cancel ends it at once and its start then finds it gone; it
is freed when given back, when its runner gives back all it holds, and when its
runner is settled dead.
"""

from __future__ import annotations

import datetime
import threading

from jobtable.core import Claim, Status
from jobtable.core.batch import Batch
from jobtable.core.jobs import CancelOutcome, JobFilter
from jobtable.core.outcome import Succeed
from tests.contract.test_batch_contract import KINDS, LATER, RUNNER, T0, add
from tests.contract.test_store_contract import dead, runner_info, sighting
from tests.support.settling import settle_dead
from tests.support.stores import break_lock
from tests.support.threads import run_in_threads


def run(store, runner_id=RUNNER, *, kinds=KINDS, now=LATER, **batch):
    return store.run_batch(Batch(**batch), runner_id=runner_id, now=now, kinds=kinds)


def test_a_held_job_stays_queued_with_no_start_or_attempt_until_started(store):
    first, second = add(store, ms=1_000), add(store, ms=2_000)
    done = run(store, hold=5, durable=False)
    assert [job.id for job in done.held] == [first, second]
    assert done.claimed == [] and done.started == []
    assert all(job.claim == Claim(job_id=job.id, runner_id=RUNNER, attempt=1) for job in done.held)
    for job_id in (first, second):
        detail = store.detail(job_id)
        assert (detail.job.status, detail.started_at, detail.attempt) == (Status.QUEUED, None, 0)
    assert {
        job.id for job in store.list_jobs(JobFilter(status=Status.QUEUED), limit=10, after=None)
    } == {first, second}
    assert store.running_jobs(RUNNER) == []

    started = run(store, starts=[done.held[0].claim], durable=False)
    assert started.started == [True]
    detail = store.detail(first)
    assert (detail.job.status, detail.started_at, detail.attempt) == (Status.RUNNING, LATER, 1)
    assert [held.claim for held in store.running_jobs(RUNNER)] == [done.held[0].claim]
    assert store.record(done.held[0].claim, Succeed(result='{"n":1}'), now=LATER)
    assert store.get(first).status is Status.SUCCEEDED


def test_no_other_runner_claims_or_holds_a_held_job(store):
    held = add(store, ms=1_000)
    free = add(store, ms=2_000)
    assert [job.id for job in run(store, hold=1).held] == [held]
    other = run(store, "runner-b", claim=5, hold=5)
    assert [job.id for job in other.claimed] == [free]
    assert other.held == []
    assert store.claim_next(runner_id="runner-c", now=LATER) is None


def test_a_batch_records_starts_claims_and_holds_in_one_go(store):
    running = store.claim_next(runner_id=RUNNER, now=T0, kinds=KINDS)
    assert running is None
    first = add(store, ms=1_000)
    claimed = run(store, claim=1).claimed[0]
    assert claimed.id == first
    ahead, later, last = add(store, ms=2_000), add(store, ms=3_000), add(store, ms=4_000)
    held = run(store, hold=1).held[0]
    assert held.id == ahead
    done = run(
        store,
        outcomes=[(claimed.claim, Succeed(result="{}"))],
        starts=[held.claim],
        claim=1,
        hold=1,
    )
    assert done.recorded == [True] and done.started == [True]
    assert [job.id for job in done.claimed] == [later]
    assert [job.id for job in done.held] == [last]
    assert store.get(first).status is Status.SUCCEEDED
    assert store.get(ahead).status is Status.RUNNING
    assert store.get(later).status is Status.RUNNING
    assert store.get(last).status is Status.QUEUED


def test_a_cancelled_held_job_ends_at_once_and_never_starts(store):
    job_id = add(store)
    held = run(store, hold=1).held[0]
    assert store.cancel(job_id, now=LATER) is CancelOutcome.CANCELLED
    job = store.get(job_id)
    assert (job.status, job.error) == (Status.FAILED, "cancelled")
    assert run(store, starts=[held.claim]).started == [False]
    assert store.get(job_id).status is Status.FAILED
    assert store.running_jobs(RUNNER) == []


def test_a_given_back_job_is_free_for_any_runner_and_not_for_its_old_start(store):
    job_id = add(store)
    held = run(store, hold=1).held[0]
    run(store, give_backs=[held.claim])
    assert run(store, starts=[held.claim]).started == [False]
    again = run(store, "runner-b", claim=1).claimed
    assert [job.id for job in again] == [job_id]
    assert again[0].claim.attempt == 1


def test_give_back_held_frees_every_job_one_runner_holds_and_no_other(store):
    mine = [add(store, ms=1_000 + n) for n in range(3)]
    theirs = add(store, ms=2_000)
    run(store, hold=3)
    run(store, "runner-b", hold=1)
    assert store.give_back_held(RUNNER) == 3
    assert store.give_back_held(RUNNER) == 0
    claimed = run(store, "runner-c", claim=10).claimed
    assert sorted(job.id for job in claimed) == sorted(mine)
    assert theirs not in {job.id for job in claimed}


def test_a_dead_runners_held_jobs_are_freed_when_it_is_settled(store):
    store.register_runner(runner_info("runner-dead"), now=T0)
    job_id = add(store)
    held = run(store, "runner-dead", hold=1).held[0]
    break_lock(store, "runner-dead")
    beat = sighting(store, "runner-dead").beat
    settle_dead(store, [dead("runner-dead", beat)], now=LATER)
    assert run(store, "runner-dead", starts=[held.claim]).started == [False]
    assert [job.id for job in run(store, "runner-b", claim=1).claimed] == [job_id]


def test_an_operators_retry_of_a_job_cancelled_while_held_makes_it_claimable(store):
    job_id = add(store)
    run(store, hold=1)
    store.cancel(job_id, now=LATER)
    store.retry(job_id, now=LATER)
    assert [job.id for job in run(store, "runner-b", claim=1).claimed] == [job_id]


def test_concurrent_holders_never_hold_or_start_one_job_twice(store):
    ids = {add(store, ms=1_000 + n) for n in range(200)}
    started: list[str] = []
    guard = threading.Lock()
    go = threading.Barrier(4)

    def holder(name: str) -> None:
        go.wait()
        while True:
            held = run(store, name, hold=7, durable=False).held
            if not held:
                return
            done = run(store, name, starts=[job.claim for job in held])
            assert done.started == [True] * len(held)
            with guard:
                started.extend(job.id for job in held)
            for job in held:
                assert store.record(job.claim, Succeed(result="{}"), now=LATER)

    run_in_threads([lambda n=n: holder(f"runner-{n}") for n in range(4)])
    assert len(started) == len(set(started)), "a job was started twice"
    assert set(started) == ids


def test_a_lost_claims_put_back_fenced_on_its_start_leaves_a_later_run_under_an_equal_claim(
    store,
):
    """A sweep reads a job running under a claim, puts it back; the same runner takes it again
    under an equal claim (its attempt was given back): a late put-back must not move it."""
    job_id = add(store)
    first = run(store, claim=1).claimed[0]
    (seen,) = store.running_jobs(RUNNER)
    assert store.put_back([first.claim], now=LATER) == 1
    again = run(store, claim=1, now=LATER + datetime.timedelta(seconds=1)).claimed[0]
    assert again.claim == first.claim  # an equal claim, a later run
    started = {seen.claim: seen.started}
    assert store.put_back([seen.claim], now=LATER, started=started) == 0
    assert store.get(job_id).status is Status.RUNNING
    (now_seen,) = store.running_jobs(RUNNER)
    assert (
        store.put_back([now_seen.claim], now=LATER, started={now_seen.claim: now_seen.started}) == 1
    )
