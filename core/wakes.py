"""How a runner's sleeping threads are woken: its idle workers, and its scheduler.

Whoever stores, promotes or frees work tells one of these; neither ever polls.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable

from jobtable.core.clock import Clock


class _Lane:
    """The idle workers of one lane (core/lanes.py) and the wake tokens left for them."""

    __slots__ = ("idle", "size", "tokens", "wake")

    def __init__(self, lock: threading.Lock, size: int) -> None:
        self.wake = threading.Condition(lock)
        self.size = size
        self.tokens = 0
        self.idle = 0


class WorkerWakes:
    """Idle workers sleep here until a job may wait for them, or the runner stops.

    A *wake token* makes sure one worker looks even when none is idle yet: one
    that has just found the queue empty and is about to sleep would otherwise
    miss a job that arrived in between, and sleep until some later change.
    Workers of each lane (threads for sync handlers, async slots) sleep apart: news
    of work wakes one of each lane, since the news does not say whose work it is.
    Workers waiting for the runner's liveness to be confirmed sleep here too.
    """

    def __init__(self, clock: Clock, *, workers: int, async_workers: int = 0) -> None:
        self._clock = clock
        self._workers = workers
        lock = threading.Lock()
        self._lanes = [_Lane(lock, workers)] + (
            [_Lane(lock, async_workers)] if async_workers else []
        )
        self._lock = lock
        self._liveness = threading.Condition(lock)  # workers waiting for liveness
        self._stop = threading.Condition(lock)  # timed waits that end on stop
        self._liveness_waiters = 0
        self.stopping = False
        """No new claims: the first phase of stopping. Read without the lock."""

    def stop(self) -> None:
        """Claim no more: every sleeping worker wakes, and every pause ends."""
        with self._lock:
            self.stopping = True
            for lane in self._lanes:
                lane.wake.notify_all()
            self._liveness.notify_all()
            self._stop.notify_all()

    def wake_one(self) -> None:
        """Make sure one worker of each lane looks: wake an idle one, or leave a token for the
        next to idle."""
        with self._lock:
            for lane in self._lanes:
                if not lane.tokens:
                    lane.tokens = 1
                    if lane.idle:
                        lane.wake.notify()

    def wake_for(self, count: int) -> None:
        """``count`` jobs fell due: wake that many idle workers of each lane (tokens for the
        rest to come)."""
        with self._lock:
            for lane in self._lanes:
                lane.tokens = min(lane.tokens + count, lane.size)
                lane.wake.notify(count)

    def wake_every_idle(self) -> None:
        with self._lock:
            for lane in self._lanes:
                lane.tokens = lane.size
                lane.wake.notify_all()

    def claimed_ahead_ready(self, count: int) -> None:
        """Jobs were claimed ahead for idle workers of the first lane (only it holds jobs
        ahead): wake that many (each takes one)."""
        with self._lock:
            self._lanes[0].wake.notify(count)

    def liveness_confirmed(self) -> None:
        """Every worker waiting for liveness may claim (cheap when none waits)."""
        with self._lock:
            if self._liveness_waiters:
                self._liveness.notify_all()

    def liveness_wanted(self) -> bool:
        """Whether a worker waits for a fresh liveness confirmation to claim."""
        return self._liveness_waiters > 0

    def idle_workers(self) -> int:
        """Workers asleep for want of a job."""
        return sum(lane.idle for lane in self._lanes)

    def sleep(self, *, unless: Callable[[], bool], lane: int = 0) -> None:
        """Sleep, idle, until a wake token of ``lane`` comes (taking it), the runner stops or
        ``unless()``."""
        each = self._lanes[lane]
        with self._lock:
            each.idle += 1
            try:
                while each.tokens == 0 and not self.stopping and not unless():
                    each.wake.wait()
                if each.tokens:
                    each.tokens -= 1
            finally:
                each.idle -= 1

    def sleep_until(self, may_claim: Callable[[], bool]) -> None:
        """Sleep until ``may_claim()`` (told by ``liveness_confirmed``), or stop."""
        with self._lock:
            self._liveness_waiters += 1
        try:
            self._clock.wait_for(
                self._liveness, functools.partial(self._stopping_or, may_claim), None
            )
        finally:
            with self._lock:
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
