"""The liveness keeper: a runner's check thread and its sweep thread, and what they promise.

The check confirms the runner's own lock several times a sweep, and workers claim only
while it is fresh; when checks stop coming, every handler is told to stop before others
could judge the runner dead (core/liveness.py). The sweep beats, settles dead runners'
jobs, and gives back jobs held here that no worker runs (a claim whose reply was lost).
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable

from jobtable.core.attempts import Attempt, Attempts
from jobtable.core.clock import Clock
from jobtable.core.codes import INTERRUPTED
from jobtable.core.errors import LivenessLockLostError
from jobtable.core.jobs import Claim, HeldJob
from jobtable.core.liveness import (
    CHECK_INTERVAL,
    CHECK_TIMEOUT,
    SWEEP_INTERVAL,
    DeathJudge,
    OwnLiveness,
    RunnerInfo,
)
from jobtable.core.looper import start_loop
from jobtable.core.observer import NoObserver, RunnerObserver
from jobtable.core.outcome import settle_interrupted
from jobtable.core.ports import JobStore
from jobtable.core.recording import loggable_category
from jobtable.core.settling import settle_dead_runners
from jobtable.core.streak import FailureStreak

UNREGISTER_WAIT = 5.0
"""Longest ``finish`` waits to delete the runner's row when given no timeout."""


class LivenessKeeper:
    def __init__(
        self,
        store: JobStore,
        clock: Clock,
        log: logging.Logger,
        *,
        runner_id: str,
        attempts: Attempts,
        wake_all: Callable[[], None],
        wake_one: Callable[[], None],
        check_interval: float | None,
        sweep_interval: float | None,
        left_running: Callable[[], dict[Claim, str]] = dict,
        kept_for_workers: Callable[[], set[Claim]] = set,
        drop_kept: Callable[[], set[Claim]] = set,
        cancel: Callable[[Attempt], None] = lambda attempt: None,
        on_sweep: Callable[[], None] = lambda: None,
        observer: RunnerObserver | None = None,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        """``left_running`` names claims whose handler ran but whose outcome could not be
        recorded, each with the code to settle it with: never given back as if unrun.
        ``kept_for_workers`` names claims made for idle workers about to take them: run by
        no worker yet, but not lost; ``drop_kept`` takes them all away from the workers
        (this keeper gives them back when the runner's liveness was lost). ``cancel`` stops a
        handler whose job someone asked to cancel (seen on each sweep, from any process).
        ``observer`` hears of the jobs of dead runners this keeper settles; ``jitter`` draws
        the retry backoff's random share for the jobs it settles, as the runner's does."""
        self._store = store
        self._clock = clock
        self._log = log
        self._id = runner_id
        self._attempts = attempts
        self._wake_all = wake_all
        self._wake_one = wake_one
        self._cancel = cancel
        self._on_sweep = on_sweep
        self._observer: RunnerObserver = observer or NoObserver()
        self._jitter = jitter
        self._check_interval = check_interval
        self._sweep_interval = sweep_interval
        terms = store.liveness_terms
        freshness = float("inf") if check_interval is None else sweep_interval or SWEEP_INTERVAL
        self._own = OwnLiveness(terms, freshness=freshness)
        self._judge = DeathJudge(terms, interval=sweep_interval or SWEEP_INTERVAL)
        self._info: RunnerInfo | None = None
        self._changed = threading.Condition()
        self._finished = False
        self._reconcile_requested = False  # wakes the sweeper early, once per request
        self._sweeping = threading.Lock()  # finish deletes the row only between sweeps...
        self._checking = threading.Lock()  # ...and between checks, which could take it again
        self._unregistering: threading.Thread | None = None
        self._unregistered: list[bool] = []
        self._ended = threading.Condition()
        self._handlers_stopped_until: float | None = None  # the deadline they were stopped at
        self._watchdog = terms.lease is not None or terms.lock_timeout is not None
        self._left_running = left_running
        self._kept_for_workers = kept_for_workers
        self._drop_kept = drop_kept
        self._suspects: dict[Claim, HeldJob] = {}  # held here, run by no worker, at last sweep
        self._check_streak = FailureStreak(log, "confirming this runner's liveness lock")
        self._sweep_streak = FailureStreak(log, "sweep")

    # -- lifecycle ---------------------------------------------------------

    def register(self, info: RunnerInfo) -> None:
        """Take the lock, write the runner's row and take a first look at the others.

        Raises StoreError when any of it fails; nothing is left held then.
        """
        self._info = info
        sent = self._clock.monotonic()
        self._store.register_runner(info, now=self._clock.now())
        try:
            self._own.lock_confirmed(sent)
            self._own.beat_landed(sent)
            self._settle_dead()  # the first look: a verdict needs two
        except BaseException:
            self._store.unregister_runner(self._id)
            raise

    def start(self) -> None:
        def loop(name: str, body: Callable[[], None]) -> None:
            start_loop(name, body, clock=self._clock, log=self._log, ended=lambda: self._finished)

        if self._check_interval:
            loop("jobtable-liveness", self._check_loop)
            if self._watchdog:
                # A check can block (a host name to resolve, a silent network): the
                # deadline is kept by a thread that never touches the database.
                loop("jobtable-deadline", self._watchdog_loop)
        if self._sweep_interval:
            loop("jobtable-sweeper", self._sweep_loop)

    def finish(self, timeout: float | None) -> bool:
        """Stop the threads and delete the runner's row, waiting at most ``timeout`` seconds.

        Call once every worker has exited: whatever job is left running in
        this runner's name is then settled by others, as after a crash.
        Bounded even when the database hangs; a later call waits again for
        the same deletion. True once the row was deleted.
        """
        with self._changed:
            self._finished = True
            self._changed.notify_all()
            if self._unregistering is None:
                self._unregistering = threading.Thread(
                    target=self._unregister, name="jobtable-unregister", daemon=True
                )
                self._unregistering.start()
        self._clock.wait_for(
            self._ended,
            lambda: bool(self._unregistered),
            UNREGISTER_WAIT if timeout is None else timeout,
        )
        return self._unregistered == [True]

    def _unregister(self) -> None:
        deleted = False
        try:
            # Not during a sweep (it could register again) nor a check (it could re-take).
            with self._sweeping, self._checking:
                self._store.unregister_runner(self._id)
            deleted = True
        except Exception as error:
            self._log.warning(
                "could not delete this runner's row category=%s", loggable_category(error)
            )
        with self._ended:
            self._unregistered.append(deleted)
            self._ended.notify_all()

    def may_claim(self) -> bool:
        """Whether this runner's liveness is fresh enough to claim: memory only, no round trip."""
        return self._own.may_claim(self._clock.monotonic())

    def _wait(self, interval: float, *, or_reconcile: bool = False) -> bool:
        """Sleep ``interval`` on the clock; True once finished (and the thread should end)."""

        def woken() -> bool:
            return self._finished or (or_reconcile and self._reconcile_requested)

        self._clock.wait_for(self._changed, woken, interval)
        with self._changed:
            if or_reconcile:
                self._reconcile_requested = False  # one early wake per request
        return self._finished

    # -- the check thread -------------------------------------------------

    def _check_loop(self) -> None:
        assert self._check_interval is not None
        while not self._wait(self._check_interval):
            with self._checking:
                if self._finished:
                    return
                self._check_once()
            if not self._watchdog:  # where a check cannot block, it keeps the deadline itself
                self._enforce_deadline()

    def _watchdog_loop(self) -> None:
        assert self._check_interval is not None
        while not self._wait(self._check_interval):
            self._enforce_deadline()

    def _check_once(self) -> None:
        sent = self._clock.monotonic()
        # A check stops at the handlers' deadline, so the loop is back to keep it.
        deadline = self._own.handler_deadline()
        timeout = CHECK_TIMEOUT if deadline is None else min(CHECK_TIMEOUT, deadline - sent)
        try:
            held = self._store.confirm_liveness(self._id, timeout=max(timeout, CHECK_INTERVAL))
        except LivenessLockLostError as error:
            self._own.lock_absent(sent)  # known absent: others can see it so
            self._check_streak.failed(error, sent)
            return
        except Exception as error:
            self._check_streak.failed(error, sent)
            return
        self._check_streak.succeeded(self._clock.monotonic())
        self._own.lock_confirmed(sent, retaken=not held)
        if not held:
            self._log.warning(
                "this runner's liveness lock was lost and is taken again; "
                "checking which of its jobs are still its own"
            )
            with self._changed:
                self._reconcile_requested = True
                self._changed.notify_all()  # the sweeper reconciles at once
        else:
            self._wake_all()  # workers waiting for a fresh confirmation may claim

    def _enforce_deadline(self) -> None:
        deadline = self._own.handler_deadline()
        if deadline is None or deadline == self._handlers_stopped_until:
            return  # no deadline, or this one was kept already
        if self._clock.monotonic() >= deadline:
            self._handlers_stopped_until = deadline
            running = self._attempts.snapshot()
            self._log.error(
                "liveness not confirmed in time: telling every handler to stop before "
                "other runners may settle this runner's jobs count=%d",
                len(running),
            )
            self._attempts.stop(running, "liveness lost")

    # -- the sweep thread -------------------------------------------------

    def _sweep_loop(self) -> None:
        assert self._sweep_interval is not None
        while not self._wait(self._sweep_interval, or_reconcile=True):
            with self._sweeping:
                if self._finished:
                    return
                self._sweep_once()

    def _sweep_once(self) -> None:
        started = self._clock.monotonic()
        try:
            if not self._check_interval:
                # No check thread: confirm the lock here, as a sweep's first step.
                held = self._store.confirm_liveness(self._id, timeout=CHECK_TIMEOUT)
                self._own.lock_confirmed(started, retaken=not held)
            self._beat()
            self._reconcile()
            self._stop_cancelled()
            self._on_sweep()
            self._settle_dead()
            self._requeue_lost_claims()
        except Exception as error:
            self._sweep_streak.failed(error, started)
        else:
            self._sweep_streak.succeeded(self._clock.monotonic())

    def _beat(self) -> None:
        sent = self._clock.monotonic()
        if self._store.beat(self._id, busy=self._attempts.busy(), now=self._clock.now()):
            self._own.beat_landed(sent)
            return
        # No row: another runner judged this one dead and settled its jobs.
        self._log.error(
            "this runner was judged dead by another and its jobs were settled; registering again"
        )
        assert self._info is not None
        with self._changed:
            self._own.must_reconcile()
            self._reconcile_requested = True
        self._store.register_runner(self._info, now=self._clock.now())
        self._own.lock_confirmed(sent)
        self._own.beat_landed(sent)

    def _reconcile(self) -> None:
        """Keep the jobs still held in this runner's name; stop the handlers of the others."""
        if not self._own.reconciling:
            return
        # Jobs claimed for idle workers before the liveness was lost: others may have settled
        # them meanwhile, so no worker may start one. Given back fenced: one settled
        # elsewhere is left as it is. Should the give-back fail, no worker holds them and the
        # sweep for lost claims gives them back.
        kept = self._drop_kept()
        if kept:
            self._store.release_claims(kept, now=self._clock.now())
        running = self._attempts.snapshot()  # before the read: each of these was claimed before it
        held = {job.claim for job in self._store.running_jobs(self._id)}
        gone = [attempt for attempt in running if attempt.claim not in held]
        if gone:
            self._log.warning(
                "jobs of this runner were settled elsewhere; telling their handlers to stop "
                "count=%d",
                len(gone),
            )
            self._attempts.stop(gone, "no longer held")
        with self._changed:
            self._own.reconciled()
        self._wake_all()

    def _stop_cancelled(self) -> None:
        """Tell the handlers of jobs someone asked to cancel (here or elsewhere) to stop."""
        if not self._attempts.busy():
            return  # nothing running: no query
        requested = set(self._store.cancel_requests(self._id))
        for attempt in self._attempts.find(requested):
            if attempt.stop_reason is None:
                self._cancel(attempt)

    def _settle_dead(self) -> None:
        at = self._clock.monotonic()
        sightings = [seen for seen in self._store.sight_runners() if seen.runner_id != self._id]
        dead = self._judge.judge(sightings, at=at, returned_at=self._clock.monotonic())
        if not dead:
            return
        try:
            recovered = settle_dead_runners(
                self._store, dead, code=INTERRUPTED, now=self._clock.now(), jitter=self._jitter
            )
        except Exception:
            self._wake_one()  # its jobs may be queued already, the reply lost: a worker looks
            raise
        if recovered.failed or recovered.requeued:
            self._observer.jobs_recovered(recovered)
        if recovered.failed:
            self._log.warning("marked jobs interrupted by restart count=%d", recovered.failed)
        if recovered.requeued:
            self._log.warning("requeued jobs of a dead runner count=%d", recovered.requeued)
            self._wake_one()

    def _requeue_lost_claims(self) -> None:
        """Give back the jobs held in this runner's name that no worker of it runs.

        A claim the database committed but whose reply was lost (a connection
        dropped after COMMIT) leaves a job running under a live runner, which
        no sweep for dead runners would ever touch. A job seen so in two
        sweeps in a row is such a claim: a worker tracks a job microseconds
        after its claim returns. Its handler never ran, so its attempt is
        given back.
        """
        running_here = {attempt.claim for attempt in self._attempts.snapshot()}
        running_here |= self._kept_for_workers()
        lost = {claim: job for claim, job in self._suspects.items() if claim not in running_here}
        left_running = self._left_running()
        ran = [job for claim, job in lost.items() if claim in left_running]  # handlers ran
        unrun = [claim for claim in lost if claim not in left_running]
        try:
            for job in ran:
                code = left_running[job.claim]
                now = self._clock.now()
                outcome = settle_interrupted(
                    job.policy, attempt=job.claim.attempt, code=code, now=now, jitter=self._jitter
                )
                if self._store.record(job.claim, outcome, now=now):
                    self._log.warning(
                        "settled a job whose outcome was never recorded code=%s", code
                    )
                    self._wake_one()
            if unrun:
                moved = self._store.release_claims(unrun, now=self._clock.now())
                if moved:
                    self._log.warning("requeued jobs whose claim reply was lost count=%d", moved)
                    self._wake_one()
        except Exception:
            # It may have committed with its reply lost: the jobs are queued and no later
            # sweep sees them running here. A worker looks; finding nothing, it waits again.
            self._wake_one()
            raise
        held = self._store.running_jobs(self._id)
        running_here = {attempt.claim for attempt in self._attempts.snapshot()}
        running_here |= self._kept_for_workers()
        self._suspects = {
            job.claim: job
            for job in held
            if job.claim not in running_here and job.claim not in lost
        }
