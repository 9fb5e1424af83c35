"""Leaving behind a handler that ignores its stop past its grace: the runner records its job
itself, and its worker's slot goes to a new thread (core/pool.py).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from jobtable.core.attempts import Attempt, Attempts
from jobtable.core.executor import Executor
from jobtable.core.pool import WorkerPool
from jobtable.core.preemption import Preemption
from jobtable.core.recording import job_fields
from jobtable.core.wakes import WorkerWakes


def _unlimited(kind: str) -> bool:
    return False


class LeftBehind:
    """Acts on the handlers' deadlines for the scheduler, on each of its looks.

    A stubborn handler cannot shrink the pool: its late outcome is refused by
    its claim's fence, and its worker leaves the pool when it returns at last.
    """

    def __init__(
        self,
        log: logging.Logger,
        *,
        attempts: Attempts,
        preemption: Preemption,
        executor: Executor,
        pool: WorkerPool,
        wakes: WorkerWakes,
        limited: Callable[[str], bool] = _unlimited,
    ) -> None:
        """``limited`` says whether a kind has a concurrency limit: such a handler keeps its
        slot (its job stays running, its worker busy) until it returns, so the limit is never
        passed while it still runs."""
        self._log = log
        self._attempts = attempts
        self._preemption = preemption
        self._executor = executor
        self._pool = pool
        self._wakes = wakes
        self._limited = limited

    def act_on_deadlines(self) -> None:
        """Stop the handlers whose timeout came; leave behind those past their grace."""
        for attempt, code in self._preemption.act_on_deadlines():
            job = attempt.job
            if job is not None and self._limited(job.kind):
                self._log.error(
                    "handler ignored its stop; its job keeps its limit's slot until it returns "
                    "job_id=%s code=%s",
                    attempt.claim.job_id,
                    code,
                    extra=job_fields(job, code),
                )
                continue
            if self._attempts.take_settling(attempt, "runner"):
                self._attempts.abandon(attempt)
                count, refill = self._pool.left_behind(attempt.worker)
                threading.Thread(
                    target=self._leave_behind,
                    args=(attempt, code, count, refill),
                    name="jobtable-settle-left-behind",
                    daemon=True,
                ).start()

    def _leave_behind(self, attempt: Attempt, code: str, count: int, refill: bool) -> None:
        """Record a job whose handler ignored its stop, and give its worker's slot away."""
        self._log.error(
            "handler ignored its stop; its job is recorded and its worker replaced "
            "job_id=%s code=%s left_behind=%d",
            attempt.claim.job_id,
            code,
            count,
            extra=job_fields(attempt.job, code),
        )
        if not refill and not self._wakes.stopping:
            self._log.error(
                "too many handlers left behind; claiming with fewer workers until some return "
                "left_behind=%d cap=%d",
                count,
                self._pool.left_behind_cap,
            )
        self._executor.record_abandoned(attempt)
        if refill:
            self._pool.refill(attempt.worker)
