"""Background threads never die for good: the scheduler's wait is bounded however far off
the next due job is, and a loop that raises (the scheduler, the sweeper, the liveness check,
retention) is logged and started again."""

from __future__ import annotations

import datetime
import threading

import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.core import INTERRUPTED, NewJob, Status
from jobtable.core.jobs import Retention
from jobtable.core.liveness import CHECK_INTERVAL, IDLE_CHECK_INTERVAL, SWEEP_INTERVAL
from jobtable.core.looper import keep_looping
from jobtable.core.retention import PruneLoop, Pruner
from jobtable.core.scheduler import LONGEST_WAIT
from tests.support.logs import LogCapture
from tests.unit.kinds_for_tests import CountPayload, count
from tests.unit.test_liveness import a_dead_runner_holding, sweep


class Unusual(BaseException):
    """Neither an Exception nor one of Python's own: past every `except Exception`."""


def far_future_row(system, job_id: str = "far") -> None:
    """A job due in the year 2600, as an older version or a tool could have stored it."""
    system.store.create(
        NewJob(
            id=job_id,
            kind="count",
            payload="{}",
            run_at=datetime.datetime(2600, 1, 1, tzinfo=datetime.UTC),
        ),
        now=system.clock.now(),
    )


def test_a_job_due_centuries_ahead_leaves_the_scheduler_waking_within_the_hour(make_system):
    system = make_system()
    kind = system.kinds.register("count", count, payload=CountPayload)
    far_future_row(system)
    system.start()
    assert system.clock.wait_for_sleepers(1) == [LONGEST_WAIT]
    soon = kind.enqueue(CountPayload(steps=1), delay=5)
    system.clock.wait_for_sleeping(lambda sleeping: sleeping == [5.0])
    system.clock.advance(5)
    assert system.wait_for(soon).status is Status.SUCCEEDED
    assert system.runner.get("far").status is Status.QUEUED


def test_a_loop_that_raises_is_logged_and_started_again():
    clock, logs = FakeClock(), LogCapture()
    runs: list[int] = []

    def loop() -> None:
        runs.append(len(runs))
        if len(runs) < 3:
            raise Unusual()

    ended = threading.Event()
    thread = threading.Thread(
        target=keep_looping, args=("jobtable-test", loop, clock, logs.logger, ended.is_set)
    )
    thread.start()
    assert clock.wait_for_sleepers(1) == [0.05]  # the claim-retry backoff, doubling
    clock.advance(0.05)
    assert clock.wait_for_sleeping(lambda sleeping: sleeping == [pytest.approx(0.1)])
    clock.advance(0.1)
    thread.join(10)
    assert not thread.is_alive()
    assert runs == [0, 1, 2]
    assert logs.text.count("background thread crashed; restarting it thread=jobtable-test") == 2
    assert "category=unexpected Unusual" in logs.text


def test_a_loop_is_not_started_again_once_its_owner_is_done():
    clock, logs = FakeClock(), LogCapture()
    ended = threading.Event()

    def loop() -> None:
        ended.set()
        raise Unusual()

    keep_looping("jobtable-test", loop, clock, logs.logger, ended.is_set)
    assert "restarting" not in logs.text


def test_a_scheduler_that_crashes_is_started_again_and_promotes_what_falls_due(make_system):
    system = make_system()
    kind = system.kinds.register("count", count, payload=CountPayload)
    store = system.store
    real_next_due = store.next_due
    crashes = [Unusual()]

    def next_due():
        if crashes:
            raise crashes.pop()
        return real_next_due()

    store.next_due = next_due
    system.start()
    system.clock.wait_for_sleepers(1)  # the backoff before the restart
    system.clock.advance(0.05)
    later = kind.enqueue(CountPayload(steps=2), delay=10)
    system.clock.wait_for_sleeping(lambda sleeping: sleeping == [10.0])
    system.clock.advance(10)
    assert system.wait_for(later).status is Status.SUCCEEDED
    assert "background thread crashed; restarting it thread=jobtable-scheduler" in system.logs.text


def test_a_sweeper_that_crashes_is_started_again_and_settles_a_dead_runners_job(make_system):
    survivor = make_system(sweep_interval=SWEEP_INTERVAL)
    kind = survivor.kinds.register("slow", count, payload=CountPayload)
    kind.enqueue(CountPayload())
    claim = a_dead_runner_holding(survivor.store, survivor.clock)
    store = survivor.store
    real_sight_runners = store.sight_runners
    looks: list[int] = []

    def sight_runners():
        looks.append(len(looks))
        if len(looks) == 2:  # the first sweep's: past the sweep's `except Exception`
            raise Unusual()
        return real_sight_runners()

    store.sight_runners = sight_runners
    survivor.start()  # its first look at the others
    survivor.runner.stop()  # no claims of its own: only its sweeps act
    sweep(survivor)  # crashes
    assert survivor.clock.wait_for_sleepers(1) == [pytest.approx(0.05)]  # the backoff
    survivor.clock.advance(0.05)
    sweep(survivor)  # the dead runner was seen at start, over a second ago: settled
    job = survivor.wait_for(claim.job_id)
    assert (job.status, job.error) == (Status.FAILED, INTERRUPTED)
    assert "background thread crashed; restarting it thread=jobtable-sweeper" in (
        survivor.logs.text
    )


def test_a_liveness_check_that_crashes_is_started_again_and_keeps_the_runner_claiming(
    make_system,
):
    system = make_system(check_interval=CHECK_INTERVAL)
    kind = system.kinds.register("count", count, payload=CountPayload)
    store = system.store
    real_confirm = store.confirm_liveness
    checks: list[int] = []

    def confirm_liveness(runner_id, *, timeout):
        checks.append(len(checks))
        if len(checks) == 1:
            raise Unusual()
        return real_confirm(runner_id, timeout=timeout)

    store.confirm_liveness = confirm_liveness
    system.start()
    system.clock.wait_for_sleepers(1)
    system.clock.advance(IDLE_CHECK_INTERVAL)  # the first check (idle) crashes the thread
    assert system.clock.wait_for_sleepers(1) == [pytest.approx(0.05)]
    system.clock.advance(0.05)
    # Long past the lock's freshness (a sweep interval): the checks go on, restarted.
    for _ in range(4):
        system.clock.wait_for_sleepers(1)
        system.clock.advance(IDLE_CHECK_INTERVAL)
    store.wait_until(lambda: len(checks) >= 5)
    job_id = kind.enqueue(CountPayload(steps=1))
    assert system.wait_for(job_id).status is Status.SUCCEEDED
    assert "background thread crashed; restarting it thread=jobtable-liveness" in (system.logs.text)


def test_a_retention_loop_that_crashes_is_started_again_and_prunes(make_system):
    an_hour = Retention(succeeded=datetime.timedelta(hours=1), failed=None)
    system = make_system(retention=an_hour)
    kind = system.kinds.register("count", count, payload=CountPayload)
    job_id = kind.enqueue(CountPayload())
    system.runner.drain()
    system.clock.advance(3601)
    store = system.store
    real_take_lease = store.take_lease
    leases: list[int] = []

    def take_lease(name, **arguments):
        leases.append(len(leases))
        if len(leases) == 1:  # past the round's `except Exception`
            raise Unusual()
        return real_take_lease(name, **arguments)

    store.take_lease = take_lease
    pruner = Pruner(store, system.clock, system.logs.logger, holder="pruner", retention=an_hour)
    pruning = PruneLoop(pruner, system.clock, system.logs.logger, every=0.001)
    pruning.start()
    try:
        assert system.clock.wait_for_sleepers(1) == [pytest.approx(0.05)]
        system.clock.advance(0.05)
        store.wait_until(lambda: store.get(job_id) is None)
    finally:
        pruning.stop()
        pruning.join(10)
    assert "background thread crashed; restarting it thread=jobtable-retention" in (
        system.logs.text
    )
