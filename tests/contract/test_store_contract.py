"""The contract every JobStore keeps, run against each adapter."""

from __future__ import annotations

import datetime
import threading

import pytest

from jobtable.core import Claim, DeadRunner, LockState, NewJob, RunnerInfo, Status
from jobtable.core.ids import JobIdGenerator
from jobtable.core.outcome import Fail, Succeed
from tests.support.harness import as_datetime
from tests.support.settling import interrupt, running_claims, settle_dead
from tests.support.stores import break_lock
from tests.support.threads import run_in_threads

T0 = datetime.datetime(2026, 3, 1, 12, 0, tzinfo=datetime.UTC)
LATER = T0 + datetime.timedelta(seconds=90)
RUNNER = "runner-a"
_ids = JobIdGenerator()


def new_id(ms: int = 1_772_366_400_000) -> str:
    return _ids.next_id(ms)


def queue(
    store,
    kind: str = "count",
    payload: str = '{"steps":1}',
    job_id: str | None = None,
    max_attempts: int = 1,
):
    job_id = job_id or new_id()
    store.create(NewJob(id=job_id, kind=kind, payload=payload, max_attempts=max_attempts), now=T0)
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
    assert (job.status, job.result) == (Status.RUNNING, {"done": 1})


def test_succeed_records_the_result_only_under_the_same_claim(store):
    claim = running(store)
    for stale in stale_claims(claim):
        assert not store.record(stale, Succeed(result='{"done":99}'), now=LATER)
    assert store.get(claim.job_id).status is Status.RUNNING
    assert store.record(claim, Succeed(result='{"done":2}'), now=LATER)
    job = store.get(claim.job_id)
    assert (job.status, job.result, job.error) == (Status.SUCCEEDED, {"done": 2}, None)


def test_fail_records_the_code_and_keeps_the_partial_result_only_under_the_same_claim(store):
    claim = running(store)
    store.publish(claim, result='{"done":1}', now=T0)
    for stale in stale_claims(claim):
        assert not store.record(stale, Fail(code="quota_exceeded"), now=LATER)
    assert store.get(claim.job_id).status is Status.RUNNING
    assert store.record(claim, Fail(code="quota_exceeded"), now=LATER)
    job = store.get(claim.job_id)
    assert (job.status, job.result, job.error) == (Status.FAILED, {"done": 1}, "quota_exceeded")


def test_a_finished_job_cannot_be_changed_again(store):
    claim = running(store)
    assert store.record(claim, Succeed(result='{"done":1}'), now=T0)
    assert not store.record(claim, Fail(code="internal_error"), now=LATER)
    assert not store.publish(claim, result='{"done":5}', now=LATER)
    assert not store.record(claim, Succeed(result='{"done":6}'), now=LATER)
    job = store.get(claim.job_id)
    assert (job.status, job.result, job.error) == (Status.SUCCEEDED, {"done": 1}, None)


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
            with guard:
                claimed.append(job.id)
            # Each claim must be the only one: a second claimer's succeed would fail here.
            assert store.record(job.claim, Succeed(result="{}"), now=T0)

    run_in_threads([lambda n=n: claimer(f"runner-{n}") for n in range(6)])
    assert len(claimed) == len(set(claimed)), "a job was claimed twice"
    assert sorted(claimed) == sorted(ids)
    assert all(store.get(job_id).status is Status.SUCCEEDED for job_id in ids)


def test_record_and_claim_records_the_outcome_and_claims_the_next_job(store):

    first = running(store)
    waiting = queue(store)
    (held,), (claimed,) = store.record_and_claim(
        [(first, Succeed(result='{"done":1}'))], limit=1, runner_id=RUNNER, now=LATER
    )
    assert held is True
    assert claimed.claim == Claim(job_id=waiting, runner_id=RUNNER, attempt=1)
    assert store.get(first.job_id).status is Status.SUCCEEDED
    assert store.get(waiting).status is Status.RUNNING

    store.publish(claimed.claim, result='{"done":0}', now=LATER)
    held, none_left = store.record_and_claim(
        [(claimed.claim, Fail(code="quota_exceeded"))],
        limit=1,
        runner_id=RUNNER,
        now=LATER,
    )
    assert (held, none_left) == ([True], [])
    job = store.get(waiting)
    assert (job.status, job.error, job.result) == (Status.FAILED, "quota_exceeded", {"done": 0})


def test_record_and_claim_with_a_stale_claim_records_nothing_but_still_claims(store):

    claim = running(store)
    waiting = queue(store)
    stale = Claim(job_id=claim.job_id, runner_id="runner-b", attempt=claim.attempt)
    (held,), (claimed,) = store.record_and_claim(
        [(stale, Succeed(result="{}"))], limit=1, runner_id=RUNNER, now=LATER
    )
    assert held is False
    assert claimed.id == waiting
    assert store.get(claim.job_id).status is Status.RUNNING


def test_running_jobs_are_exactly_the_jobs_running_under_a_runner(store):
    mine = [claimed_by(store, "runner-me") for _ in range(2)]
    claimed_by(store, "runner-other")
    finished = claimed_by(store, "runner-me")
    store.record(finished, Succeed(result='{"done":1}'), now=T0)
    queue(store)
    assert sorted(running_claims(store, "runner-me"), key=lambda c: c.job_id) == sorted(
        mine, key=lambda c: c.job_id
    )
    assert running_claims(store, "runner-nobody") == []


def claimed_by(store, runner_id: str, payload='{"steps":1}', max_attempts: int = 1) -> Claim:
    queue(store, payload=payload, max_attempts=max_attempts)
    return store.claim_next(runner_id=runner_id, now=T0).claim


def test_release_claims_gives_back_untouched_only_jobs_still_running_under_those_claims(store):
    lost = claimed_by(store, "runner-me")
    store.publish(lost, result='{"done":1}', now=T0)
    finished = claimed_by(store, "runner-me")
    store.record(finished, Succeed(result='{"done":2}'), now=T0)
    other = claimed_by(store, "runner-other")

    moved = store.put_back([lost, finished, *stale_claims(other)], now=LATER)

    assert moved == 1
    assert store.get(other.job_id).status is Status.RUNNING
    assert store.get(finished.job_id).status is Status.SUCCEEDED
    job = store.get(lost.job_id)
    assert (job.status, job.result) == (Status.QUEUED, {"done": 1})
    again = store.claim_next(runner_id="runner-me", now=LATER)
    assert (again.id, again.claim.attempt) == (lost.job_id, lost.attempt)  # attempt given back
    assert store.put_back([], now=LATER) == 0


@pytest.mark.parametrize(
    ("max_attempts", "expected"),
    [(1, (Status.FAILED, "interrupted by restart")), (2, (Status.QUEUED, None))],
)
def test_interrupt_queues_a_job_again_while_its_stored_attempts_last(store, max_attempts, expected):
    claim = claimed_by(store, RUNNER, max_attempts=max_attempts)
    store.publish(claim, result='{"done":1}', now=T0)
    for stale in stale_claims(claim):
        assert not interrupt(store, stale, code="interrupted by restart", now=LATER)
    assert interrupt(store, claim, code="interrupted by restart", now=LATER)
    job = store.get(claim.job_id)
    assert (job.status, job.error, job.result) == (*expected, {"done": 1})
    assert not interrupt(store, claim, code="interrupted by restart", now=LATER)


def runner_info(runner_id: str, **changes) -> RunnerInfo:
    fields = {
        "id": runner_id, "host": "host-a", "pid": 4242, "started_at": T0,
        "kinds": ("count", "noop"), "queues": None, "workers": 3,
    }  # fmt: skip
    return RunnerInfo(**{**fields, **changes})


def sighting(store, runner_id):
    found = [seen for seen in store.sight_runners() if seen.runner_id == runner_id]
    assert len(found) <= 1
    return found[0] if found else None


def test_a_registered_runner_is_listed_with_what_it_said_of_itself(store):
    store.register_runner(runner_info("runner-a"), now=T0)
    store.register_runner(runner_info("runner-b", queues=("mail",), workers=1), now=T0)
    assert store.beat("runner-a", busy=2, now=LATER)
    read_from = datetime.datetime.now(datetime.UTC)
    records = {record.info.id: record for record in store.runners()}
    assert records["runner-a"].info == runner_info("runner-a")
    assert records["runner-a"].busy == 2
    last_seen = as_datetime(records["runner-a"].last_seen)
    if type(store).__name__ == "SqliteStore":
        # SQLite: the lock (held here) is the proof of life; an idle runner writes no beat,
        # so last_seen is when this reader saw the lock held.
        assert read_from <= last_seen <= datetime.datetime.now(datetime.UTC)
    else:
        assert last_seen == LATER  # the owner's own clock at its last beat
    assert records["runner-b"].info.queues == ("mail",)
    store.unregister_runner("runner-a")
    store.unregister_runner("runner-a")  # idempotent
    assert [record.info.id for record in store.runners()] == ["runner-b"]
    store.unregister_runner("runner-b")


def test_a_live_runners_lock_is_held_and_each_beat_raises_its_counter(store):
    store.register_runner(runner_info("runner-live"), now=T0)
    first = sighting(store, "runner-live")
    assert (first.registered, first.lock) == (True, LockState.HELD)
    assert store.beat("runner-live", busy=0, now=LATER)
    assert sighting(store, "runner-live").beat > first.beat
    assert not store.beat("runner-nobody", busy=0, now=LATER)  # no row: False
    assert store.confirm_liveness("runner-live", timeout=5) is True
    store.unregister_runner("runner-live")
    assert sighting(store, "runner-live") is None


def test_a_lost_lock_shows_absent_and_is_taken_again_by_its_owner(store):
    store.register_runner(runner_info("runner-lost"), now=T0)
    break_lock(store, "runner-lost")
    assert sighting(store, "runner-lost").lock is LockState.ABSENT
    assert store.confirm_liveness("runner-lost", timeout=5) is False  # taken again
    assert sighting(store, "runner-lost").lock is LockState.HELD
    assert store.confirm_liveness("runner-lost", timeout=5) is True
    store.unregister_runner("runner-lost")


def test_owners_of_running_jobs_without_a_row_are_sighted_unregistered(store):
    store.register_runner(runner_info("runner-gone"), now=T0)
    claim = claimed_by(store, "runner-gone")
    store.unregister_runner("runner-gone")  # stopped, leaving a job a handler never gave up
    found = sighting(store, "runner-gone")
    assert (found.registered, found.beat) == (False, None)
    assert found.lock is not LockState.HELD
    recovered = settle_dead(
        store,
        [DeadRunner(runner_id="runner-gone", registered=False, beat=None, lock_absent=False)],
        code="interrupted by restart",
        now=LATER,
    )
    assert (recovered.failed, recovered.requeued) == (1, 0)
    assert store.get(claim.job_id).error == "interrupted by restart"
    assert sighting(store, "runner-gone") is None


def dead(runner_id, beat, *, lock_absent=True):
    return DeadRunner(runner_id=runner_id, registered=True, beat=beat, lock_absent=lock_absent)


def test_settling_a_dead_runner_settles_only_its_running_jobs_and_removes_its_row(store):
    store.register_runner(runner_info("runner-dead"), now=T0)
    store.register_runner(runner_info("runner-live"), now=T0)
    live = claimed_by(store, "runner-live")
    interrupted = claimed_by(store, "runner-dead")
    store.publish(interrupted, result='{"done":1}', now=T0)
    retried = claimed_by(store, "runner-dead", max_attempts=3)
    done = claimed_by(store, "runner-dead")
    store.record(done, Succeed(result='{"done":3}'), now=T0)
    queued = queue(store)
    break_lock(store, "runner-dead")
    beat = sighting(store, "runner-dead").beat

    recovered = settle_dead(
        store, [dead("runner-dead", beat)], code="interrupted by restart", now=LATER
    )

    assert (recovered.failed, recovered.requeued) == (1, 1)
    job = store.get(interrupted.job_id)
    assert (job.status, job.result, job.error) == (
        Status.FAILED, {"done": 1}, "interrupted by restart",
    )  # fmt: skip
    assert store.get(retried.job_id).status is Status.QUEUED
    assert store.get(live.job_id).status is Status.RUNNING
    assert store.get(done.job_id).status is Status.SUCCEEDED
    assert store.get(queued).status is Status.QUEUED
    assert not store.record(
        interrupted, Succeed(result='{"done":9}'), now=LATER
    )  # its late write: fenced
    assert [r.info.id for r in store.runners()] == ["runner-live"]
    again = settle_dead(store, [dead("runner-dead", beat)], code="x", now=LATER)
    assert (again.failed, again.requeued) == (0, 0)
    store.unregister_runner("runner-live")


def test_settling_is_refused_when_the_evidence_changed_since_the_verdict(store):
    store.register_runner(runner_info("runner-back"), now=T0)
    claim = claimed_by(store, "runner-back")
    break_lock(store, "runner-back")
    beat = sighting(store, "runner-back").beat

    store.beat("runner-back", busy=1, now=LATER)  # it beat after the verdict was reached
    assert settle_dead(store, [dead("runner-back", beat)], code="x", now=LATER).failed == 0
    beat = sighting(store, "runner-back").beat
    store.confirm_liveness("runner-back", timeout=5)  # it took its lock again
    assert settle_dead(store, [dead("runner-back", beat)], code="x", now=LATER).failed == 0
    assert store.get(claim.job_id).status is Status.RUNNING
    # A lease verdict (beat only) still holds while the beat has not moved.
    settled = settle_dead(
        store, [dead("runner-back", beat, lock_absent=False)], code="x", now=LATER
    )
    assert settled.failed == 1
    store.unregister_runner("runner-back")


def test_a_created_job_keeps_its_attempt_budget(store):
    job_id = queue(store, max_attempts=4)
    if not hasattr(store, "row"):
        pytest.skip("this store shows no raw rows")
    assert store.row(job_id)["max_attempts"] == 4


def test_a_claim_takes_only_the_kinds_it_is_given(store):
    other = queue(store, kind="mail")
    mine = queue(store, kind="count")
    assert store.claim_next(runner_id=RUNNER, now=T0, kinds=("count", "noop")).id == mine
    assert store.claim_next(runner_id=RUNNER, now=T0, kinds=("count",)) is None
    assert store.get(other).status is Status.QUEUED
    held, claimed = store.record_and_claim(
        [(running_claims(store, RUNNER)[0], Succeed(result="{}"))], limit=2, runner_id=RUNNER,
        now=T0, kinds=("noop",),
    )  # fmt: skip
    assert (held, claimed) == ([True], [])
    assert store.claim_next(runner_id=RUNNER, now=T0, kinds=("mail",)).id == other


def test_a_runner_registers_again_after_being_settled_while_it_holds_its_lock(store):
    """What a live runner judged dead does: its row is gone, its lock it holds still."""
    store.register_runner(runner_info("runner-back"), now=T0)
    claim = claimed_by(store, "runner-back")
    settle_dead(store, [dead("runner-back", 0, lock_absent=False)], code="x", now=LATER)
    assert store.get(claim.job_id).status is Status.FAILED
    assert not store.beat("runner-back", busy=0, now=LATER)  # no row: it learns it was settled
    store.register_runner(runner_info("runner-back"), now=LATER)  # its lock is kept, not doubled
    assert store.beat("runner-back", busy=0, now=LATER)
    assert sighting(store, "runner-back").lock is LockState.HELD
    assert store.confirm_liveness("runner-back", timeout=5) is True
    store.unregister_runner("runner-back")
