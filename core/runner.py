"""The Runner: a bounded pool of worker threads that claim queued jobs oldest first.

The jobs table is the queue. ``enqueue`` stores a job and wakes one idle
worker; a worker claims the oldest queued job, runs its handler, and records
one outcome, fenced by its claim so a stale worker never overwrites a newer
one. Idle workers sleep until woken: a single process never polls.
"""

from __future__ import annotations

import datetime
import logging
import threading
from typing import Any

from jobtable.core import codec
from jobtable.core.backoff import CLAIM_RETRY_MAXIMUM, next_claim_retry_delay
from jobtable.core.builtins import Builtins, register_builtins
from jobtable.core.clock import Clock
from jobtable.core.codes import INTERRUPTED, UNKNOWN_KIND
from jobtable.core.context import JobContext, JobNotHeldError
from jobtable.core.errors import InvalidPayloadError, RunnerStateError, UnknownKindError
from jobtable.core.ids import JobIdGenerator
from jobtable.core.jobs import Claim, ClaimedJob, Job, NewJob
from jobtable.core.kinds import KindRegistry
from jobtable.core.outcome import Decision, Fail, run_handler
from jobtable.core.ports import JobStore
from jobtable.core.recording import OutcomeRecorder, loggable_category

SWEEP_INTERVAL = 1.0
"""Seconds between sweeps for jobs whose runner died."""


class Runner:
    def __init__(
        self,
        store: JobStore,
        clock: Clock,
        *,
        workers: int = 2,
        logger: logging.Logger | None = None,
        sweep_interval: float | None = SWEEP_INTERVAL,
    ) -> None:
        if store is None:
            raise ValueError("Runner needs a store")
        if clock is None:
            raise ValueError("Runner needs a clock")
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"Runner needs at least 1 worker, got {workers!r}")
        self._store = store
        self._clock = clock
        self._workers = workers
        self._sweep_interval = sweep_interval
        self._log = logger or logging.getLogger("jobtable.runner")
        self._ids = JobIdGenerator()
        self.id = self._ids.next_id(_unix_ms(clock.now()))
        """This runner's id, recorded on every job it claims."""
        self._recorder = OutcomeRecorder(
            store, clock, self._log, is_stopping=lambda: self._stopping
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
        self._stopping = False
        self._started = False
        self._live_workers = 0
        self._liveness_guard = threading.Lock()
        self._holding: list[str | None] = [None] * workers  # the job each worker runs
        self._suspects: set[Claim] = set()  # held here, run by no worker, at the last sweep

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> None:
        """Take this runner's liveness lock, settle jobs dead runners left, start the workers.

        A job left running by a runner that holds no liveness lock (its
        process is gone) fails ``interrupted by restart``, or is queued again
        when its kind allows more attempts; a live runner's jobs are never
        touched. After start the same sweep runs every ``sweep_interval``
        seconds. Raises RunnerStateError on a second call and StoreError
        when the store cannot be reached (nothing is started then).
        """
        with self._wake:
            if self._started:
                raise RunnerStateError("the runner has already started")
            self._started = True
        self.kinds.freeze()
        try:
            self._store.hold_liveness(self.id)
            self._sweep()
        except BaseException:
            self._store.release_liveness(self.id)
            with self._wake:
                self._started = False  # nothing ran: the caller may try again
            raise
        with self._wake:
            self._live_workers = self._workers
        for number in range(self._workers):
            thread = threading.Thread(
                target=self._work, args=(number,), name=f"jobtable-worker-{number}", daemon=True
            )
            thread.start()
        if self._sweep_interval:
            threading.Thread(
                target=self._sweep_periodically, name="jobtable-sweeper", daemon=True
            ).start()

    def _sweep(self) -> None:
        recovered = self._store.recover_orphans(
            code=INTERRUPTED, max_attempts=self.kinds.max_attempts(), now=self._clock.now()
        )
        if recovered.failed:
            self._log.warning("marked jobs interrupted by restart count=%d", recovered.failed)
        if recovered.requeued:
            self._log.warning("requeued jobs of a dead runner count=%d", recovered.requeued)
            self._pass_the_wake()

    def _sweep_periodically(self) -> None:
        """Settle dead runners' jobs at least once a second, until stop."""
        interval = self._sweep_interval
        while not self._clock.wait_for(self._stop, lambda: self._stopping, interval):
            with self._liveness_guard:  # join releases the lock only between sweeps
                if self._stopping:
                    return
                try:
                    # Confirm our own lock first: a runner that lost it (its database
                    # session ended) would otherwise settle its own running jobs.
                    self._store.hold_liveness(self.id)
                    self._sweep()
                    self._requeue_lost_claims()
                except Exception as error:
                    self._log.error(
                        "sweep for orphaned jobs failed category=%s", loggable_category(error)
                    )

    def _requeue_lost_claims(self) -> None:
        """Queue again the jobs held in this runner's name that no worker of it runs.

        A claim the database committed but whose reply was lost (a connection
        dropped after COMMIT) leaves a job running under a live runner, which
        no sweep for dead runners would ever touch. A job seen so in two
        sweeps in a row is such a claim: a worker tracks a job microseconds
        after its claim returns. Its handler never ran, so it is queued again.
        """
        running_here = set(self._holding)
        lost = {claim for claim in self._suspects if claim.job_id not in running_here}
        if lost:
            moved = self._store.requeue_claims(lost, now=self._clock.now())
            if moved:
                self._log.warning("requeued jobs whose claim reply was lost count=%d", moved)
                self._pass_the_wake()
        held = self._store.running_claims(self.id)
        running_here = set(self._holding)
        self._suspects = {claim for claim in held if claim.job_id not in running_here} - lost

    def stop(self) -> None:
        """Signal every worker and handler to stop. Returns at once; ``join`` waits."""
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
            self._stop.notify_all()

    def join(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds for every worker to exit; True if they all did.

        Workers are daemon threads: one stuck in a handler that ignores the
        stop signal does not keep the process alive once the caller gives up.
        """
        finished = self._clock.wait_for(self._done, lambda: self._live_workers == 0, timeout)
        if finished:
            # Every job this runner held is recorded or left running: let other
            # runners settle what is left, as they would after a crash. Under the
            # guard, so a sweep in progress cannot take the lock back after this.
            with self._liveness_guard:
                self._store.release_liveness(self.id)
        return finished

    @property
    def live_workers(self) -> int:
        """Worker threads running now: the pool size from start until stop, unless one died."""
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
        except codec.PayloadDecodeError as error:
            raise InvalidPayloadError(kind, error.problems) from None
        return self._enqueue_encoded(kind, codec.encode_payload(self._converter, structured))

    def drain(self) -> list[Job]:
        """Run every queued job to completion in the calling thread; return them as finished.

        Jobs the handlers enqueue run too. For tests: deterministic, no
        worker threads. Refused once the runner has started; registration
        closes at the first drain, as it does at start.
        """
        with self._wake:
            if self._started:
                raise RunnerStateError("drain runs jobs without workers; the runner has started")
        self.kinds.freeze()
        finished: list[Job] = []
        claimed = self._store.claim_next(runner_id=self.id, now=self._clock.now())
        while claimed is not None:
            following = self._run(claimed)
            job = self._store.get(claimed.id)
            if job is not None:
                finished.append(job)
            claimed = following or self._store.claim_next(runner_id=self.id, now=self._clock.now())
        return finished

    def _enqueue_encoded(self, kind: str, payload: str) -> str:
        now = self._clock.now()  # one reading: the id's time and the stored time agree
        job_id = self._ids.next_id(_unix_ms(now))
        self._store.create(NewJob(id=job_id, kind=kind, payload=payload), now=now)
        with self._wake:
            self._wake_tokens = min(self._wake_tokens + 1, self._workers)
            self._wake.notify()
        return job_id

    # -- workers -----------------------------------------------------------

    def _work(self, number: int) -> None:
        try:
            claimed: ClaimedJob | None = None
            while not self._stopping:
                claimed = self._claim() if claimed is None else self._run(claimed)
                # One slot per worker, written by it alone: no lock for two
                # workers to contend on, and the sweeper reads a snapshot.
                self._holding[number] = None if claimed is None else claimed.id
        finally:
            with self._done:
                self._live_workers -= 1
                self._done.notify_all()

    def _claim(self) -> ClaimedJob | None:
        """Claim the oldest queued job; when there is none, sleep until woken or stopped.

        A claim that fails is retried after the backoff delay, not after a
        wake: a job queued before a restart has no wake to come.
        """
        retry_delay: float | None = None
        while not self._stopping:
            try:
                claimed = self._store.claim_next(runner_id=self.id, now=self._clock.now())
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

    def _run(self, claimed: ClaimedJob) -> ClaimedJob | None:
        """Run one job, record its outcome, and return the next job claimed with it, if any."""
        spec = self.kinds.get(claimed.kind)
        if spec is None:
            decision: Decision = Fail(code=UNKNOWN_KIND, reason="no handler registered")
        else:
            decision = run_handler(spec, claimed.payload, self._context(claimed), self._converter)
        return self._record(claimed, decision)

    def _context(self, claimed: ClaimedJob) -> JobContext:
        claim = claimed.claim

        def publish(partial: Any) -> None:
            result = codec.encode_public(partial)
            if not self._recorder.publish(claim, result):
                raise JobNotHeldError("the job is no longer held by this runner")

        def wait(seconds: float) -> bool:
            return self._clock.wait_for(self._stop, lambda: self._stopping, seconds)

        return JobContext(
            job_id=claim.job_id,
            attempt=claim.attempt,
            publish=publish,
            wait=wait,
            is_stopping=lambda: self._stopping,
        )

    def _record(self, claimed: ClaimedJob, decision: Decision) -> ClaimedJob | None:
        return self._recorder.record(
            claimed, decision, runner_id=self.id, claim_next=not self._stopping
        )


def _unix_ms(now: datetime.datetime) -> int:
    return int(now.timestamp() * 1000)
