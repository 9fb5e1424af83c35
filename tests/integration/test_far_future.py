"""A job due centuries ahead on the real clock: the scheduler's wait would overflow a lock's
timeout (about 292 years) and its thread die, so nothing scheduled would ever fall due."""

from __future__ import annotations

import datetime

from jobtable.adapters.memory import MemoryStore
from jobtable.adapters.system_clock import SystemClock
from jobtable.core import NewJob, Runner, Status
from tests.support.logs import LogCapture
from tests.support.observed import ObservedStore
from tests.unit.kinds_for_tests import CountPayload, count


def test_a_job_due_in_the_year_2600_leaves_delayed_jobs_running_on_the_real_clock():
    store, clock, logs = ObservedStore(MemoryStore()), SystemClock(), LogCapture()
    store.create(
        NewJob(
            id="far",
            kind="count",
            payload="{}",
            run_at=datetime.datetime(2600, 1, 1, tzinfo=datetime.UTC),
        ),
        now=clock.now(),
    )
    runner = Runner(store, clock, workers=1, logger=logs.logger, prunes=False)
    kind = runner.kinds.register("count", count, payload=CountPayload)
    runner.start()
    try:
        soon = kind.enqueue(CountPayload(steps=1), delay=0.2)
        store.wait_until(lambda: runner.get(soon).status is Status.SUCCEEDED, within=30)
        assert runner.get("far").status is Status.QUEUED
        assert "crashed" not in logs.text
    finally:
        runner.shutdown(5)
