"""The contract every JobStore keeps, run against each adapter."""

from __future__ import annotations

import datetime
import threading

import pytest

from jobtable.core import Claim, NewJob, Status
from jobtable.core.ids import JobIdGenerator
from tests.support.harness import as_datetime

T0 = datetime.datetime(2026, 3, 1, 12, 0, tzinfo=datetime.UTC)
LATER = T0 + datetime.timedelta(seconds=90)
RUNNER = "runner-a"
_ids = JobIdGenerator()


def new_id(ms: int = 1_772_366_400_000) -> str:
    return _ids.next_id(ms)


def queue(store, kind: str = "count", payload: str = '{"steps":1}', job_id: str | None = None):
    job_id = job_id or new_id()
    store.create(NewJob(id=job_id, kind=kind, payload=payload), now=T0)
    return job_id


def test_a_created_job_is_queued_with_no_result_or_error(store):
    job_id = queue(store)
    job = store.get(job_id)
    assert (job.id, job.kind, job.status, job.result, job.error) == (
        job_id, "count", Status.QUEUED, None, None,
    )  # fmt: skip


def test_claims_take_the_oldest_queued_job_first(store):
    ids = [new_id(ms) for ms in (1_000, 2_000, 3_000, 4_000)]
    for job_id in (ids[2], ids[0], ids[3], ids[1]):
        queue(store, job_id=job_id)
    claimed = [store.claim_next(runner_id=RUNNER, now=T0).id for _ in ids]
    assert claimed == ids


def test_a_claim_on_an_empty_queue_returns_none(store):
    assert store.claim_next(runner_id=RUNNER, now=T0) is None
    job_id = queue(store)
    assert store.claim_next(runner_id=RUNNER, now=T0).id == job_id
    assert store.claim_next(runner_id=RUNNER, now=T0) is None


def test_a_claim_marks_the_job_running_and_returns_its_payload_and_claim(store):
    job_id = queue(store, payload='{"steps":7}')
    claimed = store.claim_next(runner_id=RUNNER, now=LATER)
    assert claimed.claim == Claim(job_id=job_id, runner_id=RUNNER, attempt=1)
    assert (claimed.kind, claimed.payload) == ("count", '{"steps":7}')
    assert store.get(job_id).status is Status.RUNNING


def test_the_store_records_the_times_it_is_given(store):
    job_id = queue(store)
    store.claim_next(runner_id=RUNNER, now=LATER)
    if not hasattr(store, "row"):
        pytest.skip("this store shows no raw rows")
    row = store.row(job_id)
    assert as_datetime(row["created_at"]) == T0
    assert as_datetime(row["started_at"]) == LATER
    assert (row["claimed_by"], row["attempt"]) == (RUNNER, 1)


def running(store, payload='{"steps":1}'):
    queue(store, payload=payload)
    return store.claim_next(runner_id=RUNNER, now=T0).claim


def stale_claims(claim: Claim) -> list[Claim]:
    return [
        Claim(job_id=claim.job_id, runner_id="runner-b", attempt=claim.attempt),
        Claim(job_id=claim.job_id, runner_id=claim.runner_id, attempt=claim.attempt + 1),
        Claim(job_id=new_id(), runner_id=claim.runner_id, attempt=claim.attempt),
    ]


def test_publish_stores_a_partial_result_only_under_the_same_claim(store):
    claim = running(store)
    assert store.publish(claim, result='{"done":1}', now=LATER)
    for stale in stale_claims(claim):
        assert not store.publish(stale, result='{"done":99}', now=LATER)
    job = store.get(claim.job_id)
    assert (job.status, job.result) == (Status.RUNNING, '{"done":1}')


def test_succeed_records_the_result_only_under_the_same_claim(store):
    claim = running(store)
    for stale in stale_claims(claim):
        assert not store.succeed(stale, result='{"done":99}', now=LATER)
    assert store.get(claim.job_id).status is Status.RUNNING
    assert store.succeed(claim, result='{"done":2}', now=LATER)
    job = store.get(claim.job_id)
    assert (job.status, job.result, job.error) == (Status.SUCCEEDED, '{"done":2}', None)


def test_fail_records_the_code_and_keeps_the_partial_result_only_under_the_same_claim(store):
    claim = running(store)
    store.publish(claim, result='{"done":1}', now=T0)
    for stale in stale_claims(claim):
        assert not store.fail(stale, code="quota_exceeded", now=LATER)
    assert store.get(claim.job_id).status is Status.RUNNING
    assert store.fail(claim, code="quota_exceeded", now=LATER)
    job = store.get(claim.job_id)
    assert (job.status, job.result, job.error) == (Status.FAILED, '{"done":1}', "quota_exceeded")


def test_a_finished_job_cannot_be_changed_again(store):
    claim = running(store)
    assert store.succeed(claim, result='{"done":1}', now=T0)
    assert not store.fail(claim, code="internal_error", now=LATER)
    assert not store.publish(claim, result='{"done":5}', now=LATER)
    assert not store.succeed(claim, result='{"done":6}', now=LATER)
    job = store.get(claim.job_id)
    assert (job.status, job.result, job.error) == (Status.SUCCEEDED, '{"done":1}', None)


def claimed_by(store, runner_id: str, payload='{"steps":1}'):
    queue(store, payload=payload)
    return store.claim_next(runner_id=runner_id, now=T0).claim


def test_recovery_settles_only_running_jobs_whose_owner_is_dead(store):
    store.hold_liveness("runner-live")
    live = claimed_by(store, "runner-live")
    done = running(store)
    store.succeed(done, result='{"done":3}', now=T0)
    interrupted = running(store)
    store.publish(interrupted, result='{"done":1}', now=T0)
    silent = running(store)
    queued = queue(store)

    recovered = store.recover_orphans(code="interrupted by restart", max_attempts={}, now=LATER)
    assert (recovered.failed, recovered.requeued) == (2, 0)

    assert store.get(live.job_id).status is Status.RUNNING  # its owner is alive
    assert store.get(queued).status is Status.QUEUED
    assert store.get(done.job_id).status is Status.SUCCEEDED
    job = store.get(interrupted.job_id)
    assert (job.status, job.result, job.error) == (
        Status.FAILED, '{"done":1}', "interrupted by restart",
    )  # fmt: skip
    assert store.get(silent.job_id).result is None
    assert not store.succeed(interrupted, result='{"done":9}', now=LATER)
    again = store.recover_orphans(code="interrupted by restart", max_attempts={}, now=LATER)
    assert (again.failed, again.requeued) == (0, 0)
    store.release_liveness("runner-live")


def test_a_released_liveness_lock_makes_the_runners_jobs_orphans(store):
    store.hold_liveness("runner-gone")
    claim = claimed_by(store, "runner-gone")
    assert store.recover_orphans(code="x", max_attempts={}, now=LATER).failed == 0
    store.release_liveness("runner-gone")
    store.release_liveness("runner-gone")  # idempotent
    assert store.recover_orphans(code="x", max_attempts={}, now=LATER).failed == 1
    assert store.get(claim.job_id).error == "x"


def test_an_orphan_with_attempts_left_is_queued_again_keeping_its_partial_result(store):
    claim = claimed_by(store, "runner-dead")
    store.publish(claim, result='{"done":1}', now=T0)

    recovered = store.recover_orphans(code="x", max_attempts={"count": 2}, now=LATER)
    assert (recovered.failed, recovered.requeued) == (0, 1)
    job = store.get(claim.job_id)
    assert (job.status, job.result, job.error) == (Status.QUEUED, '{"done":1}', None)

    second = store.claim_next(runner_id="runner-dead-too", now=LATER)
    assert second.claim == Claim(job_id=claim.job_id, runner_id="runner-dead-too", attempt=2)
    assert not store.succeed(claim, result="{}", now=LATER)  # the first claim is stale
    recovered = store.recover_orphans(code="x", max_attempts={"count": 2}, now=LATER)
    assert (recovered.failed, recovered.requeued) == (1, 0)
    assert store.get(claim.job_id).status is Status.FAILED


def test_get_of_an_unknown_id_returns_none(store):
    assert store.get(new_id()) is None
    assert store.get("not-an-id") is None


def test_concurrent_claimers_never_claim_one_job_twice(store):
    ids = {queue(store) for _ in range(300)}
    claimed: list[str] = []
    guard = threading.Lock()
    start = threading.Barrier(6)

    def claimer(name: str) -> None:
        start.wait()
        while (job := store.claim_next(runner_id=name, now=T0)) is not None:
            assert store.succeed(job.claim, result="{}", now=T0)
            with guard:
                claimed.append(job.id)

    threads = [threading.Thread(target=claimer, args=(f"runner-{n}",)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(claimed) == sorted(ids)
    assert all(store.get(job_id).status is Status.SUCCEEDED for job_id in ids)


def test_finish_and_claim_next_records_the_outcome_and_claims_the_next_job(store):
    from jobtable.core.outcome import Fail, Succeed

    first = running(store)
    waiting = queue(store)
    held, claimed = store.finish_and_claim_next(
        first, Succeed(result='{"done":1}'), runner_id=RUNNER, now=LATER
    )
    assert held is True
    assert claimed.claim == Claim(job_id=waiting, runner_id=RUNNER, attempt=1)
    assert store.get(first.job_id).status is Status.SUCCEEDED
    assert store.get(waiting).status is Status.RUNNING

    store.publish(claimed.claim, result='{"done":0}', now=LATER)
    held, none_left = store.finish_and_claim_next(
        claimed.claim, Fail(code="quota_exceeded", reason="r"), runner_id=RUNNER, now=LATER
    )
    assert (held, none_left) == (True, None)
    job = store.get(waiting)
    assert (job.status, job.error, job.result) == (Status.FAILED, "quota_exceeded", '{"done":0}')


def test_finish_and_claim_next_with_a_stale_claim_records_nothing_but_still_claims(store):
    from jobtable.core.outcome import Succeed

    claim = running(store)
    waiting = queue(store)
    stale = Claim(job_id=claim.job_id, runner_id="runner-b", attempt=claim.attempt)
    held, claimed = store.finish_and_claim_next(
        stale, Succeed(result="{}"), runner_id=RUNNER, now=LATER
    )
    assert held is False
    assert claimed.id == waiting
    assert store.get(claim.job_id).status is Status.RUNNING


def test_holding_liveness_again_keeps_it_and_one_release_lets_go(store):
    store.hold_liveness("runner-twice")
    claim = claimed_by(store, "runner-twice")
    store.hold_liveness("runner-twice")  # a sweep confirms its own lock like this
    assert store.recover_orphans(code="x", max_attempts={}, now=LATER).failed == 0
    store.release_liveness("runner-twice")
    assert store.recover_orphans(code="x", max_attempts={}, now=LATER).failed == 1
    assert store.get(claim.job_id).error == "x"


def test_running_claims_are_exactly_the_jobs_running_under_a_runner(store):
    mine = [claimed_by(store, "runner-me") for _ in range(2)]
    claimed_by(store, "runner-other")
    finished = claimed_by(store, "runner-me")
    store.succeed(finished, result='{"done":1}', now=T0)
    queue(store)
    assert sorted(store.running_claims("runner-me"), key=lambda c: c.job_id) == sorted(
        mine, key=lambda c: c.job_id
    )
    assert store.running_claims("runner-nobody") == []


def test_requeue_claims_moves_only_jobs_still_running_under_those_claims(store):
    lost = claimed_by(store, "runner-me")
    store.publish(lost, result='{"done":1}', now=T0)
    finished = claimed_by(store, "runner-me")
    store.succeed(finished, result='{"done":2}', now=T0)
    other = claimed_by(store, "runner-other")

    moved = store.requeue_claims([lost, finished, *stale_claims(other)], now=LATER)

    assert moved == 1
    assert store.get(other.job_id).status is Status.RUNNING
    assert store.get(finished.job_id).status is Status.SUCCEEDED
    job = store.get(lost.job_id)
    assert (job.status, job.result) == (Status.QUEUED, '{"done":1}')
    again = store.claim_next(runner_id="runner-me", now=LATER)
    assert (again.id, again.claim.attempt) == (lost.job_id, lost.attempt + 1)
    assert store.requeue_claims([], now=LATER) == 0
