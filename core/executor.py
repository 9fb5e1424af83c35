"""Runs one attempt of a claimed job: its handler, the decision, the observer's report, the record.

Its worker records it; the runner does instead when the handler is left behind (core/left_behind.py).
"""

from __future__ import annotations

import enum
import functools
import json
import logging
from collections.abc import Callable
from typing import Any, Final, Literal

import cattrs

from jobtable.core import codec
from jobtable.core.ahead import AheadPolicy
from jobtable.core.async_loop import EventLoop
from jobtable.core.attempts import Attempt, Attempts
from jobtable.core.clock import Clock
from jobtable.core.codes import CANCELLED, INTERNAL_ERROR, INTERRUPTED, TIMED_OUT, UNKNOWN_KIND
from jobtable.core.context import JobContext, JobNotHeldError
from jobtable.core.handling import run_handler
from jobtable.core.jobs import Claim, ClaimedJob
from jobtable.core.kinds import KindRegistry
from jobtable.core.minutes import MinuteTally
from jobtable.core.observer import SUCCEEDED, RunnerObserver
from jobtable.core.outcome import AttemptEnd, Outcome, Raised, RunAgain, Stopped, Succeed, decide
from jobtable.core.preemption import Preemption
from jobtable.core.recording import OutcomeRecorder, job_fields
from jobtable.core.registration import Registration
from jobtable.core.tracing import NO_TRACING, Tracing
from jobtable.core.wakes import SchedulerWakes, WorkerWakes

_STOP_CODES = {CANCELLED: CANCELLED, TIMED_OUT: TIMED_OUT}
"""Why a handler was told to stop, as the code its job ends with (else interrupted)."""


class Abandoned(enum.Enum):
    ABANDONED = "abandoned"


ABANDONED: Final = Abandoned.ABANDONED
"""What ``run`` returns when the runner recorded the attempt instead of its worker (the
handler ignored its stop too long and was left behind): the worker leaves the pool."""


class Executor:
    """Runs attempts for the runner's workers (and its ``drain``); each is recorded once."""

    def __init__(
        self,
        clock: Clock,
        log: logging.Logger,
        *,
        kinds: KindRegistry,
        converter: cattrs.Converter,
        attempts: Attempts,
        ahead: AheadPolicy,
        began: Callable[[Claim], None],
        recorder: OutcomeRecorder,
        preemption: Preemption,
        registration: Registration,
        wakes: WorkerWakes,
        scheduler: SchedulerWakes,
        observer: RunnerObserver,
        jitter: Callable[[], float],
        event_loop: EventLoop,
        tracing: Tracing = NO_TRACING,
    ) -> None:
        """``ahead`` hears how long each handler took; ``began`` that a job taken is tracked
        (core/exchange.py); ``wakes`` says whether the runner is
        stopping; ``scheduler`` hears of jobs due again later; ``jitter`` draws the retry
        backoff's random share; ``event_loop`` runs ``async def`` handlers; ``tracing`` gets a
        ``process`` span per attempt."""
        self._clock = clock
        self._log = log
        self._kinds = kinds
        self._converter = converter
        self._attempts = attempts
        self._ahead = ahead
        self._began = began
        self._recorder = recorder
        self._preemption = preemption
        self._registration = registration
        self._wakes = wakes
        self._scheduler = scheduler
        self._observer = observer
        self._jitter = jitter
        self._event_loop = event_loop
        self._tracing = tracing
        self.tally = MinuteTally()
        """What it counts for the dashboard's charts: waits and ends, per minute."""

    def run(
        self, number: int, claimed: ClaimedJob, *, pooled: bool
    ) -> ClaimedJob | Literal[Abandoned.ABANDONED] | None:
        """Run one job in worker slot ``number``, record its outcome, and return the next job
        claimed with it, if any.

        ``pooled``: run by a worker of the started pool (the next job claimed
        only while the runner's liveness is confirmed); else drained in the
        caller's thread, which always takes the next job along.
        Returns ABANDONED instead when the runner settled the job itself.
        """
        attempt = self._attempts.begin(number, claimed.claim, claimed)
        self._registration.job_started()
        self._began(claimed.claim)
        recorded = False
        traced = self._tracing.processing(claimed)
        tracing = True  # until its span ends, in this thread
        try:
            self._job_started(attempt, claimed)
            if claimed.timeout is not None:
                self._preemption.time_out(attempt, claimed.timeout)
            spec = self._kinds.get(claimed.kind)
            if spec is None:
                end: AttemptEnd = Raised(code=UNKNOWN_KIND, reason="no handler registered")
            else:
                context = self._context(attempt, claimed)
                end = run_handler(
                    spec,
                    claimed.payload,
                    context,
                    self._converter,
                    stop_code=functools.partial(stop_code, attempt),
                    run_async=functools.partial(self._run_async, attempt, claimed.kind)
                    if spec.is_async
                    else None,
                )
            if not self._attempts.take_settling(attempt, "worker"):
                tracing = False
                traced.end(stop_code(attempt))
                return ABANDONED
            attempt.job = None  # a deadline may outlive the job: keep no payload alive
            claim_next = not self._wakes.stopping and (not pooled or self._registration.may_claim())
            outcome = self._decide(claimed, end)
            tracing = False
            traced.end(outcome_name(outcome))
            self._job_ended(attempt, claimed, outcome)
            following = self._recorder.record(
                claimed,
                end,
                outcome,
                claim_next=claim_next and pooled,
                buffered=pooled,
                lane=1 if spec is not None and spec.is_async else 0,  # the next of its slot's kinds
            )
            recorded = True
            return following
        except BaseException:
            if tracing:
                tracing = False
                traced.end(INTERNAL_ERROR)
            if not recorded and attempt.settled_by != "runner":
                self._record_after_crash(claimed, attempt)
            raise
        finally:
            if attempt.settled_by != "runner":
                self._attempts.end(number)

    def record_abandoned(self, attempt: Attempt) -> None:
        """Record the job of a handler left behind as stopped when told, by its job's policy."""
        claimed: ClaimedJob = attempt.job
        end = Stopped(code=stop_code(attempt))
        outcome = self._decide(claimed, end)
        self._job_ended(attempt, claimed, outcome)
        self._recorder.record(claimed, end, outcome, claim_next=False)
        self._attempts.settled(attempt)
        if isinstance(outcome, RunAgain):
            self._wakes.wake_one()  # it may be due at once
            self._scheduler.look_again()  # or later: the scheduler must know

    def _record_after_crash(self, claimed: ClaimedJob, attempt: Attempt) -> None:
        """Spend the attempt of a job whose worker crashed once its handler had started.

        Something raised past the handler (a result's ``public()`` raising a
        BaseException, an observer's metrics write): the job ends
        ``internal_error`` by its policy, never given back as if unrun. Should
        even that not land, the sweep settles it so (OutcomeRecorder.left_running).
        """
        self._recorder.ran_unrecorded(claimed.claim, INTERNAL_ERROR)
        self._log.error(
            "worker crashed after a job's handler started; its job is recorded %s "
            "job_id=%s kind=%s",
            INTERNAL_ERROR,
            claimed.id,
            claimed.kind,
            extra=job_fields(claimed, INTERNAL_ERROR),
        )
        try:
            end = Raised(code=INTERNAL_ERROR, reason="runner error after the handler")
            self._recorder.record(claimed, end, self._decide(claimed, end), claim_next=False)
        except BaseException:  # the sweep settles it: the claim is marked as run above
            return
        self._recorder.recorded(claimed.claim)

    def _job_started(self, attempt: Attempt, claimed: ClaimedJob) -> None:
        attempt.started = self._clock.monotonic()
        now = self._clock.now()
        waited = (
            None if claimed.due_at is None else max(0.0, (now - claimed.due_at).total_seconds())
        )
        self._observer.job_started(claimed.kind, waited=waited)
        self.tally.started(claimed.queue, claimed.kind, waited=waited, at=now)
        if self._log.isEnabledFor(logging.DEBUG):
            self._log.debug(
                "job started job_id=%s kind=%s attempt=%d",
                claimed.id,
                claimed.kind,
                claimed.claim.attempt,
                extra=job_fields(claimed),
            )

    def _job_ended(self, attempt: Attempt, claimed: ClaimedJob, outcome: Outcome) -> None:
        """Report an attempt's end to the observer, before its outcome is recorded."""
        seconds = max(0.0, self._clock.monotonic() - attempt.started)
        self._ahead.ran(seconds)
        kind = claimed.kind
        if isinstance(outcome, Succeed):
            self._observer.job_ended(kind, code=SUCCEEDED, final=True, seconds=seconds)
        else:
            final = not isinstance(outcome, RunAgain)
            self._observer.job_ended(kind, code=outcome.code, final=final, seconds=seconds)
        if not isinstance(outcome, RunAgain):
            succeeded = isinstance(outcome, Succeed)
            self.tally.ended(claimed.queue, kind, succeeded=succeeded, at=self._clock.now())

    def _decide(self, claimed: ClaimedJob, end: AttemptEnd) -> Outcome:
        """What to record for an attempt: its result, or its failure as the job's policy says."""
        return decide(
            end,
            claimed.policy,
            attempt=claimed.claim.attempt,
            now=self._clock.now(),
            jitter=self._jitter,
        )

    def _run_async(self, attempt: Attempt, kind: str, coroutine: Any) -> Any:
        """Run an ``async def`` handler's coroutine on the event loop; a stop cancels it."""
        return self._event_loop.run(
            coroutine,
            kind=kind,
            job_id=attempt.claim.job_id,
            stopping=lambda: attempt.stopping,
            changed=self._attempts.changed,
        )

    def _context(self, attempt: Attempt, claimed: ClaimedJob) -> JobContext:
        claim = attempt.claim

        def publish(partial: Any) -> None:
            result = codec.encode_public(partial)
            if not self._recorder.publish(claim, result):
                raise JobNotHeldError("the job is no longer held by this runner")

        def stopping() -> bool:
            return attempt.stopping

        def wait(seconds: float) -> bool:
            return self._clock.wait_for(self._attempts.changed, stopping, seconds)

        async def await_stop(seconds: float) -> bool:
            if self._event_loop.real_time:  # a stop cancels the task: the sleep ends then
                await self._event_loop.sleep(seconds)
                return attempt.stopping
            return bool(await self._event_loop.in_thread(lambda: wait(seconds)))  # a test's clock

        return JobContext(
            job_id=claim.job_id,
            attempt=claim.attempt,
            checkpoint=None if claimed.checkpoint is None else json.loads(claimed.checkpoint),
            publish=publish,
            wait=wait,
            is_stopping=stopping,
            await_stop=await_stop,
            in_thread=self._event_loop.in_thread,
            runner_id=claim.runner_id,
        )


def outcome_name(outcome: Outcome) -> str:
    """An outcome as a trace names it: ``succeeded``, or the code its attempt ended with."""
    return SUCCEEDED if isinstance(outcome, Succeed) else outcome.code


def stop_code(attempt: Attempt) -> str:
    """Why ``attempt``'s handler was told to stop, as the code its job ends with."""
    return _STOP_CODES.get(attempt.stop_reason or "", INTERRUPTED)
