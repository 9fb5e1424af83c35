"""A test mode for an application's own feature tests: in memory, deterministic, no threads.

    from jobtable.adapters.testkit import JobTestKit

    def test_a_countdown_counts_down():
        kit = JobTestKit()
        countdowns = myapp.jobs.register(kit.kinds)
        job_id = countdowns.enqueue(CountdownPayload(seconds=3))
        (job,) = kit.drain()
        assert job.result == {"remaining": 0, "counted": 3}

``drain()`` runs every due job to completion in the calling thread,
including jobs those handlers enqueue, and returns them in the order they
finished. Time is a fake clock that jumps ahead whenever a handler waits, so
``ctx.wait(60)`` costs nothing; ``advance(seconds)`` moves it on, so a
scheduled job, a retry after its backoff or a snoozed job falls due and the
next ``drain()`` runs it, and each cron or ``every`` schedule enqueues a job
for every tick the clock passes.
"""

from __future__ import annotations

import logging

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.memory import MemoryStore
from jobtable.core import Job, KindRegistry, Runner


class JobTestKit:
    """A runner over the in-memory store and an auto-advancing fake clock, never started."""

    def __init__(self, *, logger: logging.Logger | None = None) -> None:
        self.store = MemoryStore()
        self.clock = FakeClock(auto_advance=True)
        self.runner = Runner(self.store, self.clock, workers=1, logger=logger)

    @property
    def kinds(self) -> KindRegistry:
        """Register kinds here, then enqueue through their handles or ``runner.enqueue``."""
        return self.runner.kinds

    def drain(self) -> list[Job]:
        """Run every queued job, and every job they enqueue, to completion; return them."""
        return self.runner.drain()

    def advance(self, seconds: float) -> None:
        """Move the clock on: jobs due by then run at the next ``drain()``. Each periodic
        schedule's ticks on the way are enqueued, one job per tick, as the clock passes it
        (the schedules count from the first ``advance``, as from a first deploy; from then
        on, as after ``drain()``, no kind may be registered). ValueError for seconds < 0."""
        if not seconds >= 0:
            raise ValueError(f"advance needs seconds >= 0, got {seconds!r}")
        if not self.kinds.schedules():
            self.clock.advance(seconds)  # nothing to fire: kinds may still be registered
            return
        until = self.clock.monotonic() + seconds
        tick_at = self.runner.run_schedules()
        while tick_at is not None and tick_at <= until:
            self.clock.advance(max(0.0, tick_at - self.clock.monotonic()))
            tick_at = self.runner.run_schedules()
        self.clock.advance(max(0.0, until - self.clock.monotonic()))
        self.runner.run_schedules()

    def get(self, job_id: str) -> Job | None:
        return self.runner.get(job_id)
