"""Background threads never die for good: the scheduler's wait is bounded however far off
the next due job is, and a loop that raises is logged and started again."""

from __future__ import annotations

import datetime
import threading

import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.core import NewJob, Status
from jobtable.core.looper import keep_looping
from jobtable.core.scheduler import LONGEST_WAIT
from tests.support.logs import LogCapture
from tests.unit.kinds_for_tests import CountPayload, count


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
