"""The jobs a runner holds (``running_jobs``) and settling a dead one's (``settle_dead``).

The core decides each settled job's outcome (core/settling.py); these tests hand the
store outcomes of their own, to show it records them as given, on every store.
"""

from __future__ import annotations

from jobtable.core import Claim, DeadRunner, Recovered, Status
from jobtable.core.codes import CANCELLED, INTERRUPTED
from jobtable.core.jobs import HeldJob
from jobtable.core.liveness import Settlement
from jobtable.core.outcome import Fail, Outcome, RunAgain, Succeed
from jobtable.core.retry import RetryPolicy
from tests.contract.test_lifecycle_contract import T0, add, later
from tests.contract.test_store_contract import runner_info, sighting
from tests.support.rows import write_row
from tests.support.stores import break_lock

DEAD = "runner-dead"


def claimed_by(store, runner_id: str) -> Claim:
    return store.claim_next(runner_id=runner_id, now=T0, kinds={"count", "mail"}).claim


def gone(runner_id: str = DEAD) -> DeadRunner:
    return DeadRunner(runner_id=runner_id, registered=False, beat=None, lock_absent=True)


def settlement(verdict: DeadRunner, *outcomes: tuple[HeldJob, Outcome]) -> Settlement:
    return Settlement(verdict=verdict, outcomes=outcomes)


def held(store, runner_id: str | None = DEAD) -> dict[str, HeldJob]:
    return {job.claim.job_id: job for job in store.running_jobs(runner_id)}


def test_running_jobs_are_the_jobs_running_under_an_owner_with_their_stored_policies(store):
    flaky = RetryPolicy(max_attempts=3, retry_on=frozenset({"flaky"}), backoff_base=5.0)
    first = add(store, "mail", retry=flaky, max_attempts=3)
    mine = claimed_by(store, DEAD)
    add(store)
    claimed_by(store, "runner-other")
    finished = add(store)
    done = claimed_by(store, DEAD)
    store.record(done, Succeed(result="{}"), now=T0)
    add(store)  # queued: not running

    assert store.running_jobs(DEAD) == [
        HeldJob(claim=mine, kind="mail", policy=flaky),
    ]
    assert held(store)[first].claim.attempt == 1
    assert finished not in held(store)
    assert store.running_jobs("runner-nobody") == []


def test_running_jobs_of_no_owner_are_the_running_rows_that_record_none(store):
    job_id = add(store, max_attempts=2)
    write_row(store, job_id, status="running", claimed_by=None, attempt=0)
    (job,) = store.running_jobs(None)
    assert (job.claim.job_id, job.claim.attempt, job.kind) == (job_id, 0, "count")
    assert job.policy == RetryPolicy(max_attempts=2)


def test_settle_dead_records_each_outcome_as_given_and_deletes_the_runners_row(store):
    store.register_runner(runner_info(DEAD), now=T0)
    store.register_runner(runner_info("runner-live"), now=T0)
    failing = add(store, max_attempts=5)  # attempts left: failed all the same, as given
    running_again = add(store, max_attempts=1)  # none left: queued again all the same
    claimed_by(store, DEAD), claimed_by(store, DEAD)
    add(store)
    live = claimed_by(store, "runner-live")
    jobs = held(store)
    break_lock(store, DEAD)
    beat = sighting(store, DEAD).beat
    verdict = DeadRunner(runner_id=DEAD, registered=True, beat=beat, lock_absent=True)

    recovered = store.settle_dead(
        [
            settlement(
                verdict,
                (jobs[failing], Fail(code="gave_up")),
                (jobs[running_again], RunAgain(run_at=later(60), code=INTERRUPTED)),
            )
        ],
        now=later(5),
    )

    assert (recovered.failed, recovered.requeued) == (1, 1)
    assert (store.get(failing).status, store.get(failing).error) == (Status.FAILED, "gave_up")
    assert store.get(running_again).status is Status.QUEUED
    assert store.next_due() is not None and store.promote_due(now=later(59)) == 0
    assert store.promote_due(now=later(60)) == 1
    assert store.get(live.job_id).status is Status.RUNNING
    assert [record.info.id for record in store.runners()] == ["runner-live"]
    store.unregister_runner("runner-live")


def test_settle_dead_leaves_a_job_that_ended_meanwhile_as_it_is(store):
    job_id = add(store, max_attempts=3)
    claim = claimed_by(store, DEAD)
    (job,) = store.running_jobs(DEAD)
    assert store.record(claim, Succeed(result='{"done":1}'), now=T0)  # a late reply landed

    recovered = store.settle_dead([settlement(gone(), (job, Fail(code=INTERRUPTED)))], now=later(5))

    assert (recovered.failed, recovered.requeued) == (0, 0)
    assert store.get(job_id).status is Status.SUCCEEDED


def test_settle_dead_records_nothing_when_the_evidence_changed(store):
    store.register_runner(runner_info(DEAD), now=T0)
    job_id = add(store)
    claimed_by(store, DEAD)
    (job,) = store.running_jobs(DEAD)
    break_lock(store, DEAD)
    beat = sighting(store, DEAD).beat
    store.beat(DEAD, busy=1, now=later(1))  # alive after all: it beat after the verdict
    verdict = DeadRunner(runner_id=DEAD, registered=True, beat=beat, lock_absent=True)

    recovered = store.settle_dead(
        [settlement(verdict, (job, Fail(code=INTERRUPTED)))], now=later(5)
    )

    assert (recovered.failed, recovered.requeued) == (0, 0)
    assert store.get(job_id).status is Status.RUNNING
    assert [record.info.id for record in store.runners()] == [DEAD]
    store.unregister_runner(DEAD)


def test_a_settlement_without_jobs_still_deletes_the_dead_runners_row(store):
    store.register_runner(runner_info(DEAD), now=T0)
    break_lock(store, DEAD)
    beat = sighting(store, DEAD).beat
    verdict = DeadRunner(runner_id=DEAD, registered=True, beat=beat, lock_absent=True)
    assert store.settle_dead([settlement(verdict)], now=later(5)) == Recovered()
    assert store.runners() == []


def test_a_pending_cancel_turns_a_settled_run_again_into_failed_cancelled(store):
    job_id = add(store, max_attempts=3, unique_key="k")
    claimed_by(store, DEAD)
    (job,) = store.running_jobs(DEAD)
    store.cancel(job_id, now=T0)
    outcome = RunAgain(run_at=later(5), code=INTERRUPTED)

    store.settle_dead([settlement(gone(), (job, outcome))], now=later(5))

    assert (store.get(job_id).status, store.get(job_id).error) == (Status.FAILED, CANCELLED)


def test_a_settled_row_of_no_owner_and_no_attempt_counts_one_attempt(store):
    job_id = add(store, max_attempts=3)
    write_row(store, job_id, status="running", claimed_by=None, attempt=0)
    (job,) = store.running_jobs(None)
    again = RunAgain(run_at=later(5), code=INTERRUPTED)

    recovered = store.settle_dead([settlement(gone(None), (job, again))], now=later(5))

    assert recovered.requeued == 1
    assert store.detail(job_id).attempt == 1
    assert store.claim_next(runner_id="r", now=later(5), kinds={"count"}).claim.attempt == 2
