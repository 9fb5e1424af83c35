"""One worker's loop: take a job (started from those held ahead, or claimed now), run it,
take the next.

Only while the runner's liveness is confirmed. ``drain`` runs the same in the caller's thread.
"""

from __future__ import annotations

import logging
from collections.abc import Collection

import attrs

from jobtable.core.attempts import Attempts
from jobtable.core.backoff import CLAIM_RETRY_MAXIMUM, next_claim_retry_delay
from jobtable.core.batch import Batch, BatchDone, learning_limited_queues
from jobtable.core.clock import Clock
from jobtable.core.exchange import JobExchange
from jobtable.core.executor import ABANDONED, Executor
from jobtable.core.jobs import ClaimedJob, Job
from jobtable.core.observer import RunnerObserver
from jobtable.core.ports import JobStore
from jobtable.core.recording import OutcomeRecorder, loggable_category
from jobtable.core.registration import Registration
from jobtable.core.wakes import SchedulerWakes, WorkerWakes

_UNLIMITED = Batch()


def _never() -> bool:
    return False


class WorkerLoop:
    """What each of the pool's worker threads runs (core/pool.py)."""

    def __init__(
        self,
        log: logging.Logger,
        *,
        attempts: Attempts,
        wakes: WorkerWakes,
        exchange: JobExchange,
        recorder: OutcomeRecorder,
        registration: Registration,
        executor: Executor,
        scheduler: SchedulerWakes,
        observer: RunnerObserver,
        threads: int,
    ) -> None:
        """``threads``: the slots below it are the threads' (lane 0, sync handlers), those
        from it on the async slots' (lane 1, ``async def`` handlers on the event loop)."""
        self._threads = threads
        self._log = log
        self._attempts = attempts
        self._wakes = wakes
        self._exchange = exchange
        self._recorder = recorder
        self._registration = registration
        self._executor = executor
        self._scheduler = scheduler
        self._observer = observer

    def work(self, number: int) -> bool:
        """Run jobs in worker slot ``number`` until the runner stops; True when this worker
        must leave the pool instead (its handler was left behind: the slot is another's)."""
        left_behind = False
        try:
            claimed: ClaimedJob | None = None
            while not self._wakes.stopping:
                if claimed is None:
                    claimed = self._claim(0 if number < self._threads else 1)
                    continue
                following = self._executor.run(number, claimed, pooled=True)
                if following is ABANDONED:
                    left_behind = True  # the runner settled its job and gave its slot away
                    return True
                claimed = following
            if claimed is not None:
                # The claim returned after stop began: its handler never ran.
                self._exchange.began(claimed.claim)
                self._recorder.put_back(claimed)
            self.give_back_held()
            return False
        finally:
            if not left_behind:
                self._attempts.end(number)

    def _claim(self, lane: int) -> ClaimedJob | None:
        """Claim the oldest queued job; when there is none, sleep until woken or stopped.

        Only while this runner's liveness is confirmed (checked in memory). A
        claim that fails is retried after the backoff delay, not after a
        wake: a job queued before a restart has no wake to come.
        """
        retry_delay: float | None = None
        while not self._wakes.stopping:
            if not self._registration.may_claim():
                self.give_back_held()  # others may settle them meanwhile: never run them
                self._registration.check_soon()  # an idle runner checks its lock seldom
                self._wakes.sleep_until(self._registration.may_claim)
                continue
            try:
                job = self._exchange.take(lane)
            except Exception as error:
                retry_delay = self._claim_failed(error, retry_delay)
                self._wakes.pause(retry_delay)
                continue
            self._scheduler.pass_on_notice()
            if job is None:
                self._wakes.sleep(unless=_never if lane else self._exchange.has_held, lane=lane)
            else:
                self._wakes.wake_one()  # more may be queued: let one more idle worker look
            return job
        return None

    def _claim_failed(self, error: Exception, delay: float | None) -> float:
        """Report a failed claim; the delay before the next try."""
        self._observer.claim_failed()
        delay = next_claim_retry_delay(delay)
        # A blip that the backoff rides out is a warning; an outage
        # that has pushed the delay to its ceiling is an error.
        level = logging.ERROR if delay >= CLAIM_RETRY_MAXIMUM else logging.WARNING
        self._log.log(
            level,
            "claim job failed; retrying category=%s retry_in=%.3fs",
            loggable_category(error),
            delay,
        )
        return delay

    def give_back_held(self) -> None:
        """Give back the jobs held ahead that no worker will run (stopping, no liveness).

        A give-back that fails leaves them held in this runner's name: its next
        give-back, or the settling of its death, frees them.
        """
        try:
            self._exchange.give_back_held()
        except Exception as error:
            self._log.warning(
                "give back jobs held ahead failed category=%s", loggable_category(error)
            )


def drain(
    executor: Executor,
    store: JobStore,
    clock: Clock,
    *,
    runner_id: str,
    kinds: Collection[str],
    queues: Collection[str] | None,
    rules: Batch = _UNLIMITED,
) -> list[Job]:
    """Run every due job to completion in the calling thread, as one worker with no liveness
    to keep would, the jobs the handlers enqueue too once due; return them as finished.

    ``rules`` carries the kinds' limits, rates and fair keys: a job a rate holds back is
    left queued until the clock moves on (a test advances it, then drains again)."""

    known = rules.limited_queues  # as a runner keeps them: learnt from each claim's reply

    def claim() -> ClaimedJob | None:
        nonlocal known
        now = clock.now()
        store.promote_due(now=now)

        def run(batch: Batch) -> BatchDone:
            return store.run_batch(batch, runner_id=runner_id, now=now, kinds=kinds, queues=queues)

        batch = attrs.evolve(rules, claim=1, clock=clock.now, limited_queues=known)
        done = learning_limited_queues(run, batch)
        known = known if done.limited_queues is None else done.limited_queues
        return done.claimed[0] if done.claimed else None

    finished: list[Job] = []
    claimed = claim()
    while claimed is not None:
        following = executor.run(0, claimed, pooled=False)
        job = store.get(claimed.id)
        if job is not None and job.status.finished:  # not one queued to retry later
            finished.append(job)
        claimed = following if isinstance(following, ClaimedJob) else claim()
    return finished
