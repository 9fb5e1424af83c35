"""The Runner: a bounded pool of worker threads that claim queued jobs oldest first.

The jobs table is the queue. ``enqueue`` stores a job and wakes one idle
worker; a worker claims the oldest queued job, runs its handler, and records
one outcome, fenced by its claim so a stale worker never overwrites a newer
one. Idle workers sleep until woken: a single process never polls.

Stopping has two phases, as River's and Oban's do: ``stop()`` takes no new
job and lets running ones finish; ``stop_now()`` also tells every handler to
stop. ``shutdown(grace)`` runs both in turn.
"""

from __future__ import annotations

import datetime
import logging
import os
import threading
from typing import Any

from jobtable.core import codec
from jobtable.core.attempts import Attempt, Attempts
from jobtable.core.backoff import CLAIM_RETRY_MAXIMUM, next_claim_retry_delay
from jobtable.core.builtins import Builtins, register_builtins
from jobtable.core.clock import Clock
from jobtable.core.codes import UNKNOWN_KIND
from jobtable.core.context import JobContext, JobNotHeldError
from jobtable.core.errors import InvalidPayloadError, RunnerStateError, UnknownKindError
from jobtable.core.ids import JobIdGenerator
from jobtable.core.jobs import ClaimedJob, Job, NewJob
from jobtable.core.keeper import LivenessKeeper
from jobtable.core.kinds import KindRegistry, KindSpec
from jobtable.core.liveness import CHECK_INTERVAL, SWEEP_INTERVAL, RunnerInfo
from jobtable.core.outcome import Decision, Fail, run_handler
from jobtable.core.ports import JobStore
from jobtable.core.recording import OutcomeRecorder, loggable_category

STOP_NOW_WAIT = 5.0
"""Seconds ``shutdown`` waits for handlers once they were told to stop."""


class Runner:
    def __init__(
        self,
        store: JobStore,
        clock: Clock,
        *,
        workers: int = 2,
        logger: logging.Logger | None = None,
        sweep_interval: float | None = SWEEP_INTERVAL,
        check_interval: float | None = CHECK_INTERVAL,
        host: str | None = None,
    ) -> None:
        """A runner over ``store``; nothing runs until ``start``.

        ``sweep_interval`` (seconds between beats and sweeps for dead runners)
        and ``check_interval`` (seconds between checks of this runner's own
        liveness lock) keep their defaults in production; None turns either
        thread off, for tests that drive them by hand.
        """
        if store is None:
            raise ValueError("Runner needs a store")
        if clock is None:
            raise ValueError("Runner needs a clock")
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"Runner needs at least 1 worker, got {workers!r}")
        self._store = store
        self._clock = clock
        self._workers = workers
        self._host = host or os.uname().nodename
        self._log = logger or logging.getLogger("jobtable.runner")
        self._ids = JobIdGenerator()
        self.id = self._ids.next_id(_unix_ms(clock.now()))
        """This runner's id, recorded on every job it claims."""
        self._recorder = OutcomeRecorder(
            store, clock, self._log, is_stopping=lambda: self._stopping_now
        )
        self._converter = codec.make_converter()
        self.kinds = KindRegistry(self._converter, self._enqueue_encoded)
        self.builtins: Builtins = register_builtins(self.kinds)

        lock = threading.Lock()
        self._wake = threading.Condition(lock)  # idle workers wait here for a token
        self._stop = threading.Condition(lock)  # timed waits that end on stop
        self._done = threading.Condition(lock)  # join waits here for workers to exit
        self._wake_tokens = 0
        self._idle_workers = 0
        self._liveness_waiters = 0
        self._stopping = False  # phase 1: no new claims
        self._stopping_now = False  # phase 2: handlers told to stop
        self._started = False
        self._live_workers = 0
        self._attempts = Attempts(workers)
        self._kinds: frozenset[str] = frozenset()  # what this runner claims: set at start
        self._keeper = LivenessKeeper(
            store,
            clock,
            self._log,
            runner_id=self.id,
            attempts=self._attempts,
            wake_all=self._wake_all,
            wake_one=self._pass_the_wake,
            check_interval=check_interval,
            sweep_interval=sweep_interval,
            left_running=self._recorder.left_running,
        )

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> None:
        """Register this runner (its liveness lock and its row), then start the workers.

        From then on it confirms its lock several times a second, beats and
        sweeps every half second, settling the jobs of runners whose death is
        certain. Raises RunnerStateError on a second call and StoreError when
        the store cannot be reached (nothing is started then).
        """
        with self._wake:
            if self._started:
                raise RunnerStateError("the runner has already started")
            self._started = True
        self._close_registration()
        info = RunnerInfo(
            id=self.id,
            host=self._host,
            pid=os.getpid(),
            started_at=self._clock.now(),
            kinds=tuple(self.kinds.names()),
            queues=None,
            workers=self._workers,
        )
        try:
            self._keeper.register(info)
        except BaseException:
            with self._wake:
                self._started = False  # nothing ran: the caller may try again
            raise
        with self._wake:
            self._live_workers = self._workers
        for number in range(self._workers):
            self._start_worker(number)
        self._keeper.start()

    def _close_registration(self) -> None:
        """No kind may be registered from now on; these are the kinds this runner claims."""
        self.kinds.freeze()
        self._kinds = frozenset(self.kinds.names())

    def _start_worker(self, number: int) -> None:
        threading.Thread(
            target=self._work, args=(number,), name=f"jobtable-worker-{number}", daemon=True
        ).start()

    def stop(self) -> None:
        """The first phase of stopping: take no new job; running jobs go on. Returns at once.

        ``join`` waits for them; ``stop_now`` tells their handlers to stop.
        """
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
            self._stop.notify_all()

    def stop_now(self) -> None:
        """The second phase: also tell every handler to stop (``ctx.wait`` returns True).

        A handler that returns is recorded; one that raises because it was
        told to stop has its job queued again while its attempts last, or
        failed ``interrupted by restart``. Returns at once.
        """
        self.stop()
        with self._wake:
            self._stopping_now = True
        self._attempts.stop_all("runner stopping")

    def join(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds for every worker to exit; True if they all did.

        Once they have, the runner deletes its row and lets go of its lock,
        also bounded by ``timeout`` when the database hangs. Workers are
        daemon threads: one stuck in a handler that ignores the stop signal
        does not keep the process alive once the caller gives up.
        """
        started = self._clock.monotonic()
        finished = self._clock.wait_for(self._done, lambda: self._live_workers == 0, timeout)
        if finished and self._started:
            # Every call waits (what is left of its timeout) for the same deletion, so a
            # caller that joins in short slices does not give it up after the first.
            spent = self._clock.monotonic() - started
            self._keeper.finish(None if timeout is None else max(0.0, timeout - spent))
        return finished

    def shutdown(self, grace: float, *, then_wait: float = STOP_NOW_WAIT) -> bool:
        """Stop in two phases: let running jobs finish for ``grace`` seconds, then tell them to stop.

        Returns True when every worker exited (within ``grace + then_wait``).
        """
        self.stop()
        if self.join(timeout=grace):
            return True
        self._log.warning(
            "jobs still running after the grace period; telling their handlers to stop"
        )
        self.stop_now()
        return self.join(timeout=then_wait)

    @property
    def live_workers(self) -> int:
        """Worker threads running now: the pool size from start until stop."""
        with self._done:
            return self._live_workers

    # -- jobs --------------------------------------------------------------

    def get(self, job_id: str) -> Job | None:
        """The job with ``job_id`` as shown to anyone, or None when there is none."""
        return self._store.get(job_id)

    def enqueue(self, kind: str, payload: Any) -> str:
        """Enqueue a job by kind name with a decoded JSON payload, as a typed handle would.

        The payload is validated exactly as the kind's handle validates it,
        and stored as the handle would store it. Raises UnknownKindError or
        InvalidPayloadError, storing nothing.
        """
        spec = self.kinds.get(kind) if isinstance(kind, str) else None
        if spec is None:
            raise UnknownKindError(str(kind))
        try:
            structured = codec.structure_payload(self._converter, payload, spec.payload_type)
            encoded = codec.encode_payload(self._converter, structured)
        except codec.PayloadDecodeError as error:
            raise InvalidPayloadError(kind, error.problems) from None
        except codec.NotStrictJsonError as error:
            raise InvalidPayloadError(kind, (error.problem,)) from None
        return self._enqueue_encoded(spec, encoded)

    def drain(self) -> list[Job]:
        """Run every queued job to completion in the calling thread; return them as finished.

        Jobs the handlers enqueue run too. For tests: deterministic, no
        worker threads. Refused once the runner has started; registration
        closes at the first drain, as it does at start.
        """
        with self._wake:
            if self._started:
                raise RunnerStateError("drain runs jobs without workers; the runner has started")
        self._close_registration()
        finished: list[Job] = []
        claimed = self._store.claim_next(
            runner_id=self.id, now=self._clock.now(), kinds=self._kinds
        )
        while claimed is not None:
            following = self._run(0, claimed)
            job = self._store.get(claimed.id)
            if job is not None:
                finished.append(job)
            claimed = following or self._store.claim_next(
                runner_id=self.id, now=self._clock.now(), kinds=self._kinds
            )
        return finished

    def _enqueue_encoded(self, spec: KindSpec, payload: str) -> str:
        now = self._clock.now()  # one reading: the id's time and the stored time agree
        job_id = self._ids.next_id(_unix_ms(now))
        self._store.create(
            NewJob(id=job_id, kind=spec.name, payload=payload, max_attempts=spec.max_attempts),
            now=now,
        )
        with self._wake:
            self._wake_tokens = min(self._wake_tokens + 1, self._workers)
            self._wake.notify()
        return job_id

    # -- workers -----------------------------------------------------------

    def _work(self, number: int) -> None:
        """One worker: claim, run, record, until stopped; a worker that crashes is replaced."""
        replace = False
        try:
            claimed: ClaimedJob | None = None
            while not self._stopping:
                claimed = self._claim() if claimed is None else self._run(number, claimed)
            if claimed is not None:
                # The claim returned after stop began: its handler never ran.
                self._recorder.give_back(claimed)
        except BaseException as error:
            # Our own bug, or a store raising past Exception: the pool must keep its size.
            self._log.error(
                "worker crashed; starting another worker=%d category=%s",
                number,
                loggable_category(error),
            )
            replace = not self._stopping
        finally:
            self._attempts.end(number)
            if replace:
                replace = self._replace_worker(number)
            if not replace:
                with self._done:
                    self._live_workers -= 1
                    self._done.notify_all()

    def _replace_worker(self, number: int) -> bool:
        """Start a worker in a crashed one's place; False if even that fails (no threads left)."""
        try:
            self._start_worker(number)
        except Exception as error:
            self._log.error(
                "could not start a worker in place of one that crashed category=%s",
                loggable_category(error),
            )
            return False
        return True

    def _claim(self) -> ClaimedJob | None:
        """Claim the oldest queued job; when there is none, sleep until woken or stopped.

        Only while this runner's liveness is confirmed (checked in memory). A
        claim that fails is retried after the backoff delay, not after a
        wake: a job queued before a restart has no wake to come.
        """
        retry_delay: float | None = None
        while not self._stopping:
            if not self._keeper.may_claim():
                self._wait_for_liveness()
                continue
            try:
                claimed = self._store.claim_next(
                    runner_id=self.id, now=self._clock.now(), kinds=self._kinds
                )
            except Exception as error:
                retry_delay = next_claim_retry_delay(retry_delay)
                # A blip that the backoff rides out is a warning; an outage
                # that has pushed the delay to its ceiling is an error.
                level = logging.ERROR if retry_delay >= CLAIM_RETRY_MAXIMUM else logging.WARNING
                self._log.log(
                    level,
                    "claim job failed; retrying category=%s retry_in=%.3fs",
                    loggable_category(error),
                    retry_delay,
                )
                self._clock.wait_for(self._stop, lambda: self._stopping, retry_delay)
                continue
            if claimed is None:
                self._wait_for_wake()
            else:
                self._pass_the_wake()  # more may be queued: let one more idle worker look
            return claimed
        return None

    def _wait_for_liveness(self) -> None:
        """Sleep until the liveness keeper confirms this runner again, or stop."""
        with self._wake:
            self._liveness_waiters += 1
        try:
            self._clock.wait_for(
                self._wake, lambda: self._stopping or self._keeper.may_claim(), None
            )
        finally:
            with self._wake:
                self._liveness_waiters -= 1

    def _wait_for_wake(self) -> None:
        with self._wake:
            self._idle_workers += 1
            try:
                while self._wake_tokens == 0 and not self._stopping:
                    self._wake.wait()
                if self._wake_tokens:
                    self._wake_tokens -= 1
            finally:
                self._idle_workers -= 1

    def notice_jobs_from_elsewhere(self) -> None:
        """Another process may have queued jobs: wake one idle worker to look.

        A worker that finds a job wakes the next idle one, so a burst is
        spread over the pool without waking every worker for a single job.
        Cheap enough for a watcher to call on every change it sees.
        """
        self._pass_the_wake()

    def _pass_the_wake(self) -> None:
        """Make sure one worker looks: wake an idle one, or leave a token for the next to idle.

        The token matters when no worker is idle yet: one that has just found
        the queue empty and is about to sleep would otherwise miss a job that
        arrived in between, and sleep until some later change.
        """
        with self._wake:
            if not self._wake_tokens:
                self._wake_tokens = 1
                if self._idle_workers:
                    self._wake.notify()

    def _wake_all(self) -> None:
        """Liveness was confirmed: every worker waiting for it may claim (cheap when none waits)."""
        with self._wake:
            if self._liveness_waiters:
                self._wake.notify_all()

    def _run(self, number: int, claimed: ClaimedJob) -> ClaimedJob | None:
        """Run one job, record its outcome, and return the next job claimed with it, if any."""
        attempt = self._attempts.begin(number, claimed.claim)
        try:
            spec = self.kinds.get(claimed.kind)
            if spec is None:
                decision: Decision = Fail(code=UNKNOWN_KIND, reason="no handler registered")
            else:
                context = self._context(attempt)
                decision = run_handler(spec, claimed.payload, context, self._converter)
            # drain (no workers, no liveness: tests) always takes the next job along.
            claim_next = not self._stopping and (not self._started or self._keeper.may_claim())
            return self._recorder.record(
                claimed, decision, runner_id=self.id, claim_next=claim_next, kinds=self._kinds
            )
        finally:
            self._attempts.end(number)

    def _context(self, attempt: Attempt) -> JobContext:
        claim = attempt.claim

        def publish(partial: Any) -> None:
            result = codec.encode_public(partial)
            if not self._recorder.publish(claim, result):
                raise JobNotHeldError("the job is no longer held by this runner")

        def wait(seconds: float) -> bool:
            return self._clock.wait_for(self._attempts.changed, lambda: attempt.stopping, seconds)

        return JobContext(
            job_id=claim.job_id,
            attempt=claim.attempt,
            publish=publish,
            wait=wait,
            is_stopping=lambda: attempt.stopping,
        )


def _unix_ms(now: datetime.datetime) -> int:
    return int(now.timestamp() * 1000)
