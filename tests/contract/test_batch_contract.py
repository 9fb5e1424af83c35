"""Batched claims and outcomes (``record_and_claim``): the contract on every store.

A batch keeps every meaning a single claim has: claim order, kinds, queues,
pauses, the fence on each outcome, and recovery when its runner dies.
"""

from __future__ import annotations

import datetime
import threading

from jobtable.core import Claim, NewJob, Status
from jobtable.core.ids import JobIdGenerator
from jobtable.core.outcome import Fail, RunAgain, Succeed
from tests.contract.test_store_contract import dead, runner_info, sighting
from tests.support.settling import settle_dead
from tests.support.stores import break_lock
from tests.support.threads import run_in_threads

T0 = datetime.datetime(2026, 3, 1, 12, 0, tzinfo=datetime.UTC)
LATER = T0 + datetime.timedelta(seconds=90)
RUNNER = "runner-a"
KINDS = ("count", "noop")
_ids = JobIdGenerator()


def add(store, *, ms: int = 1_772_366_400_000, kind="count", queue="default", priority=0,
        max_attempts=1, now=T0) -> str:  # fmt: skip
    job_id = _ids.next_id(ms)
    new = NewJob(
        id=job_id, kind=kind, payload="{}", queue=queue, priority=priority,
        max_attempts=max_attempts,
    )  # fmt: skip
    store.create(new, now=now)
    return job_id


def batch(store, outcomes=(), *, limit, runner_id=RUNNER, kinds=KINDS, queues=None, now=LATER):
    return store.record_and_claim(
        list(outcomes), limit=limit, runner_id=runner_id, now=now, kinds=kinds, queues=queues
    )


def test_a_batch_claims_up_to_its_limit_in_claim_order(store):
    late = add(store, ms=3_000)
    urgent = add(store, ms=4_000, priority=0, kind="noop")
    early = add(store, ms=1_000, priority=1)
    lowest = add(store, ms=500, priority=5)
    middle = add(store, ms=2_000, priority=1, kind="noop")
    held, first = batch(store, limit=3)  # priority 0 first, then the oldest of priority 1
    assert held == []
    assert [job.id for job in first] == [late, urgent, early]
    assert all(job.claim == Claim(job_id=job.id, runner_id=RUNNER, attempt=1) for job in first)
    assert all(store.get(job.id).status is Status.RUNNING for job in first)
    _, rest = batch(store, limit=5)
    assert [job.id for job in rest] == [middle, lowest]
    assert batch(store, limit=5) == ([], [])


def test_a_batch_of_limit_zero_records_and_claims_nothing_new(store):
    job_id = add(store)
    running = batch(store, limit=1)[1][0]
    waiting = add(store)
    held, claimed = batch(store, [(running.claim, Succeed(result="{}"))], limit=0)
    assert (held, claimed) == ([True], [])
    assert store.get(job_id).status is Status.SUCCEEDED
    assert store.get(waiting).status is Status.QUEUED


def test_each_outcome_of_a_batch_keeps_its_own_fence(store):
    first, second, third = (add(store, max_attempts=2) for _ in range(3))
    claims = {job.id: job.claim for job in batch(store, limit=3)[1]}
    stale = Claim(job_id=second, runner_id="runner-b", attempt=1)
    waiting = add(store)
    held, claimed = batch(
        store,
        [
            (claims[first], Succeed(result='{"done":1}')),
            (stale, Fail(code="quota_exceeded")),
            (claims[third], RunAgain(run_at=LATER + datetime.timedelta(seconds=60), code="busy")),
        ],
        limit=2,
    )
    assert held == [True, False, True]
    assert [job.id for job in claimed] == [waiting]
    assert store.get(first).status is Status.SUCCEEDED
    assert store.get(second).status is Status.RUNNING  # the stale write changed nothing
    assert store.get(third).status is Status.QUEUED  # again, due in a minute


def test_a_batch_takes_only_its_kinds_and_queues_and_passes_paused_ones_by(store):
    mail = add(store, kind="mail")
    other_queue = add(store, queue="reports")
    paused = add(store, queue="slow")
    store.set_queue_paused("slow", paused=True, now=T0)
    mine = add(store)
    _, claimed = batch(store, limit=10, queues=("default", "slow"))
    assert [job.id for job in claimed] == [mine]
    for job_id in (mail, other_queue, paused):
        assert store.get(job_id).status is Status.QUEUED
    store.set_queue_paused("slow", paused=False, now=T0)
    _, every_kind = batch(store, limit=10, kinds=None)
    assert sorted(job.id for job in every_kind) == sorted([mail, other_queue, paused])


def test_a_dead_runners_batch_is_recovered_like_single_claims(store):
    store.register_runner(runner_info("runner-dead"), now=T0)
    retried = [add(store, max_attempts=3) for _ in range(3)]
    failed = add(store)
    _, claimed = batch(store, limit=4, runner_id="runner-dead")
    assert len(claimed) == 4
    break_lock(store, "runner-dead")
    beat = sighting(store, "runner-dead").beat
    recovered = settle_dead(
        store, [dead("runner-dead", beat)], code="interrupted by restart", now=LATER
    )
    assert (recovered.requeued, recovered.failed) == (3, 1)
    assert all(store.get(job_id).status is Status.QUEUED for job_id in retried)
    assert store.get(failed).status is Status.FAILED
    late = [(job.claim, Succeed(result="{}")) for job in claimed]
    assert batch(store, late, limit=0) == ([False] * 4, [])  # their late writes: fenced


def test_concurrent_batches_never_claim_one_job_twice(store):
    ids = {add(store) for _ in range(240)}
    claimed: list[str] = []
    errors: list[str] = []
    guard = threading.Lock()
    start = threading.Barrier(4)

    def claimer(name: str) -> None:
        start.wait()
        held, jobs = batch(store, limit=7, runner_id=name)
        while jobs:
            with guard:
                claimed.extend(job.id for job in jobs)
            outcomes = [(job.claim, Succeed(result="{}")) for job in jobs]
            held, jobs = batch(store, outcomes, limit=7, runner_id=name)
            if not all(held):  # a second claimer of one job would find its fence moved
                with guard:
                    errors.append(f"{name}: an outcome was not held")

    run_in_threads([lambda n=n: claimer(f"runner-{n}") for n in range(4)])
    assert errors == []
    assert len(claimed) == len(set(claimed)), "a job was claimed twice"
    assert sorted(claimed) == sorted(ids)
    assert all(store.get(job_id).status is Status.SUCCEEDED for job_id in ids)
