"""Once a job's handler has started, its attempt is spent, whatever raises afterwards.

A result's ``public()`` raising past ``Exception``, an observer (metrics)
raising, an outcome write that raises: none may let the sweep give the job
back as if it never ran, which would run it again and again, its attempt
returned each time.
"""

from __future__ import annotations

from typing import Any

import pytest

from jobtable.core import INTERNAL_ERROR, JobContext, Status
from jobtable.core.liveness import SWEEP_INTERVAL
from jobtable.core.observer import NoObserver
from tests.unit.kinds_for_tests import CountPayload, CountResult, count


class Unusual(BaseException):
    """Neither an Exception nor one of Python's own: some libraries raise such."""


class PublicRaises:
    def public(self) -> Any:
        raise Unusual()


class FailingMetrics(NoObserver):
    """An observer whose write for each attempt's end raises past every ``except Exception``."""

    def job_ended(self, kind: str, *, code: str, final: bool, seconds: float) -> None:
        if kind == "counted":
            raise Unusual()


def sweep_a_few_times(system: Any, times: int = 4) -> None:
    """Let the sweep look for lost claims (two sweeps make one lost) several times over."""
    for _ in range(times):
        system.clock.wait_for_sleeping(lambda sleeping: SWEEP_INTERVAL in sleeping)
        system.clock.advance(SWEEP_INTERVAL)


def test_a_result_whose_public_raises_past_exception_fails_its_job_once(make_system):
    system = make_system(sweep_interval=SWEEP_INTERVAL)
    runs: list[int] = []

    def odd_result(ctx: JobContext, payload: CountPayload) -> PublicRaises:
        runs.append(ctx.attempt)
        return PublicRaises()

    odd = system.kinds.register("odd", odd_result, payload=CountPayload)
    good = system.kinds.register("count", count, payload=CountPayload)
    system.start()
    job_id = odd.enqueue(CountPayload())
    job = system.wait_for(job_id)
    assert (job.status, job.error) == (Status.FAILED, INTERNAL_ERROR)
    sweep_a_few_times(system)
    assert system.wait_for(good.enqueue(CountPayload(steps=1))).status is Status.SUCCEEDED
    assert runs == [1]
    assert system.store.inner.row(job_id)["attempt"] == 1
    assert "exception_type=Unusual" in system.logs.text


@pytest.mark.parametrize("max_attempts", [1, 2])
def test_an_observer_raising_after_the_handler_spends_the_attempt(make_system, max_attempts):
    system = make_system(sweep_interval=SWEEP_INTERVAL, observer=FailingMetrics())
    runs: list[int] = []

    def counted(ctx: JobContext, payload: CountPayload) -> CountResult:
        runs.append(ctx.attempt)
        return CountResult(done=1)

    kind = system.kinds.register(
        "counted", counted, payload=CountPayload, max_attempts=max_attempts, backoff=(0, 0)
    )
    system.start()
    job_id = kind.enqueue(CountPayload())
    job = system.wait_for(job_id, lambda job: job is not None and job.status is Status.FAILED)
    assert job.error == INTERNAL_ERROR
    sweep_a_few_times(system)
    assert runs == list(range(1, max_attempts + 1))
    assert system.runner.get(job_id).status is Status.FAILED
    assert "worker crashed after a job's handler started" in system.logs.text
    assert system.runner.live_workers == 1  # the crashed worker was replaced


def test_an_outcome_whose_writes_raise_past_exception_is_written_later_never_given_back(
    make_system,
):
    system = make_system(sweep_interval=SWEEP_INTERVAL)
    store = system.store
    runs: list[int] = []

    def counted(ctx: JobContext, payload: CountPayload) -> CountResult:
        runs.append(ctx.attempt)
        return CountResult(done=1)

    kind = system.kinds.register("counted", counted, payload=CountPayload)
    raises = [1]
    real_batch = store.run_batch

    def run_batch(batch: Any, **arguments: Any) -> Any:
        if batch.outcomes and raises[0]:
            raises[0] -= 1
            raise Unusual()
        return real_batch(batch, **arguments)

    store.run_batch = run_batch
    system.start()
    job_id = kind.enqueue(CountPayload())
    store.wait_until(lambda: raises[0] == 0)
    sweep_a_few_times(system)  # the outcome waits to be written: its job is not lost
    job = system.wait_for(job_id)
    assert job.status is Status.SUCCEEDED
    assert runs == [1]
    assert store.inner.row(job_id)["attempt"] == 1
    assert "record job outcome failed; retrying" in system.logs.text


class BrokenMetrics(NoObserver):
    def job_ended(self, kind: str, *, code: str, final: bool, seconds: float) -> None:
        raise ValueError("the metrics backend is down")


def test_an_observer_that_fails_changes_no_outcome(make_system):
    system = make_system(observer=BrokenMetrics())
    kind = system.kinds.register("count", count, payload=CountPayload)
    system.start()
    assert system.wait_for(kind.enqueue(CountPayload(steps=2))).status is Status.SUCCEEDED
    assert "observer failed; the job goes on event=job_ended" in system.logs.text
    assert "the metrics backend is down" not in system.logs.text
