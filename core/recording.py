"""Recording a job's decided outcome: one store call, retried with backoff on database errors.

Each outcome is logged by code, fixed reason and at most the exception's type name.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from jobtable.core.backoff import CLAIM_RETRY_MAXIMUM, next_claim_retry_delay
from jobtable.core.clock import Clock
from jobtable.core.codes import INTERNAL_ERROR, INTERRUPTED, UNKNOWN_KIND
from jobtable.core.errors import StoreError
from jobtable.core.exchange import JobExchange
from jobtable.core.exchange_items import Unsent
from jobtable.core.jobs import Claim, ClaimedJob
from jobtable.core.outcome import AttemptEnd, Fail, Outcome, Raised, RunAgain, Succeed
from jobtable.core.ports import JobQueue

RECORD_ATTEMPTS = 5
"""Tries at recording an outcome once handlers are told to stop (until then, it keeps trying)."""

PUBLISH_ATTEMPTS = 3
"""Tries at storing a partial result before it is dropped (the next publish supersedes it)."""

_RUNNER_CODES = frozenset({INTERNAL_ERROR, UNKNOWN_KIND})

_STOPPED = "handler told to stop"
"""The reason logged for a job that failed once its handler was told to stop."""


def loggable_category(error: BaseException) -> str:
    """What of an exception may be logged: a store's fixed category, else the type name."""
    if isinstance(error, StoreError):
        return error.category
    return f"unexpected {type(error).__name__}"


def job_fields(claimed: ClaimedJob, code: str | None = None) -> dict[str, str]:
    """A log record's ``extra`` for a line about a job: its id, kind and, for an outcome, code.

    The text format shows them in the message; the JSON format as keys.
    """
    fields = {"job_id": claimed.id, "kind": claimed.kind}
    if code is not None:
        fields["code"] = code
    return fields


def _never() -> bool:
    return False


def _nothing() -> None:
    return None


class OutcomeRecorder:
    def __init__(
        self,
        store: JobQueue,
        clock: Clock,
        log: logging.Logger,
        exchange: JobExchange,
        *,
        is_stopping: Callable[[], bool] = _never,
        queued_again: Callable[[], None] = _nothing,
    ) -> None:
        """``queued_again`` hears of each buffered outcome written that put its job back in
        line (due now or later: the workers and the scheduler look again)."""
        self._store = store
        self._clock = clock
        self._log = log
        self._exchange = exchange
        self._is_stopping = is_stopping
        self._queued_again = queued_again
        self._pause = threading.Condition()  # only for timed waits between retries
        self._left_running: dict[Claim, str] = {}  # claim -> the code to settle it with
        self._left_guard = threading.Lock()

    def record(
        self,
        claimed: ClaimedJob,
        end: AttemptEnd,
        outcome: Outcome,
        *,
        claim_next: bool,
        buffered: bool = False,
        lane: int = 0,
    ) -> ClaimedJob | None:
        """Log ``end`` and store ``outcome``; with ``claim_next``, also take and return the
        next job.

        ``buffered`` (a pooled worker's): handed to the exchange, written with other
        workers' outcomes within its bound (core/exchange.py), and the next job taken
        there (for a worker of ``lane``); should that take fail, None (the worker then
        claims the usual way).
        Otherwise written now, and retried after a database error as long as the
        runner runs (``_finish_with_retries``).
        """
        job = f"job_id={claimed.id} kind={claimed.kind}"
        self._log_outcome(job, claimed, end, outcome)
        if buffered:
            self._exchange.record(claimed, outcome)
            if not claim_next:
                return None
            try:
                return self._exchange.take(lane)
            except Exception:
                return None  # the worker's own claim retries, and tells of a lasting failure
        held: bool | None
        try:
            held = self._finish(claimed.claim, outcome)
        except Exception as error:
            self._log_write_error(job, claimed, error, attempt=1, delay=None)
            held = self._finish_with_retries(claimed, outcome, job)
        if held is False:
            self._stale(claimed)
        return None

    def written(self, unsent: Unsent, recorded: bool) -> None:
        """The exchange wrote a buffered outcome (``recorded`` False: its claim was stale)."""
        if not recorded:
            self._stale(unsent.claimed)
        if isinstance(unsent.outcome, RunAgain):
            # Even when not recorded: a first try whose reply was lost may have written it,
            # and then nothing else tells the scheduler of the job now due later.
            self._queued_again()

    def _stale(self, claimed: ClaimedJob) -> None:
        self._log.warning(
            "job outcome not recorded: no longer held job_id=%s kind=%s",
            claimed.id,
            claimed.kind,
            extra=job_fields(claimed),
        )

    def _log_outcome(
        self, job: str, claimed: ClaimedJob, end: AttemptEnd, outcome: Outcome
    ) -> None:
        """The end of an attempt: a success at debug, a failure at its code's level."""
        if isinstance(outcome, Succeed):
            if self._log.isEnabledFor(logging.DEBUG):
                self._log.debug("job succeeded %s", job, extra=job_fields(claimed, "succeeded"))
        elif isinstance(outcome, RunAgain):
            self._log_run_again(job, claimed, outcome)
        else:
            self._log_failure(job, claimed, end, outcome)

    def _log_run_again(self, job: str, claimed: ClaimedJob, outcome: RunAgain) -> None:
        fields = job_fields(claimed, outcome.code)
        if not outcome.counts_attempt:
            self._log.info(
                "job snoozed %s run_at=%s", job, outcome.run_at.isoformat(), extra=fields
            )
            return
        attempt = claimed.claim.attempt
        if outcome.code == INTERRUPTED:
            self._log.warning(
                "job stopped before it finished; interrupted %s; retrying attempt=%d run_at=%s",
                job,
                attempt,
                outcome.run_at.isoformat(),
                extra=fields,
            )
            return
        self._log.info(
            "job attempt failed; retrying %s code=%s attempt=%d run_at=%s",
            job,
            outcome.code,
            attempt,
            outcome.run_at.isoformat(),
            extra=fields,
        )

    def _log_failure(self, job: str, claimed: ClaimedJob, end: AttemptEnd, outcome: Fail) -> None:
        fields = job_fields(claimed, outcome.code)
        if outcome.code == INTERRUPTED:
            self._log.warning("job stopped before it finished; interrupted %s", job, extra=fields)
            return
        level = logging.ERROR if outcome.code in _RUNNER_CODES else logging.INFO
        reason, exception_type = (
            (end.reason, end.exception_type) if isinstance(end, Raised) else (_STOPPED, None)
        )
        suffix = f" exception_type={exception_type}" if exception_type else ""
        self._log.log(
            level,
            "job failed %s code=%s reason=%s%s",
            job,
            outcome.code,
            reason,
            suffix,
            extra=fields,
        )

    def _log_write_error(
        self, job: str, claimed: ClaimedJob, error: Exception, *, attempt: int, delay: float | None
    ) -> None:
        # Warnings while the backoff rides a blip out; errors once an outage
        # has pushed the delay to its ceiling.
        level = (
            logging.ERROR if delay is not None and delay >= CLAIM_RETRY_MAXIMUM else logging.WARNING
        )
        self._log.log(
            level,
            "record job outcome failed; retrying %s category=%s attempt=%d",
            job,
            loggable_category(error),
            attempt,
            extra=job_fields(claimed),
        )

    def _finish(self, claim: Claim, outcome: Outcome) -> bool:
        return self._store.record(claim, outcome, now=self._clock.now())

    def _finish_with_retries(self, claimed: ClaimedJob, outcome: Outcome, job: str) -> bool | None:
        """Retry after a database error, with the claim-retry backoff; None if it never landed.

        A finished job's outcome is the one thing a worker must not drop, so
        it keeps trying for as long as the runner runs (the worker takes no
        other job meanwhile). Once the runner is stopping it makes at most
        RECORD_ATTEMPTS tries in all, a second or so, and then leaves the job
        running in its name: others settle it once the runner has stopped.
        """
        delay: float | None = None
        attempt = 1
        while attempt < RECORD_ATTEMPTS or not self._is_stopping():
            attempt += 1
            delay = next_claim_retry_delay(delay)
            self._sleep(delay)
            try:
                return self._finish(claimed.claim, outcome)
            except Exception as error:
                self._log_write_error(job, claimed, error, attempt=attempt, delay=delay)
        self._log.error(
            "job outcome not recorded; left running %s attempts=%d",
            job,
            attempt,
            extra=job_fields(claimed),
        )
        self.ran_unrecorded(claimed.claim, INTERRUPTED)
        return None

    def _sleep(self, seconds: float) -> None:
        """The backoff between tries, on the clock (nothing cuts it short)."""
        self._clock.wait_for(self._pause, _never, seconds)

    def ran_unrecorded(self, claim: Claim, code: str) -> None:
        """``claim``'s handler ran and its outcome may never land: settle it with ``code``."""
        with self._left_guard:
            self._left_running.setdefault(claim, code)

    def recorded(self, claim: Claim) -> None:
        """``claim``'s outcome landed after all: nothing for the sweep to settle."""
        with self._left_guard:
            self._left_running.pop(claim, None)

    def left_running(self) -> dict[Claim, str]:
        """Claims whose handler ran but whose outcome never landed, each with the code to
        settle it with (by its policy: the attempt counts, never given back)."""
        with self._left_guard:
            return dict(self._left_running)

    def publish(self, claim: Claim, result: str) -> bool:
        """Store a partial result; False only when the job is no longer held.

        A database error is retried PUBLISH_ATTEMPTS times, then the partial
        result is dropped with a warning: it is progress, superseded by the
        next publish and by the outcome, and not worth failing the job over.
        """
        delay: float | None = None
        attempt = 0
        while True:
            attempt += 1
            try:
                return self._store.publish(claim, result=result, now=self._clock.now())
            except Exception as error:
                if attempt >= PUBLISH_ATTEMPTS:
                    self._log.warning(
                        "partial result dropped job_id=%s category=%s attempts=%d",
                        claim.job_id,
                        loggable_category(error),
                        attempt,
                        extra={"job_id": claim.job_id},
                    )
                    return True
            delay = next_claim_retry_delay(delay)
            self._sleep(delay)

    def put_back(self, claimed: ClaimedJob) -> None:
        """Put back a job claimed as the runner began to stop, untouched: queued, attempt returned.

        Its handler never ran. Tried RECORD_ATTEMPTS times with the backoff;
        if the database refuses all of them, the job stays held in this
        runner's name and is given back by its sweeps (a claim no worker runs).
        """
        delay: float | None = None
        for attempt in range(1, RECORD_ATTEMPTS + 1):
            try:
                released = self._store.put_back([claimed.claim], now=self._clock.now())
            except Exception as error:
                self._log.warning(
                    "give back a job claimed while stopping failed job_id=%s category=%s attempt=%d",
                    claimed.id,
                    loggable_category(error),
                    attempt,
                    extra=job_fields(claimed),
                )
            else:
                if released:
                    self._log.info(
                        "gave back a job claimed while stopping job_id=%s",
                        claimed.id,
                        extra=job_fields(claimed),
                    )
                return
            delay = next_claim_retry_delay(delay)
            self._sleep(delay)
        self._log.error(
            "could not give back a job claimed while stopping job_id=%s",
            claimed.id,
            extra=job_fields(claimed),
        )
