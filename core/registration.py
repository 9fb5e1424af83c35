"""This runner's registration (its row and liveness lock), kept alive by two threads: a check
thread confirms the lock; a sweep thread raises the beat when there is something to say, then
does the sweeper's duties to others (core/sweeper.py). The rules are core/liveness.py's.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from jobtable.core.attempts import Attempts
from jobtable.core.check_pace import CheckPace
from jobtable.core.clock import Clock
from jobtable.core.errors import LivenessLockLostError
from jobtable.core.liveness import (
    CHECK_INTERVAL,
    CHECK_TIMEOUT,
    SWEEP_INTERVAL,
    OwnLiveness,
    RunnerInfo,
)
from jobtable.core.looper import start_loop
from jobtable.core.ports import LivenessPort
from jobtable.core.recording import loggable_category
from jobtable.core.streak import FailureStreak
from jobtable.core.sweeper import Sweeper

UNREGISTER_WAIT = 5.0
"""Longest ``finish`` waits to delete the runner's row when given no timeout."""


class Registration:
    """Registers runner ``runner_id``, keeps it alive in the database, and tells when it may claim.

    The *check* thread confirms the runner's own lock several times per sweep,
    with a deadline on each round trip. Workers claim only while that
    confirmation is fresh (read from memory: no round trip per claim). A lock
    found lost is taken again at once; the runner then compares the jobs held in
    its name with what its workers run, keeps those still held and tells the
    handlers of the others to stop. When confirmations stop coming (a partition,
    a long outage) it tells every handler to stop before anyone else could
    judge it dead.

    The *sweep* thread raises the runner's beat, reconciles after a lost lock,
    and then does the sweeper's rounds: cancels, dead runners, lost claims.
    """

    def __init__(
        self,
        store: LivenessPort,
        clock: Clock,
        log: logging.Logger,
        *,
        runner_id: str,
        attempts: Attempts,
        sweeper: Sweeper,
        give_back_held: Callable[[], object],
        wake_all: Callable[[], None],
        wanted: Callable[[], bool],
        on_sweep: Callable[[], None],
        check_interval: float | None,
        sweep_interval: float | None,
    ) -> None:
        """``give_back_held`` gives back the jobs held ahead of the workers (when the runner's
        liveness was lost); ``wake_all`` tells the workers waiting for a
        fresh confirmation that they may claim, and ``wanted`` says whether one waits (the
        lock is then checked at the busy pace); ``on_sweep`` is called on every sweep."""
        self._store = store
        self._clock = clock
        self._log = log
        self._id = runner_id
        self._attempts = attempts
        self._sweeper = sweeper
        self._give_back_held = give_back_held
        self._wake_all = wake_all
        self._on_sweep = on_sweep
        self._check_interval = check_interval
        self._sweep_interval = sweep_interval
        terms = store.liveness_terms
        freshness = float("inf") if check_interval is None else sweep_interval or SWEEP_INTERVAL
        self._own = OwnLiveness(terms, freshness=freshness)
        self._changed = threading.Condition()
        self._pace = (
            None
            if check_interval is None
            else CheckPace(
                clock,
                self._changed,
                interval=check_interval,
                freshness=freshness,
                busy=lambda: bool(attempts.busy()) or wanted(),
            )
        )
        self._info: RunnerInfo | None = None
        self._finished = False
        self._reconcile_requested = False  # wakes the sweeper early, once per request
        self._check_requested = False  # wakes the check thread early, once per request
        self._sweeping = threading.Lock()  # finish deletes the row only between sweeps...
        self._checking = threading.Lock()  # ...and between checks, which could take it again
        self._unregistering: threading.Thread | None = None
        self._unregistered: list[bool] = []
        self._ended = threading.Condition()
        self._handlers_stopped_until: float | None = None  # the deadline they were stopped at
        self._watchdog = terms.lease is not None or terms.lock_timeout is not None
        self._check_streak = FailureStreak(log, "confirming this runner's liveness lock")
        self._sweep_streak = FailureStreak(log, "sweep")
        self.sweeps = 0
        """Sweeps done so far (tests step the sweep thread by it)."""

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
            self._own.beat_landed(sent, busy=0)
            self._sweeper.settle_dead()  # the first look: a verdict needs two
        except BaseException:
            self._store.unregister_runner(self._id)
            raise

    def start(self) -> None:
        def loop(name: str, body: Callable[[], None]) -> None:
            start_loop(name, body, clock=self._clock, log=self._log, ended=self._is_finished)

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
            self._ended, self._unregister_tried, UNREGISTER_WAIT if timeout is None else timeout
        )
        return self._unregistered == [True]

    def _unregister_tried(self) -> bool:
        return bool(self._unregistered)

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

    def _is_finished(self) -> bool:
        return self._finished

    def may_claim(self) -> bool:
        """Whether this runner's liveness is fresh enough to claim: memory only, no round trip."""
        return self._own.may_claim(self._clock.monotonic())

    def check_soon(self) -> None:
        """A worker found the last check too old to claim: check the lock now, not at the
        idle pace (the check thread then wakes the waiting workers)."""
        with self._changed:
            self._check_requested = True
            self._changed.notify_all()

    def job_started(self) -> None:
        """A job starts: a check waiting at the idle pace comes at the busy pace instead."""
        if self._pace is not None:
            self._pace.job_started()

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

    def _check_wanted(self) -> bool:
        return self._finished or self._check_requested

    def _check_loop(self) -> None:
        assert self._pace is not None
        while True:
            self._pace.wait("check", self._check_wanted)
            with self._changed:
                self._check_requested = False  # the check below answers it
            with self._checking:
                if self._finished:
                    return
                self._check_once()
            if not self._watchdog:  # where a check cannot block, it keeps the deadline itself
                self._enforce_deadline()

    def _watchdog_loop(self) -> None:
        assert self._pace is not None
        while True:
            self._pace.wait("deadline", self._is_finished)
            if self._finished:
                return
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
                self._own.ask_beat()  # the row says where the lock is now
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
        while not self._wait_for_sweep(self._sweep_interval):
            with self._sweeping:
                if self._finished:
                    return
                self._sweep_once()

    def _wait_for_sweep(self, interval: float) -> bool:
        """Wait until the next sweep is due; True once finished (the thread should end).

        A sweep is due ``interval`` after the last, or, where the store says so, at its
        slower pace while this runner runs nothing. Waits are at most ``interval`` long,
        so a runner that starts a job is swept at its busy pace again (a cancel from
        elsewhere reaches its handler as quickly as ever); a lost lock sweeps at once.
        """
        idle_pace = interval * self._store.liveness_terms.idle_sweeps_slower
        waited = 0.0
        while True:
            step = interval if self._attempts.busy() else min(interval, idle_pace - waited)
            if self._wait(step, or_reconcile=True):
                return True
            waited += step
            if waited >= idle_pace or self._attempts.busy() or self._own.reconciling:
                return False

    def _sweep_once(self) -> None:
        started = self._clock.monotonic()
        try:
            if not self._check_interval:
                # No check thread: confirm the lock here, as a sweep's first step.
                held = self._store.confirm_liveness(self._id, timeout=CHECK_TIMEOUT)
                self._own.lock_confirmed(started, retaken=not held)
                if not held:
                    self._own.ask_beat()  # the row says where the lock is now
            self._beat()
            self._reconcile()
            self._sweeper.stop_cancelled()
            self._on_sweep()
            self._sweeper.settle_dead()
            if self._sweeper.own_row_missing:
                self._own.ask_beat()  # judged dead meanwhile: the beat finds out, and registers
            self._sweeper.requeue_lost_claims()
        except Exception as error:
            self._sweep_streak.failed(error, started)
        else:
            self._sweep_streak.succeeded(self._clock.monotonic())
        finally:
            self.sweeps += 1

    def _beat(self) -> None:
        sent = self._clock.monotonic()
        busy = self._attempts.busy()
        if not self._own.must_beat(sent, busy=busy):
            return  # nothing to say: no write
        if self._store.beat(self._id, busy=busy, now=self._clock.now()):
            self._own.beat_landed(sent, busy=busy)
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
        self._own.beat_landed(sent, busy=0)  # the row written again holds busy 0

    def _reconcile(self) -> None:
        """Keep the jobs still held in this runner's name; stop the handlers of the others."""
        if not self._own.reconciling:
            return
        # Jobs held ahead before the liveness was lost: others may have freed them
        # meanwhile, so no worker may start one. Should the give-back fail, they stay held
        # under this id until its next give-back, or until it is settled dead.
        self._give_back_held()
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
