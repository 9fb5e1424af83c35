"""Liveness instead of "fail everything running at start": only dead runners' jobs are settled."""

from __future__ import annotations

import threading

import attrs
import pytest

from jobtable.core import INTERRUPTED, JobContext, Status
from tests.unit.kinds_for_tests import CountPayload, CountResult, count


@attrs.define
class Gate:
    """A handler that holds its job running until the test opens the gate."""

    started: threading.Semaphore = attrs.Factory(lambda: threading.Semaphore(0))
    release: threading.Event = attrs.Factory(threading.Event)

    def handler(self, ctx: JobContext, payload: CountPayload) -> CountResult:
        ctx.publish(CountResult(done=1))
        self.started.release()
        self.release.wait(30)
        return CountResult(done=2)


@pytest.fixture
def gate():
    made = Gate()
    yield made
    made.release.set()


def test_a_second_runner_leaves_a_live_runners_running_jobs_alone(make_system, gate):
    first = make_system()
    kind = first.kinds.register("slow", gate.handler, payload=CountPayload)
    first.start()
    job_id = kind.enqueue(CountPayload())
    assert gate.started.acquire(timeout=10)

    second = make_system(sweep_interval=1.0)
    second.kinds.register("slow", gate.handler, payload=CountPayload)
    second.start()
    for _ in range(3):  # several sweeps pass
        second.clock.wait_for_sleepers(1)
        second.clock.advance(1.0)
    assert second.runner.get(job_id).status is Status.RUNNING

    gate.release.set()
    assert first.wait_for(job_id).status is Status.SUCCEEDED


def test_a_dead_runners_job_is_marked_interrupted_by_the_next_sweep(make_system, gate):
    first = make_system()
    kind = first.kinds.register("slow", gate.handler, payload=CountPayload)
    first.start()
    job_id = kind.enqueue(CountPayload())
    assert gate.started.acquire(timeout=10)

    survivor = make_system(sweep_interval=1.0)
    survivor.kinds.register("slow", gate.handler, payload=CountPayload)
    survivor.start()
    first.store.release_liveness(first.runner.id)  # as the kernel does when its process dies

    survivor.clock.wait_for_sleepers(1)
    survivor.clock.advance(1.0)
    job = survivor.wait_for(job_id)
    assert (job.status, job.error, job.result) == (Status.FAILED, INTERRUPTED, '{"done":1}')
    gate.release.set()  # the dead runner's late outcome is refused by the fence
    first.store.wait_until(lambda: "no longer held" in first.logs.text)
    assert first.runner.get(job_id).status is Status.FAILED


def test_a_dead_runners_job_with_attempts_left_is_queued_again_and_run(make_system, gate):
    first = make_system()
    kind = first.kinds.register("retry", gate.handler, payload=CountPayload, max_attempts=2)
    first.start()
    job_id = kind.enqueue(CountPayload())
    assert gate.started.acquire(timeout=10)
    first.store.release_liveness(first.runner.id)

    second = make_system()
    second.kinds.register(
        "retry", lambda ctx, p: CountResult(done=7), payload=CountPayload, result=CountResult,
        max_attempts=2,
    )  # fmt: skip
    second.start()
    job = second.wait_for(job_id)
    assert (job.status, job.result) == (Status.SUCCEEDED, '{"done":7}')
    assert second.store.row(job_id)["attempt"] == 2
    assert "requeued jobs of a dead runner count=1" in second.logs.text


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "2"])
def test_max_attempts_must_be_a_whole_number_of_at_least_one(make_system, value):
    from jobtable.core import RegistrationError

    with pytest.raises(RegistrationError, match="max_attempts"):
        make_system().kinds.register("x", gate_handler, payload=CountPayload, max_attempts=value)


def gate_handler(ctx: JobContext, payload: CountPayload) -> CountResult:
    return CountResult(done=0)


def test_by_default_a_runner_sweeps_for_dead_runners_jobs_every_second(shared_store):
    from jobtable.adapters.fake_clock import FakeClock
    from jobtable.core import NewJob, Runner

    clock = FakeClock()
    runner = Runner(shared_store, clock)  # the default sweep_interval
    runner.start()
    try:
        assert clock.wait_for_sleepers(1) == [pytest.approx(1.0)]
        # Claimed by a runner that is already gone (it holds no liveness lock); stored
        # directly, so no wake reaches this runner's idle workers.
        shared_store.create(NewJob(id="orphan", kind="noop", payload="{}"), now=clock.now())
        assert shared_store.claim_next(runner_id="gone", now=clock.now()).id == "orphan"
        clock.advance(1.0)
        shared_store.wait_until(lambda: shared_store.get("orphan").status is Status.FAILED)
        assert shared_store.get("orphan").error == INTERRUPTED
    finally:
        runner.stop()
        assert runner.join(timeout=None)


def test_a_runner_that_lost_its_lock_takes_it_again_before_it_sweeps(make_system, gate):
    system = make_system(sweep_interval=1.0)
    kind = system.kinds.register("slow", gate.handler, payload=CountPayload)
    system.start()
    job_id = kind.enqueue(CountPayload())
    assert gate.started.acquire(timeout=10)
    system.store.release_liveness(system.runner.id)  # as a database restart ends its session

    for _ in range(2):  # its own sweeps must not settle its own running job
        system.clock.wait_for_sleepers(1)
        system.clock.advance(1.0)
    system.clock.wait_for_sleepers(1)
    assert system.runner.get(job_id).status is Status.RUNNING
    other = make_system()
    assert (
        other.store.inner.recover_orphans(code="x", max_attempts={}, now=other.clock.now()).failed
        == 0
    )
    gate.release.set()
    assert system.wait_for(job_id).status is Status.SUCCEEDED


def test_a_claim_whose_reply_was_lost_is_queued_again_after_two_sweeps_and_runs(make_system):
    system = make_system(sweep_interval=1.0)
    kind = system.kinds.register("count", count, payload=CountPayload)
    system.store.lost_claims = 1  # the claim commits; the worker is told it failed
    system.start()
    job_id = kind.enqueue(CountPayload(steps=2))
    system.store.wait_until(lambda: system.store.lost_claims == 0)
    assert system.runner.get(job_id).status is Status.RUNNING  # held, yet run by no worker

    # The worker retries its claim after the backoff (and then idles: the queue is
    # empty); the first sweep suspects the job, the second queues it again.
    assert system.clock.wait_for_sleepers(2) == [pytest.approx(0.05), pytest.approx(1.0)]
    system.clock.advance(1.0)
    assert system.clock.wait_for_sleepers(1) == [pytest.approx(1.0)]
    assert system.runner.get(job_id).status is Status.RUNNING  # suspected, not yet moved
    system.clock.advance(1.0)
    job = system.wait_for(job_id)
    assert (job.status, job.result) == (Status.SUCCEEDED, '{"done":2}')
    assert "requeued jobs whose claim reply was lost count=1" in system.logs.text
    assert system.store.inner.row(job_id)["attempt"] == 2
