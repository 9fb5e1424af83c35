"""Telling running handlers to stop before they return: a cancel at once, a timeout when due.

Each then has PREEMPT_GRACE seconds to return, or is left behind (core/left_behind.py).
"""

from __future__ import annotations

import logging

from jobtable.core.attempts import Attempt, Attempts
from jobtable.core.clock import Clock
from jobtable.core.codes import CANCELLED, TIMED_OUT
from jobtable.core.deadlines import ABANDON, STOP, Deadlines
from jobtable.core.wakes import SchedulerWakes

PREEMPT_GRACE = 2.0
"""Seconds a handler told to stop (cancel, timeout) has to return before it is left behind."""


class Preemption:
    """Stops handlers of this runner (their ``ctx.wait`` returns True), and keeps their deadlines.

    Deadlines are kept once ``start`` was called: the scheduler then acts on
    them. A drain, with no scheduler, keeps none.
    """

    def __init__(
        self,
        clock: Clock,
        log: logging.Logger,
        *,
        attempts: Attempts,
        deadlines: Deadlines,
        scheduler: SchedulerWakes,
    ) -> None:
        self._clock = clock
        self._log = log
        self._attempts = attempts
        self._deadlines = deadlines
        self._scheduler = scheduler
        self._started = False

    def start(self) -> None:
        """Keep deadlines from now on: the runner's scheduler is about to act on them."""
        self._started = True

    def cancel_here(self, job_id: str) -> None:
        """A cancel asked of a running job: stop its handler if it runs here (else another
        process's runner sees the flag on its next sweep)."""
        for attempt in self._attempts.snapshot():
            if attempt.claim.job_id == job_id:
                self.preempt(attempt, CANCELLED)

    def preempt(self, attempt: Attempt, code: str) -> None:
        """Tell a handler to stop with ``code`` now; leave it behind if it has not returned
        after PREEMPT_GRACE."""
        if attempt.settled_by is not None:
            return
        self._attempts.stop([attempt], code)
        self._add(PREEMPT_GRACE, ABANDON, code, attempt)

    def time_out(self, attempt: Attempt, seconds: float) -> None:
        """Tell the handler to stop with ``timed_out`` if it still runs in ``seconds``."""
        self._add(seconds, STOP, TIMED_OUT, attempt)

    def act_on_deadlines(self) -> list[tuple[Attempt, str]]:
        """Tell the handlers whose timeout came to stop; return those still running past their
        grace after a stop, each with its stop's code (to be left behind)."""
        past_grace = []
        for action, code, attempt in self._deadlines.due(self._clock.monotonic()):
            if attempt.settled_by is not None:
                continue  # its handler returned in time
            if action == STOP:
                self._log.warning(
                    "job ran past its timeout; telling its handler to stop job_id=%s",
                    attempt.claim.job_id,
                    extra={"job_id": attempt.claim.job_id},
                )
                self.preempt(attempt, code)
            else:
                past_grace.append((attempt, code))
        return past_grace

    def _add(self, seconds: float, action: str, code: str, attempt: Attempt) -> None:
        if self._started and self._deadlines.add(
            self._clock.monotonic() + seconds, action, code, attempt
        ):
            self._scheduler.deadlines_changed()
