"""No job abandoned, no worker lost: two-phase stops, claims in flight, handlers that raise anything."""

from __future__ import annotations

import threading

import pytest

from jobtable.core import INTERNAL_ERROR, JobContext, Status
from tests.unit.kinds_for_tests import CountPayload, CountResult, count


def test_the_first_phase_lets_running_jobs_finish_without_telling_them(make_system):
    system = make_system()
    started, release = threading.Event(), threading.Event()
    seen = []

    def patient(ctx: JobContext, payload: CountPayload) -> CountResult:
        started.set()
        release.wait(30)
        seen.append(ctx.stopping)
        return CountResult(done=1)

    kind = system.kinds.register("patient", patient, payload=CountPayload)
    system.start()
    job_id = kind.enqueue(CountPayload())
    waiting = kind.enqueue(CountPayload())
    assert started.wait(10)
    system.runner.stop()  # the first phase only
    release.set()
    assert system.runner.join(timeout=None)
    assert seen == [False]  # never told: it was allowed to finish
    assert system.runner.get(job_id).status is Status.SUCCEEDED
    assert system.runner.get(waiting).status is Status.QUEUED  # no new job was taken


def test_shutdown_tells_handlers_to_stop_once_the_grace_period_is_over(make_system):
    system = make_system()
    started = threading.Event()

    def long(ctx: JobContext, payload: CountPayload) -> CountResult:
        started.set()
        return CountResult(done=1 if ctx.wait(3600) else 0)  # returns early only if told

    kind = system.kinds.register("long", long, payload=CountPayload)
    system.start()
    job_id = kind.enqueue(CountPayload())
    assert started.wait(10)
    result = []
    stopper = threading.Thread(target=lambda: result.append(system.runner.shutdown(grace=10)))
    stopper.start()
    assert system.clock.wait_for_sleepers(2) == [pytest.approx(10), pytest.approx(3600)]
    assert system.runner.get(job_id).status is Status.RUNNING
    system.clock.advance(10)  # the grace period runs out
    stopper.join(10)
    assert result == [True]
    job = system.runner.get(job_id)
    assert (job.status, job.result) == (Status.SUCCEEDED, {"done": 1})


def test_a_claim_that_returns_after_stop_is_given_back_untouched(make_system):
    system = make_system()
    ran = []
    kind = system.kinds.register(
        "count", lambda ctx, p: ran.append(ctx.job_id) or CountResult(done=1),
        payload=CountPayload, result=CountResult,
    )  # fmt: skip
    store = system.store
    real_batch = store.run_batch
    in_flight, land = threading.Event(), threading.Event()

    def slow_claim(batch, **arguments):
        done = real_batch(batch, **arguments)
        if done.claimed or any(done.started):
            in_flight.set()
            land.wait(10)  # the reply is on its way while the runner stops
        return done

    store.run_batch = slow_claim
    system.start()
    job_id = kind.enqueue(CountPayload())
    assert in_flight.wait(10)
    system.runner.stop()
    land.set()
    assert system.runner.join(timeout=None)
    assert ran == []
    assert system.runner.get(job_id).status is Status.QUEUED
    assert store.row(job_id)["attempt"] == 0  # its attempt given back
    assert f"gave back a job claimed while stopping job_id={job_id}" in system.logs.text


def test_a_next_job_taken_as_stop_lands_is_given_back(make_system):
    system = make_system()
    kind = system.kinds.register("count", count, payload=CountPayload)
    store = system.store
    real_batch = store.run_batch
    takes = []

    def take_as_stop_lands(batch, **arguments):
        if batch.claim or batch.starts:
            takes.append(batch)
            if len(takes) == 2:
                system.runner.stop()  # lands while the next job's claim commits
        return real_batch(batch, **arguments)

    store.run_batch = take_as_stop_lands
    first, second = kind.enqueue(CountPayload(steps=1)), kind.enqueue(CountPayload(steps=2))
    system.start()
    assert system.runner.join(timeout=10)
    assert system.runner.get(first).status is Status.SUCCEEDED
    assert system.runner.get(second).status is Status.QUEUED
    assert store.row(second)["attempt"] == 0


class Unusual(BaseException):
    """Neither an Exception nor one of Python's own: some libraries raise such."""


@pytest.mark.parametrize("raised", [SystemExit(3), KeyboardInterrupt(), Unusual()])
def test_a_handler_raising_any_base_exception_fails_its_job_and_the_worker_goes_on(
    make_system, raised
):
    system = make_system(workers=2)

    def raises(ctx: JobContext, payload: CountPayload) -> CountResult:
        raise raised

    bad = system.kinds.register("raises", raises, payload=CountPayload)
    good = system.kinds.register("count", count, payload=CountPayload)
    system.start()
    failed = [bad.enqueue(CountPayload()) for _ in range(3)]
    for job_id in failed:
        job = system.wait_for(job_id)
        assert (job.status, job.error) == (Status.FAILED, INTERNAL_ERROR)
    assert system.wait_for(good.enqueue(CountPayload(steps=4))).status is Status.SUCCEEDED
    assert system.runner.live_workers == 2
    assert f"exception_type={type(raised).__name__}" in system.logs.text


def test_a_worker_that_crashes_is_replaced_and_the_pool_keeps_its_size(make_system):
    system = make_system(workers=2)
    kind = system.kinds.register("count", count, payload=CountPayload)
    store = system.store
    real_batch = store.run_batch
    crashes = [Unusual(), Unusual()]

    def crashing_claim(batch, **arguments):
        if crashes and not batch.outcomes:
            raise crashes.pop()  # past every `except Exception` in the worker
        return real_batch(batch, **arguments)

    store.run_batch = crashing_claim
    system.start()
    ids = [kind.enqueue(CountPayload(steps=n)) for n in range(6)]
    for job_id in ids:
        assert system.wait_for(job_id).status is Status.SUCCEEDED
    assert crashes == []
    assert system.logs.text.count("worker crashed; starting another") == 2
    assert system.runner.live_workers == 2


def test_an_attempt_the_runner_settles_stays_held_until_its_write_is_done():
    """Else a sweep would take its job for a lost claim and give it back meanwhile."""
    from jobtable.core import Claim
    from jobtable.core.attempts import Attempts

    attempts = Attempts(1)
    claim = Claim(job_id="j", runner_id="r", attempt=1)
    attempt = attempts.begin(0, claim)
    assert attempts.take_settling(attempt, "runner")
    attempts.abandon(attempt)
    replacement = attempts.begin(0, Claim(job_id="k", runner_id="r", attempt=1))
    assert {held.claim.job_id for held in attempts.snapshot()} == {"j", "k"}
    attempts.settled(attempt)
    assert attempts.snapshot() == [replacement]
    assert not attempts.take_settling(attempt, "worker")  # its worker records nothing
