"""The scheduler thread: makes scheduled jobs due, enqueues periodic ticks, acts on deadlines.

It sleeps until the earliest of them, or until told of news (core/wakes.py): no polling.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from jobtable.core.backoff import next_claim_retry_delay
from jobtable.core.clock import Clock
from jobtable.core.deadlines import Deadlines
from jobtable.core.looper import start_loop
from jobtable.core.ports import JobQueue
from jobtable.core.recording import loggable_category
from jobtable.core.ticks import Ticks
from jobtable.core.wakes import SchedulerWakes, WorkerWakes

LONGEST_WAIT = 3600.0
"""Seconds the scheduler sleeps at most, however far off the next due time is: it then
looks again (a job due in the year 2500 must not overflow a timeout)."""


class Scheduler:
    """One runner's scheduler; nothing runs until ``start``.

    It sleeps on ``wakes`` (core/wakes.py), which any thread may tell of news.
    ``deadlines`` are the handlers' (timeouts, the grace after a stop), and
    ``act_on_deadlines`` acts on those that came; ``workers`` are woken for jobs
    just due. Once stopping it keeps the deadlines until ``workers_gone``.
    """

    def __init__(
        self,
        store: JobQueue,
        clock: Clock,
        log: logging.Logger,
        *,
        wakes: SchedulerWakes,
        ticks: Ticks,
        deadlines: Deadlines,
        act_on_deadlines: Callable[[], None],
        workers: WorkerWakes,
        workers_gone: Callable[[], bool],
    ) -> None:
        self._store = store
        self._clock = clock
        self._log = log
        self._wakes = wakes
        self._ticks = ticks
        self._deadlines = deadlines
        self._act_on_deadlines = act_on_deadlines
        self._workers = workers
        self._workers_gone = workers_gone

    def start(self) -> None:
        start_loop(
            "jobtable-scheduler", self._loop, clock=self._clock, log=self._log, ended=self._ended
        )

    def _ended(self) -> bool:
        return self._wakes.stopping and self._workers_gone()

    def _loop(self) -> None:
        """Sleep until the earliest due job or deadline; then promote, wake workers, act.

        No polling: the wait ends at the earliest due time this runner knows
        of, or when an enqueue here or a change from elsewhere may have made
        an earlier one. Wakes that arrive while it looks are folded into one
        more look, so a busy database costs one indexed read per look.
        """
        retry_delay: float | None = None
        due_at: float | None = None  # monotonic time the earliest known job falls due
        tick_at: float | None = None
        look = True
        while True:
            self._act_on_deadlines()
            if self._wakes.take_workers_due(self._clock.monotonic()):
                self._workers.wake_for(1)  # a rate's window moved on: a held-back job may start
            stopping = self._wakes.stopping
            if stopping:
                # No more promotions or ticks, but timeouts and the grace of handlers told
                # to stop are kept until the last worker is gone: join depends on them.
                if self._workers_gone():
                    return
                due_at = tick_at = None
            else:
                if look:
                    try:
                        due_at = self._promote_due()
                    except Exception as error:
                        # The promotion may have committed with its reply lost: the jobs
                        # are due now and no later look finds them scheduled. Let the
                        # workers look; an idle one that finds nothing waits again.
                        self._workers.wake_every_idle()
                        retry_delay = next_claim_retry_delay(retry_delay)
                        self._log.warning(
                            "scheduling due jobs failed; retrying category=%s retry_in=%.3fs",
                            loggable_category(error),
                            retry_delay,
                        )
                        due_at = self._clock.monotonic() + retry_delay
                    else:
                        retry_delay = None
                tick_at = self._ticks.enqueue_due()
            look_soon = self._wakes.sleep(
                self._clock,
                self._next_wait(due_at, tick_at),
                was_stopping=stopping,
                workers_gone=self._workers_gone,
            )
            look = look_soon or (due_at is not None and self._clock.monotonic() >= due_at)

    def _next_wait(self, due_at: float | None, tick_at: float | None) -> float | None:
        """Seconds until the earliest due job, tick or deadline; None: nothing to wait for."""
        candidates = (due_at, tick_at, self._deadlines.next_at(), self._wakes.workers_due())
        times = [t for t in candidates if t is not None]
        if not times:
            return None
        return min(LONGEST_WAIT, max(0.0, min(times) - self._clock.monotonic()))

    def _promote_due(self) -> float | None:
        """Promote what is due, wake workers for it, and say when the next job falls due, on
        the monotonic clock (None: no job is scheduled)."""
        due = self._store.next_due()
        now = self._clock.now()
        if due is not None and due <= now:
            promoted = self._store.promote_due(now=now)
            if promoted:
                self._workers.wake_for(promoted)
            due = self._store.next_due()
        if due is None:
            return None
        read_at = self._clock.monotonic()  # first: a clock moving between reads wakes it early
        return read_at + max(0.0, (due - self._clock.now()).total_seconds())
