"""A runner's hot path wired together: the exchange where its workers take jobs and hand in
outcomes (core/exchange.py), the recorder that logs and writes each outcome
(core/recording.py), and the flusher thread that writes the buffered ones (core/flusher.py).
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable

from jobtable.core.ahead import AheadPolicy
from jobtable.core.attempts import Attempts
from jobtable.core.clock import Clock
from jobtable.core.exchange import JobExchange
from jobtable.core.exchange_items import Unsent
from jobtable.core.flusher import Flusher
from jobtable.core.ports import JobStore
from jobtable.core.recording import OutcomeRecorder
from jobtable.core.wakes import SchedulerWakes, WorkerWakes


class HotPath:
    """Claims, starts and outcomes of one runner: many per commit, written with retries."""

    def __init__(
        self,
        store: JobStore,
        clock: Clock,
        log: logging.Logger,
        *,
        runner_id: str,
        workers: int,
        wakes: WorkerWakes,
        scheduler: SchedulerWakes,
        attempts: Attempts,
        may_claim: Callable[[], bool],
    ) -> None:
        """``may_claim``: whether the runner's liveness is confirmed."""
        self._clock = clock
        self._scheduler = scheduler
        self._wakes = wakes
        self.ahead = AheadPolicy(workers)
        self.exchange = JobExchange(
            store,
            clock,
            runner_id=runner_id,
            policy=self.ahead,
            may_hold=lambda: not wakes.stopping and may_claim(),
            held_ready=wakes.claimed_ahead_ready,
            slots_freed=wakes.wake_for,
            rate_opens=self._rate_opens,
            written=self._written,
        )
        self.recorder = OutcomeRecorder(
            store,
            clock,
            log,
            self.exchange,
            is_stopping=attempts.all_told_to_stop,
            queued_again=self._queued_again,
        )
        self.flusher = Flusher(
            self.exchange, self.recorder, clock, log, is_stopping=attempts.all_told_to_stop
        )

    def _rate_opens(self, at: datetime.datetime) -> None:
        """A job a rate holds back may start at ``at``: the scheduler wakes a worker then."""
        wait = max(0.0, (at - self._clock.now()).total_seconds())
        self._scheduler.wake_workers_at(self._clock.monotonic() + wait)

    def _queued_again(self) -> None:
        """A job of this runner was put back in line: due now (a worker looks) or later."""
        self._scheduler.look_again()
        self._wakes.wake_one()

    def _written(self, unsent: Unsent, recorded: bool) -> None:
        self.recorder.written(unsent, recorded)
