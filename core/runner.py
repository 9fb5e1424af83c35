"""The Runner: a bounded pool of worker threads that claim queued jobs oldest first.

The jobs table is the queue. ``enqueue`` stores a job and wakes one idle
worker; a worker claims the oldest queued job, runs its handler, and records
one outcome, fenced by its claim so a stale worker never overwrites a newer
one. Idle workers sleep until woken: a single process never polls.

Stopping has two phases, as River's and Oban's do: ``stop()`` takes no new
job and lets running ones finish; ``stop_now()`` also tells every handler to
stop. ``shutdown(grace)`` runs both in turn.

Enqueues, reads and operator actions are its Client's (``runner.client``,
core/client.py), which tells the pool what it stored.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import random
import threading
from collections.abc import Callable, Collection
from typing import Any

from jobtable.core import codec
from jobtable.core.attempts import Attempt, Attempts
from jobtable.core.backoff import CLAIM_RETRY_MAXIMUM, next_claim_retry_delay
from jobtable.core.changes import JobChanges
from jobtable.core.client import Client
from jobtable.core.client_methods import ClientMethods
from jobtable.core.client_operations import LocalWorkers
from jobtable.core.clock import Clock
from jobtable.core.codes import CANCELLED, INTERNAL_ERROR, INTERRUPTED, TIMED_OUT, UNKNOWN_KIND
from jobtable.core.context import JobContext, JobNotHeldError
from jobtable.core.enqueue_options import (
    EnqueueOptions,
    check_queue,
)
from jobtable.core.errors import RunnerStateError
from jobtable.core.exchange import JobExchange
from jobtable.core.handling import run_handler
from jobtable.core.ids import JobIdGenerator, unix_ms
from jobtable.core.jobs import (
    ClaimedJob,
    Job,
    Retention,
)
from jobtable.core.liveness import CHECK_INTERVAL, SWEEP_INTERVAL, RunnerInfo
from jobtable.core.observer import SUCCEEDED, GuardedObserver, NoObserver, RunnerObserver
from jobtable.core.outcome import (
    AttemptEnd,
    Outcome,
    Raised,
    RunAgain,
    Stopped,
    Succeed,
    decide,
)
from jobtable.core.ports import JobStore
from jobtable.core.preemption import ABANDON, PREEMPT_GRACE, STOP, Deadlines
from jobtable.core.recording import OutcomeRecorder, job_fields, loggable_category
from jobtable.core.registration import Registration
from jobtable.core.retention import PruneLoop
from jobtable.core.scheduler import Scheduler
from jobtable.core.sweeper import Sweeper
from jobtable.core.ticks import Ticks
from jobtable.core.watching import StoreWatch

STOP_NOW_WAIT = 5.0
"""Seconds ``shutdown`` waits for handlers once they were told to stop."""

_STOP_CODES = {CANCELLED: CANCELLED, TIMED_OUT: TIMED_OUT}
"""Why a handler was told to stop, as the code its job ends with (else interrupted)."""

_LEFT_BEHIND = object()
"""What ``_run`` returns to a worker whose attempt the runner settled: leave the pool."""


class Runner(ClientMethods):
    """A bounded pool of worker threads over one store, with its Client."""

    def __init__(
        self,
        store: JobStore,
        clock: Clock,
        *,
        workers: int = 2,
        queues: Collection[str] | None = None,
        logger: logging.Logger | None = None,
        sweep_interval: float | None = SWEEP_INTERVAL,
        check_interval: float | None = CHECK_INTERVAL,
        host: str | None = None,
        jitter: Callable[[], float] = random.random,
        left_behind_cap: int | None = None,
        observer: RunnerObserver | None = None,
        retention: Retention | None = None,
        prunes: bool = True,
        changes: JobChanges | None = None,
        watch: bool = True,
    ) -> None:
        """A runner over ``store``; nothing runs until ``start``.

        ``workers=0`` makes an insert-only runner (a web tier): it enqueues,
        cancels and reads, and claims nothing. ``queues`` limits the queues
        it claims from (None: every queue). ``sweep_interval`` (seconds
        between beats and sweeps for dead runners) and ``check_interval``
        (seconds between checks of this runner's own liveness lock) keep
        their defaults in production; None turns either thread off, for
        tests that drive them by hand. ``jitter`` draws the retry backoff's
        random share. ``left_behind_cap`` bounds the handlers that ignored a
        cancel or timeout and still run (default: the pool's size); past it
        the runner stops replacing their workers until some return.
        ``observer`` hears of every job started and ended, claim error and
        recovery (core/observer.py): metrics hang on it.
        ``retention`` says how long finished jobs are kept (default: succeeded
        7 days, failed 30); a runner with workers prunes older ones every
        minute, one runner at a time, unless ``prunes`` is False (another
        runner of the process does it). ``changes`` is the hub readers wait on
        (default: a new one); runners of one process may share one, so a
        reader hears of a job whichever of them runs it, and a runner of the
        work another's writes make for it. A runner with workers
        ``watch``es its store, when the store can be watched, for jobs other
        connections commit (other processes, or the application's own
        transaction: ``enqueue(..., connection=)``); runners sharing one
        watcher pass False.
        """
        if store is None:
            raise ValueError("Runner needs a store")
        if clock is None:
            raise ValueError("Runner needs a clock")
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
            raise ValueError(f"Runner needs 0 or more workers, got {workers!r}")
        self._clock = clock
        self._workers = workers
        self._queues = None if queues is None else frozenset(check_queue(q) for q in queues)
        self._jitter = jitter
        self._host = host or os.uname().nodename
        self._log = log = logger or logging.getLogger("jobtable.runner")
        self._given_observer: RunnerObserver = observer or NoObserver()
        self._observer: RunnerObserver = (
            self._given_observer if observer is None else GuardedObserver(observer, log)
        )
        self._ids = JobIdGenerator()
        self.id = self._ids.next_id(unix_ms(clock.now()))
        """This runner's id, recorded on every job it claims."""
        self._prunes = prunes
        self._converter = codec.make_converter()
        self.client = Client(
            store,
            clock,
            changes=changes,
            workers=LocalWorkers(
                jobs_due=self._wake_for,
                job_scheduled=self._reread_schedule_soon,
                cancel_requested=self._cancel_here,
                queue_resumed=self.notice_jobs_from_elsewhere,
            ),
            converter=self._converter,
            logger=self._log,
            holder=self.id,
            retention=retention,
            claimer=self,
        )
        """Enqueues, reads and operator actions (core/client.py); the runner's own methods
        for them are the client's."""
        self.changes = self.client.changes
        """Readers waiting for a job to change (long-polls, event streams) subscribe here."""
        store = self._store = self.client.store  # every write announced to ``changes``
        self._pruner = self.client.pruner
        self.kinds = self.client.kinds
        self.builtins = self.client.builtins

        # The worker pool: its wakes, its stop, the jobs its handlers run.
        lock = threading.Lock()
        self._wake = threading.Condition(lock)  # idle workers wait here for a token
        self._stop = threading.Condition(lock)  # timed waits that end on stop
        self._done = threading.Condition(lock)  # join waits here for workers to exit
        self._wake_tokens = 0
        self._idle_workers = 0
        self._liveness_waiters = 0
        self._stopping = False  # no new claims (the first phase of stopping)
        self._started = False
        self._live_workers = 0
        self._attempts = Attempts(workers)
        self._kinds: frozenset[str] = frozenset()  # what this runner claims: set at start
        self._deadlines = Deadlines()
        self._left_behind = 0  # handlers that ignored a stop, still running
        self._left_behind_cap = max(1, workers) if left_behind_cap is None else left_behind_cap
        self._empty_slots: list[int] = []  # workers not replaced while past the cap

        # Claims and outcomes: batched per commit, recorded with retries.
        self._exchange = JobExchange(
            store,
            clock,
            runner_id=self.id,
            idle_workers=self._count_idle_workers,
            claimed_ahead_ready=self._claimed_ahead_ready,
        )
        self._recorder = OutcomeRecorder(
            store, clock, log, self._exchange, is_stopping=self._attempts.all_told_to_stop
        )

        # The background loops, each on a thread of its own once started.
        self._ticks = Ticks(
            store,
            clock,
            log,
            kinds=self.kinds,
            new_job=self.client.new_job,
            enqueued=self._wake_one,
        )
        self._scheduler = Scheduler(
            store,
            clock,
            log,
            ticks=self._ticks,
            deadlines=self._deadlines,
            act_on_deadlines=self._act_on_deadlines,
            wake=self._wake_for,
            wake_every_idle=self._wake_every_idle_worker,
            workers_gone=self._no_workers_left,
        )
        self._pruning = PruneLoop(self._pruner, clock, log)
        self._watching = StoreWatch(store, self.notice_jobs_from_elsewhere, enabled=watch)
        sweeper = Sweeper(
            store,
            clock,
            log,
            runner_id=self.id,
            attempts=self._attempts,
            claimed_ahead=self._exchange.claimed_ahead_claims,
            left_running=self._recorder.left_running,
            preempt=self._preempt,
            wake_one=self._wake_one,
            observer=self._observer,
            interval=sweep_interval,
            jitter=jitter,
        )
        self._registration = Registration(
            store,
            clock,
            log,
            runner_id=self.id,
            attempts=self._attempts,
            sweeper=sweeper,
            take_claimed_ahead=self._exchange.take_all_claimed_ahead,
            wake_all=self._wake_all,
            on_sweep=self._scheduler.pass_on_notice,
            check_interval=check_interval,
            sweep_interval=sweep_interval,
        )
        if workers:  # another runner of the process that makes work for it wakes it
            self.changes.listen_for_work(self, self._queues, self.notice_jobs_from_elsewhere)

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
        self._freeze_kinds()
        if not self._workers:
            return  # insert-only: not registered, no claims, nobody to sweep for
        info = RunnerInfo(
            id=self.id,
            host=self._host,
            pid=os.getpid(),
            started_at=self._clock.now(),
            kinds=tuple(self.kinds.names()),
            queues=None if self._queues is None else tuple(sorted(self._queues)),
            workers=self._workers,
        )
        try:
            self._ticks.record_schedules()  # first: a failure here leaves nothing registered
            # Before the workers' first claims: a job committed between one of them and
            # the watcher's first look cannot go unnoticed.
            self._watching.start()
            self._registration.register(info)
        except BaseException:
            self._watching.stop()
            with self._wake:
                self._started = False  # nothing ran: the caller may try again
            raise
        with self._wake:
            self._live_workers = self._workers
        for number in range(self._workers):
            self._start_worker(number)
        self._registration.start()
        self._scheduler.start()
        if self._prunes:
            self._pruning.start()

    def _freeze_kinds(self) -> None:
        """No kind may be registered from now on; these are the kinds this runner claims."""
        self.kinds.freeze()
        self._kinds = frozenset(self.kinds.names())
        self._exchange.serve(self._kinds, self._queues)

    def _start_worker(self, number: int) -> None:
        threading.Thread(
            target=self._work, args=(number,), name=f"jobtable-worker-{number}", daemon=True
        ).start()

    def stop(self) -> None:
        """The first phase of stopping: take no new job; running jobs go on. Returns at once.

        ``join`` waits for them; ``stop_now`` tells their handlers to stop.
        """
        self._pruning.stop()
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
            self._stop.notify_all()
        self._scheduler.stop()
        with self._done:
            if self._empty_slots:  # slots never refilled: nothing left to wait for in them
                self._live_workers -= len(self._empty_slots)
                self._empty_slots.clear()
                self._done.notify_all()
        self._scheduler.workers_changed()

    def stop_now(self) -> None:
        """The second phase: also tell every handler to stop (``ctx.wait`` returns True).

        A handler that returns is recorded; one that raises because it was
        told to stop has its job queued again while its attempts last, or
        failed ``interrupted by restart``. Returns at once.
        """
        self.stop()
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
        if finished and self._started and self._workers:
            # Every call waits (what is left of its timeout) for the same deletion, so a
            # caller that joins in short slices does not give it up after the first.
            spent = self._clock.monotonic() - started
            self._watching.stop()
            self._registration.finish(None if timeout is None else max(0.0, timeout - spent))
            # A batch under way ends before the store closes.
            self._pruning.join(None if timeout is None else max(0.0, timeout - spent))
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

    @property
    def observer(self) -> RunnerObserver:
        """What this runner reports its events to (a no-op unless one was given)."""
        return self._given_observer

    # -- running jobs in the calling thread (tests) -------------------------

    def drain(self) -> list[Job]:
        """Run every due job to completion in the calling thread; return them as finished.

        Jobs the handlers enqueue run too, when they are due. For tests:
        deterministic, no worker threads; a test advances its clock to make
        scheduled and retrying jobs due, then drains again. Refused once the
        runner has started; no kind may be registered after the first drain, as
        after start.
        """
        with self._wake:
            if self._started:
                raise RunnerStateError("drain runs jobs without workers; the runner has started")
        self._freeze_kinds()
        finished: list[Job] = []
        claimed = self._drain_claim()
        while claimed is not None:
            following = self._run(0, claimed)
            job = self._store.get(claimed.id)
            if job is not None and job.status.finished:  # not one queued to retry later
                finished.append(job)
            claimed = following if isinstance(following, ClaimedJob) else self._drain_claim()
        return finished

    def _drain_claim(self) -> ClaimedJob | None:
        now = self._clock.now()
        self._store.promote_due(now=now)
        return self._store.claim_next(
            runner_id=self.id, now=now, kinds=self._kinds, queues=self._queues
        )

    # -- workers -----------------------------------------------------------

    def _work(self, number: int) -> None:
        """One worker: claim, run, record, until stopped; a worker that crashes is replaced."""
        replace = False
        left_behind = False
        try:
            claimed: ClaimedJob | None = None
            while not self._stopping:
                if claimed is None:
                    claimed = self._claim()
                    continue
                following = self._run(number, claimed)
                if following is _LEFT_BEHIND:
                    left_behind = True  # the runner settled its job and gave its place away
                    return
                claimed = following if isinstance(following, ClaimedJob) else None
            if claimed is not None:
                # The claim returned after stop began: its handler never ran.
                self._exchange.put_down(claimed.claim)
                self._recorder.put_back(claimed)
            self._give_back_claimed_ahead()
        except BaseException as error:
            # Our own bug, or a store raising past Exception: the pool must keep its size.
            self._log.error(
                "worker crashed; starting another worker=%d category=%s",
                number,
                loggable_category(error),
            )
            replace = not self._stopping
        finally:
            if left_behind:
                self._left_behind_returned()
            else:
                self._attempts.end(number)
                if replace:
                    replace = self._replace_worker(number)
                if not replace:
                    self._close_slot()

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
            if not self._registration.may_claim():
                self._give_back_claimed_ahead()  # others may settle them meanwhile: never run them
                self._wait_for_liveness()
                continue
            ahead = self._exchange.take_claimed_ahead()
            if ahead is not None:
                return ahead
            handover = self._exchange.hand_in(None, wants=True)
            if handover.error is not None:
                error = handover.error
                self._observer.claim_failed()
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
            claimed = handover.job
            self._scheduler.pass_on_notice()
            if claimed is None:
                self._wait_for_wake()
            else:
                self._wake_one()  # more may be queued: let one more idle worker look
            return claimed
        return None

    def _claimed_ahead_ready(self, count: int) -> None:
        """Jobs were claimed for idle workers: wake that many (each takes one).

        Workers waiting for liveness wait on the same condition: while any
        does, wake everyone, so no notice lands on a worker that cannot claim.
        """
        with self._wake:
            if self._liveness_waiters:
                self._wake.notify_all()
            else:
                self._wake.notify(count)

    def _give_back_claimed_ahead(self) -> None:
        """Put back jobs claimed for idle workers that will not run them (stopping, no liveness).

        A give-back that fails leaves them held in this runner's name, run by
        no worker: the sweep gives them back, or others settle them once this
        runner is judged dead.
        """
        for claimed in self._exchange.take_all_claimed_ahead():
            self._recorder.put_back(claimed)

    def _wait_for_liveness(self) -> None:
        """Sleep until the registration confirms this runner's liveness again, or stop."""
        with self._wake:
            self._liveness_waiters += 1
        try:
            self._clock.wait_for(
                self._wake, lambda: self._stopping or self._registration.may_claim(), None
            )
        finally:
            with self._wake:
                self._liveness_waiters -= 1

    def _wait_for_wake(self) -> None:
        with self._wake:
            self._idle_workers += 1
            try:
                while (
                    self._wake_tokens == 0
                    and not self._stopping
                    and not self._exchange.has_claimed_ahead()
                ):
                    self._wake.wait()
                if self._wake_tokens:
                    self._wake_tokens -= 1
            finally:
                self._idle_workers -= 1

    def notice_jobs_from_elsewhere(self) -> None:
        """Another process may have queued jobs: wake one idle worker to look.

        A worker that finds a job wakes the next idle one, so a burst is
        spread over the pool without waking every worker for a single job.
        The scheduler looks again for the earliest due time too (another
        process may have scheduled an earlier job), but after the woken
        worker's claim or at the next sweep, whichever comes first: its read
        must not delay the claim that picks up the job. Cheap enough for a
        watcher to call on every change it sees.
        """
        self._scheduler.noticed_elsewhere()
        self._wake_one()

    def _reread_schedule_soon(self) -> None:
        """The store may hold an earlier due time than the scheduler knows: it looks again."""
        self._scheduler.look_again()

    def _wake_one(self) -> None:
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

    def _wake_for(self, count: int) -> None:
        """``count`` jobs fell due: wake that many idle workers (tokens for the rest to come)."""
        with self._wake:
            self._wake_tokens = min(self._wake_tokens + count, self._workers)
            self._wake.notify(count)

    def _wake_every_idle_worker(self) -> None:
        with self._wake:
            self._wake_tokens = self._workers
            self._wake.notify_all()

    def _count_idle_workers(self) -> int:
        """Workers asleep for want of a job (the exchange claims ahead for them)."""
        return self._idle_workers

    def _wake_all(self) -> None:
        """Liveness was confirmed: every worker waiting for it may claim (cheap when none waits)."""
        with self._wake:
            if self._liveness_waiters:
                self._wake.notify_all()

    def _run(self, number: int, claimed: ClaimedJob) -> object:
        """Run one job, record its outcome, and return the next job claimed with it, if any.

        Returns _LEFT_BEHIND instead when the handler ignored a cancel or a
        timeout so long that the runner settled the job itself: the worker
        then leaves the pool (a new one has its place).
        """
        attempt = self._attempts.begin(number, claimed.claim, claimed)
        recorded = False
        try:
            self._job_started(attempt, claimed)
            if claimed.timeout is not None and self._started:
                self._add_deadline(claimed.timeout, STOP, TIMED_OUT, attempt)
            spec = self.kinds.get(claimed.kind)
            if spec is None:
                end: AttemptEnd = Raised(code=UNKNOWN_KIND, reason="no handler registered")
            else:
                context = self._context(attempt, claimed)
                end = run_handler(
                    spec,
                    claimed.payload,
                    context,
                    self._converter,
                    stop_code=functools.partial(_stop_code, attempt),
                )
            if not self._attempts.take_settling(attempt, "worker"):
                return _LEFT_BEHIND
            attempt.job = None  # a deadline may outlive the job: keep no payload alive
            # drain (no workers, no liveness: tests) always takes the next job along.
            claim_next = not self._stopping and (
                not self._started or self._registration.may_claim()
            )
            outcome = self._decide(claimed, end)
            self._job_ended(attempt, claimed.kind, outcome)
            following = self._recorder.record(claimed, end, outcome, claim_next=claim_next)
            recorded = True
            if isinstance(outcome, RunAgain) and self._started:
                self._reread_schedule_soon()  # it is due later: the scheduler must know
            return following
        except BaseException:
            if not recorded and attempt.settled_by != "runner":
                self._record_after_crash(claimed, attempt)
            raise
        finally:
            self._exchange.put_down(claimed.claim)
            if attempt.settled_by != "runner":
                self._attempts.end(number)

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
        waited = None
        if claimed.due_at is not None:
            waited = max(0.0, (self._clock.now() - claimed.due_at).total_seconds())
        self._observer.job_started(claimed.kind, waited=waited)
        if self._log.isEnabledFor(logging.DEBUG):
            self._log.debug(
                "job started job_id=%s kind=%s attempt=%d",
                claimed.id,
                claimed.kind,
                claimed.claim.attempt,
                extra=job_fields(claimed),
            )

    def _job_ended(self, attempt: Attempt, kind: str, outcome: Outcome) -> None:
        """Report an attempt's end to the observer, before its outcome is recorded."""
        seconds = max(0.0, self._clock.monotonic() - attempt.started)
        if isinstance(outcome, Succeed):
            self._observer.job_ended(kind, code=SUCCEEDED, final=True, seconds=seconds)
        else:
            final = not isinstance(outcome, RunAgain)
            self._observer.job_ended(kind, code=outcome.code, final=final, seconds=seconds)

    def _decide(self, claimed: ClaimedJob, end: AttemptEnd) -> Outcome:
        """What to record for an attempt: its result, or its failure as the job's policy says."""
        return decide(
            end,
            claimed.policy,
            attempt=claimed.claim.attempt,
            now=self._clock.now(),
            jitter=self._jitter,
        )

    def _context(self, attempt: Attempt, claimed: ClaimedJob) -> JobContext:
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
            checkpoint=None if claimed.checkpoint is None else json.loads(claimed.checkpoint),
            publish=publish,
            wait=wait,
            is_stopping=lambda: attempt.stopping,
        )

    # -- cancels, timeouts and handlers left behind ----------------------------

    def _cancel_here(self, job_id: str) -> None:
        """A cancel asked of a running job: stop its handler if it runs here (else another
        process's runner sees the flag on its next sweep)."""
        for attempt in self._attempts.snapshot():
            if attempt.claim.job_id == job_id:
                self._preempt(attempt, CANCELLED)

    def _preempt(self, attempt: Attempt, code: str) -> None:
        """Tell a handler to stop with ``code`` now; leave it behind if it has not returned
        after PREEMPT_GRACE."""
        if attempt.settled_by is not None:
            return
        self._attempts.stop([attempt], code)
        if self._started:
            self._add_deadline(PREEMPT_GRACE, ABANDON, code, attempt)

    def _add_deadline(self, seconds: float, action: str, code: str, attempt: Attempt) -> None:
        if self._deadlines.add(self._clock.monotonic() + seconds, action, code, attempt):
            self._scheduler.deadlines_changed()

    def _act_on_deadlines(self) -> None:
        for action, code, attempt in self._deadlines.due(self._clock.monotonic()):
            if attempt.settled_by is not None:
                continue  # its handler returned in time
            if action == STOP:
                self._log.warning(
                    "job ran past its timeout; telling its handler to stop job_id=%s",
                    attempt.claim.job_id,
                    extra={"job_id": attempt.claim.job_id},
                )
                self._preempt(attempt, code)
            elif self._attempts.take_settling(attempt, "runner"):
                self._attempts.abandon(attempt)
                with self._done:  # counted before its handler can return and count down
                    self._left_behind += 1
                    count = self._left_behind
                    refill = count <= self._left_behind_cap and not self._stopping
                    if not refill and not self._stopping:
                        self._empty_slots.append(attempt.worker)
                    elif self._stopping:
                        self._live_workers -= 1
                        self._done.notify_all()
                threading.Thread(
                    target=self._leave_behind,
                    args=(attempt, code, count, refill),
                    name="jobtable-settle-left-behind",
                    daemon=True,
                ).start()

    def _leave_behind(self, attempt: Attempt, code: str, count: int, refill: bool) -> None:
        """Record a job whose handler ignored its stop, and give its worker's place away."""
        claimed = attempt.job
        self._log.error(
            "handler ignored its stop; its job is recorded and its worker replaced "
            "job_id=%s code=%s left_behind=%d",
            attempt.claim.job_id,
            code,
            count,
            extra=job_fields(claimed, code),
        )
        if not refill and not self._stopping:
            self._log.error(
                "too many handlers left behind; claiming with fewer workers until some return "
                "left_behind=%d cap=%d",
                count,
                self._left_behind_cap,
            )
        end = Stopped(code=_stop_code(attempt))
        outcome = self._decide(claimed, end)
        self._job_ended(attempt, claimed.kind, outcome)
        self._recorder.record(claimed, end, outcome, claim_next=False)
        self._attempts.settled(attempt)
        if isinstance(outcome, RunAgain):
            self._wake_one()  # it may be due at once
            self._reread_schedule_soon()  # or later: the scheduler must know
        if refill and not self._replace_worker(attempt.worker):
            self._close_slot()

    def _close_slot(self) -> None:
        """A worker's place is given up for good: join, and the scheduler, may be waiting."""
        with self._done:
            self._live_workers -= 1
            self._done.notify_all()
        self._scheduler.workers_changed()

    def _left_behind_returned(self) -> None:
        """A handler left behind returned at last: refill a slot left empty past the cap."""
        with self._done:
            self._left_behind -= 1
            slot = self._empty_slots.pop() if self._empty_slots and not self._stopping else None
        if slot is not None and not self._replace_worker(slot):
            self._close_slot()

    def _no_workers_left(self) -> bool:
        return self._live_workers == 0  # one read of an int: no lock needed, none taken


_NO_OPTIONS = EnqueueOptions()


def _stop_code(attempt: Attempt) -> str:
    """Why ``attempt``'s handler was told to stop, as the code its job ends with."""
    return _STOP_CODES.get(attempt.stop_reason or "", INTERRUPTED)
