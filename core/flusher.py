"""The thread that writes the outcomes workers handed in (core/exchange.py), and gives back
jobs held ahead too long: once the oldest outcome waited FLUSH_AFTER, and at a stop.

A write that fails is retried with the claim-retry backoff for as long as the runner
runs; once its handlers are told to stop, RECORD_ATTEMPTS tries in all, after which the
outcomes are left running in the runner's name, for the sweep to settle.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from jobtable.core.backoff import CLAIM_RETRY_MAXIMUM, next_claim_retry_delay
from jobtable.core.clock import Clock
from jobtable.core.codes import INTERRUPTED
from jobtable.core.errors import StoreError
from jobtable.core.exchange import JobExchange
from jobtable.core.recording import (
    RECORD_ATTEMPTS,
    OutcomeRecorder,
    job_fields,
    loggable_category,
)


class Flusher:
    """Runs the exchange's durable batches on a thread of its own ("jobtable-flush")."""

    def __init__(
        self,
        exchange: JobExchange,
        recorder: OutcomeRecorder,
        clock: Clock,
        log: logging.Logger,
        *,
        is_stopping: Callable[[], bool],
    ) -> None:
        """``is_stopping``: whether the runner's handlers were told to stop (then a failing
        write is given up after RECORD_ATTEMPTS tries)."""
        self._exchange = exchange
        self._recorder = recorder
        self._clock = clock
        self._log = log
        self._is_stopping = is_stopping
        self._finishing = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="jobtable-flush", daemon=True)
        self._thread.start()

    def finish(self, timeout: float | None = None) -> None:
        """The workers are gone: write what is left, give back the jobs held ahead, and end
        the thread (waiting ``timeout`` seconds at most)."""
        with self._exchange.changed:
            self._finishing = True
            self._exchange.changed.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
        try:
            self._exchange.give_back_held()
        except Exception as error:
            self._log.warning(
                "give back jobs held ahead failed category=%s", loggable_category(error)
            )

    def _run(self) -> None:
        tries = 0
        delay: float | None = None
        while self._wait_until_due():
            try:
                self._exchange.flush()
                tries, delay = 0, None
            except BaseException as raised:  # one past Exception must not end the flushing
                error = raised if isinstance(raised, Exception) else StoreError("database error")
                tries += 1
                if tries >= RECORD_ATTEMPTS and (self._finishing or self._is_stopping()):
                    self._give_up(error, tries)
                    tries, delay = 0, None
                    continue
                delay = next_claim_retry_delay(delay)
                self._failed(error, tries, delay)
                self._pause(delay)

    def _pause(self, delay: float) -> None:
        """The backoff between tries, on the runner's clock; once the runner finishes (its
        clock may stand still: a test's), in real time."""
        if self._clock.wait_for(self._exchange.changed, self._is_finishing, delay):
            time.sleep(delay)

    def _is_finishing(self) -> bool:
        return self._finishing

    def _wait_until_due(self) -> bool:
        """Sleep until a batch is due; False once finishing with nothing left to write."""
        changed = self._exchange.changed
        with changed:
            while True:
                if self._finishing:
                    return self._exchange.has_unwritten()
                due = self._exchange.next_due()
                now = time.monotonic()
                if due is not None and due <= now:
                    return True
                changed.wait(None if due is None else due - now)

    def _failed(self, error: Exception, tries: int, delay: float) -> None:
        level = logging.ERROR if delay >= CLAIM_RETRY_MAXIMUM else logging.WARNING
        self._log.log(
            level,
            "record job outcome failed; retrying category=%s attempt=%d retry_in=%.3fs",
            loggable_category(error),
            tries,
            delay,
        )

    def _give_up(self, error: Exception, tries: int) -> None:
        """Leave every outcome not written running in the runner's name, for the sweep."""
        self._log.warning(
            "record job outcome failed category=%s attempt=%d", loggable_category(error), tries
        )
        for unsent in self._exchange.drop_unwritten():
            self._log.error(
                "job outcome not recorded; left running job_id=%s kind=%s attempts=%d",
                unsent.claimed.id,
                unsent.claimed.kind,
                tries,
                extra=job_fields(unsent.claimed),
            )
            self._recorder.ran_unrecorded(unsent.claimed.claim, INTERRUPTED)
