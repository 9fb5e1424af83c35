"""The sweep's duties to others: handlers whose job was cancelled, dead runners' jobs, lost claims.

Each sweep of the registration (core/registration.py) runs them in that order.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable

from jobtable.core.attempts import Attempt, Attempts
from jobtable.core.clock import Clock
from jobtable.core.codes import CANCELLED, INTERRUPTED
from jobtable.core.exchange_items import InHand
from jobtable.core.jobs import Claim, HeldJob
from jobtable.core.liveness import SWEEP_INTERVAL, DeathJudge
from jobtable.core.observer import NoObserver, RunnerObserver
from jobtable.core.outcome import settle_interrupted
from jobtable.core.ports import LivenessPort
from jobtable.core.settling import settle_dead_runners


class Sweeper:
    """Settles for runner ``runner_id`` what no worker of any live runner will finish."""

    def __init__(
        self,
        store: LivenessPort,
        clock: Clock,
        log: logging.Logger,
        *,
        runner_id: str,
        attempts: Attempts,
        in_hand: Callable[[], InHand],
        left_running: Callable[[], dict[Claim, str]],
        preempt: Callable[[Attempt, str], None],
        wake_one: Callable[[], None],
        observer: RunnerObserver | None = None,
        interval: float | None = SWEEP_INTERVAL,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        """``in_hand`` names the claims of jobs taken for a worker that has not begun them yet,
        or whose outcome waits to be written (core/exchange.py): run by no worker, not lost;
        and the batch in flight, whose claims may be committed before anyone here knows of them. ``left_running`` names claims whose handler ran but whose
        outcome could not be recorded, each with the code to settle it with: never given back
        as if unrun. ``preempt`` stops a handler with a code; ``wake_one`` has a worker look
        for jobs; ``observer`` hears of the jobs of dead runners settled here. ``interval`` is
        the seconds between sweeps (None: swept by hand, at the default pace). ``jitter`` draws
        the retry backoff's random share for the jobs settled here, as the runner's does."""
        self._store = store
        self._clock = clock
        self._log = log
        self._id = runner_id
        self._attempts = attempts
        self._in_hand = in_hand
        self._left_running = left_running
        self._preempt = preempt
        self._wake_one = wake_one
        self._observer: RunnerObserver = observer or NoObserver()
        self._jitter = jitter
        self._judge = DeathJudge(store.liveness_terms, interval=interval or SWEEP_INTERVAL)
        self._suspects: dict[Claim, HeldJob] = {}  # held here, run by no worker, at last sweep
        self._suspects_batch: int | None = None  # the claim batch in flight when they were seen
        self.own_row_missing = False
        """The last look at the runners did not see this runner's own row (judged dead)."""
        self._own_holds_running: bool | None = None  # as the last look saw it; None: unknown

    def stop_cancelled(self) -> None:
        """Tell the handlers of jobs someone asked to cancel (here or elsewhere) to stop."""
        if not self._attempts.busy():
            return  # nothing running: no query
        requested = set(self._store.cancel_requests(self._id))
        for attempt in self._attempts.find(requested):
            if attempt.stop_reason is None:
                self._preempt(attempt, CANCELLED)

    def settle_dead(self) -> None:
        """Settle the jobs of the runners whose death is now certain (a first look judges none)."""
        at = self._clock.monotonic()
        seen_all = self._store.sight_runners()
        sightings = [seen for seen in seen_all if seen.runner_id != self._id]
        own = [seen for seen in seen_all if seen.runner_id == self._id and seen.registered]
        self.own_row_missing = not own
        self._own_holds_running = own[0].holds_running if own else None
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
            self._wake_one()  # a limited kind's slot may be free
        if recovered.requeued:
            self._log.warning("requeued jobs of a dead runner count=%d", recovered.requeued)
            self._wake_one()

    def _nothing_held_here(self) -> bool:
        return (
            self._own_holds_running is False
            and not self._suspects
            and not self._attempts.busy()
            and self._in_hand() == InHand(claims=set(), batch_in_flight=None)
            and not self._left_running()
        )

    def _held_here(self) -> tuple[set[Claim], int | None]:
        """The claims this runner's workers hold or are about to begin, and the batch in flight."""
        running_here = {attempt.claim for attempt in self._attempts.snapshot()}
        in_hand = self._in_hand()
        return running_here | in_hand.claims, in_hand.batch_in_flight

    def requeue_lost_claims(self) -> None:
        """Give back the jobs held in this runner's name that no worker of it runs.

        A claim the database committed but whose reply was lost (a connection
        dropped after COMMIT) leaves a job running under a live runner, which
        no sweep for dead runners would ever touch. A job seen so in two
        sweeps in a row is such a claim, unless the claim batch in flight when
        it was first seen is still in flight (a reply slow to come, not lost):
        a worker tracks a job as soon as its batch ends. Its handler never
        ran, so its attempt is given back. Where the last look at the runners said no job runs in
        this runner's name, and it runs and suspects none, there is nothing to
        read: no query (an idle runner's sweep is one transaction).
        """
        if self._nothing_held_here():
            self._suspects = {}
            return
        running_here, in_flight = self._held_here()
        if in_flight is not None and in_flight == self._suspects_batch:
            lost: dict[Claim, HeldJob] = {}  # their batch may still hand them to workers
        else:
            lost = {c: job for c, job in self._suspects.items() if c not in running_here}
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
                started = {claim: lost[claim].started for claim in unrun}
                moved = self._store.put_back(unrun, now=self._clock.now(), started=started)
                if moved:
                    self._log.warning("requeued jobs whose claim reply was lost count=%d", moved)
                    self._wake_one()
        except Exception:
            # It may have committed with its reply lost: the jobs are queued and no later
            # sweep sees them running here. A worker looks; finding nothing, it waits again.
            self._wake_one()
            raise
        held = self._store.running_jobs(self._id)
        running_here, self._suspects_batch = self._held_here()
        self._suspects = {
            job.claim: job
            for job in held
            if job.claim not in running_here and job.claim not in lost
        }
