"""How a runner's sleeping threads are woken: its idle workers, and its scheduler.

Whoever stores, promotes or frees work tells one of these; neither ever polls.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable

from jobtable.core.clock import Clock


class WorkerWakes:
    """Idle workers sleep here until a job may wait for them, or the runner stops.

    A *wake token* makes sure one worker looks even when none is idle yet: one
    that has just found the queue empty and is about to sleep would otherwise
    miss a job that arrived in between, and sleep until some later change.
    Workers waiting for the runner's liveness to be confirmed sleep here too.
    """

    def __init__(self, clock: Clock, *, workers: int) -> None:
        self._clock = clock
        self._workers = workers
        lock = threading.Lock()
        self._wake = threading.Condition(lock)  # idle workers wait here for a token
        self._stop = threading.Condition(lock)  # timed waits that end on stop
        self._tokens = 0
        self._idle = 0
        self._liveness_waiters = 0
        self.stopping = False
        """No new claims: the first phase of stopping. Read without the lock."""

    def stop(self) -> None:
        """Claim no more: every sleeping worker wakes, and every pause ends."""
        with self._wake:
            self.stopping = True
            self._wake.notify_all()
            self._stop.notify_all()

    def wake_one(self) -> None:
        """Make sure one worker looks: wake an idle one, or leave a token for the next to idle."""
        with self._wake:
            if not self._tokens:
                self._tokens = 1
                if self._idle:
                    self._wake.notify()

    def wake_for(self, count: int) -> None:
        """``count`` jobs fell due: wake that many idle workers (tokens for the rest to come)."""
        with self._wake:
            self._tokens = min(self._tokens + count, self._workers)
            self._wake.notify(count)

    def wake_every_idle(self) -> None:
        with self._wake:
            self._tokens = self._workers
            self._wake.notify_all()

    def claimed_ahead_ready(self, count: int) -> None:
        """Jobs were claimed ahead for idle workers: wake that many (each takes one).

        Workers waiting for liveness wait on the same condition: while any
        does, wake everyone, so no notice lands on a worker that cannot claim.
        """
        with self._wake:
            if self._liveness_waiters:
                self._wake.notify_all()
            else:
                self._wake.notify(count)

    def liveness_confirmed(self) -> None:
        """Every worker waiting for liveness may claim (cheap when none waits)."""
        with self._wake:
            if self._liveness_waiters:
                self._wake.notify_all()

    def idle_workers(self) -> int:
        """Workers asleep for want of a job (the exchange claims ahead for them)."""
        return self._idle

    def sleep(self, *, unless: Callable[[], bool]) -> None:
        """Sleep, idle, until a wake token comes (taking it), the runner stops or ``unless()``."""
        with self._wake:
            self._idle += 1
            try:
                while self._tokens == 0 and not self.stopping and not unless():
                    self._wake.wait()
                if self._tokens:
                    self._tokens -= 1
            finally:
                self._idle -= 1

    def sleep_until(self, may_claim: Callable[[], bool]) -> None:
        """Sleep until ``may_claim()`` (told by ``liveness_confirmed``), or stop."""
        with self._wake:
            self._liveness_waiters += 1
        try:
            self._clock.wait_for(self._wake, functools.partial(self._stopping_or, may_claim), None)
        finally:
            with self._wake:
                self._liveness_waiters -= 1

    def pause(self, seconds: float) -> None:
        """Sleep ``seconds`` on the clock, or until the runner stops."""
        self._clock.wait_for(self._stop, self._is_stopping, seconds)

    def _is_stopping(self) -> bool:
        return self.stopping

    def _stopping_or(self, condition: Callable[[], bool]) -> bool:
        return self.stopping or condition()


class SchedulerWakes:
    """What ends the scheduler's sleep early: an earlier due time, an earlier deadline, a
    worker gone, the stop. Any thread may tell it; the scheduler (core/scheduler.py) sleeps here.
    """

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._look_soon = False  # the store may hold an earlier due time
        self._noticed = False  # a change from elsewhere, not yet handed to the scheduler
        self._deadlines_changed = False
        self._workers_due: float | None = None  # when a job a rate holds back may start
        self.stopping = False
        """No more promotions or ticks; deadlines are kept until the workers are gone."""

    def look_again(self) -> None:
        """The store may hold an earlier due time than the scheduler knows: look at once."""
        with self._changed:
            self._look_soon = True
            self._changed.notify_all()

    def noticed_elsewhere(self) -> None:
        """Another process may have scheduled a job: look again at ``pass_on_notice``.

        Not at once: the read must not delay the claim that picks up the job.
        """
        self._noticed = True

    def pass_on_notice(self) -> None:
        """Look again if a change from elsewhere was noticed (after a claim, or each sweep)."""
        if self._noticed:
            self._noticed = False
            self.look_again()

    def deadlines_changed(self) -> None:
        """A deadline earlier than every other was added: shorten the wait."""
        with self._changed:
            self._deadlines_changed = True
            self._changed.notify_all()

    def wake_workers_at(self, at: float) -> None:
        """A job a rate holds back may start at ``at`` (monotonic): have a worker look then."""
        with self._changed:
            if self._workers_due is None or at < self._workers_due:
                self._workers_due = at
                self._deadlines_changed = True
                self._changed.notify_all()

    def workers_due(self) -> float | None:
        return self._workers_due

    def take_workers_due(self, now: float) -> bool:
        """Whether the time to wake a worker for a rate has come (then forgotten)."""
        with self._changed:
            if self._workers_due is None or now < self._workers_due:
                return False
            self._workers_due = None
            return True

    def workers_changed(self) -> None:
        """A worker's slot was closed: the last one gone ends a stopping scheduler."""
        with self._changed:
            self._changed.notify_all()

    def stop(self) -> None:
        with self._changed:
            self.stopping = True
            self._changed.notify_all()

    def sleep(
        self,
        clock: Clock,
        seconds: float | None,
        *,
        was_stopping: bool,
        workers_gone: Callable[[], bool],
    ) -> bool:
        """Sleep up to ``seconds`` (None: until told); True when told to look again.

        ``was_stopping`` is what the scheduler last acted on: a change of it ends the sleep.
        """
        clock.wait_for(
            self._changed, functools.partial(self._woken, was_stopping, workers_gone), seconds
        )
        with self._changed:
            look_soon = self._look_soon
            self._look_soon = self._deadlines_changed = False
        return look_soon

    def _woken(self, was_stopping: bool, workers_gone: Callable[[], bool]) -> bool:
        """What ends the wait early: news, a stop, the last worker gone."""
        return (
            self._look_soon
            or self._deadlines_changed
            or self.stopping != was_stopping
            or (was_stopping and workers_gone())
        )
