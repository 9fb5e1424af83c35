"""The exchange: where a runner's workers hand in outcomes and take jobs, a batch per commit.

Without it every job costs two transactions (its claim, its outcome) or, with
the outcome and the next claim together, one: one commit and one fsync per
job, whatever the hardware could do. With it, one transaction at a time per
runner records every outcome handed in since the last one and claims a job
for every worker that waits for one: a worker handing in an outcome, a
worker that found nothing to do, and every idle worker asleep in the runner.
A worker that arrives while a transaction is in flight joins the next one.

Claims stay bounded by idle workers, as River's producer and Oban's demand
are: a runner never claims a job none of its workers is free to start, so no
job waits behind a busy worker while another runner's worker is idle. The
jobs claimed for sleeping workers are *spares*: the runner wakes that many,
and each takes one.

The worker that leads a transaction first waits for peers that hold a job and
may hand in their outcome in a moment, at most GATHER seconds, and not at all
when none does: so two workers draining short jobs share every commit instead
of taking turns, while a lone worker never waits. That one wait is on real
time, not the runner's clock: it is far too short for a test to drive and is
cut short by the peer it waits for.

Every write keeps its fence (an outcome lands only under its exact claim), so
batching changes no outcome; a job claimed in a batch is held under this
runner's id like any other claim, and recovered like one when the runner dies.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Iterator

from jobtable.core.clock import Clock
from jobtable.core.errors import StoreError
from jobtable.core.jobs import Claim, ClaimedJob
from jobtable.core.outcome import Outcome
from jobtable.core.ports import JobQueue

GATHER = 0.0005
"""Seconds a transaction's leader waits at most for peers about to hand in an outcome."""

MAX_BATCH = 128
"""Requests one transaction carries at most; the rest go in the next."""


class GatherPolicy:
    """Whether a leader waits for peers: while waiting has lately brought one.

    Peers running short jobs arrive within the wait; peers in long handlers
    never do, and waiting for them would add GATHER to every outcome. So
    each wait that brought nobody lowers a score, each that brought someone
    raises it, and below one half the leader goes alone, trying a wait again
    every few batches in case the jobs got shorter.
    """

    def __init__(self) -> None:
        self._score = 1.0

    def should_wait(self) -> bool:
        if self._score >= 0.5:
            return True
        self._score += 0.02
        return False

    def waited(self, *, paid_off: bool) -> None:
        self._score = 0.8 * self._score + (0.2 if paid_off else 0.0)


class Trade:
    """One worker's request: an outcome to record (or none) and whether it wants a job."""

    __slots__ = ("done", "error", "held", "job", "outcome", "wants")

    def __init__(self, outcome: tuple[Claim, Outcome] | None, wants: bool) -> None:
        self.outcome = outcome
        self.wants = wants
        self.held: bool | None = None
        """Whether the outcome was recorded (False: the claim was stale); None without one."""
        self.job: ClaimedJob | None = None
        """The job claimed for this worker, if it wanted one and one was due."""
        self.error: Exception | None = None
        """What the store raised: then nothing of the batch happened."""
        self.done = False


class JobExchange:
    def __init__(
        self,
        store: JobQueue,
        clock: Clock,
        *,
        runner_id: str,
        idle_workers: Callable[[], int] = lambda: 0,
        spares_ready: Callable[[int], None] = lambda count: None,
    ) -> None:
        """``idle_workers`` counts workers asleep for want of a job (claimed for, as spares);
        ``spares_ready`` is told how many spares were just put out, to wake that many."""
        self._store = store
        self._clock = clock
        self._runner_id = runner_id
        self._idle_workers = idle_workers
        self._spares_ready = spares_ready
        self._kinds: Collection[str] | None = None
        self._queues: Collection[str] | None = None
        self._changed = threading.Condition()
        self._pending: list[Trade] = []
        self._leading = False
        self._out: set[Claim] = set()  # jobs handed to a worker that has not come back
        self._spares: deque[ClaimedJob] = deque()
        self._gathering = GatherPolicy()

    def serve(self, kinds: Collection[str] | None, queues: Collection[str] | None) -> None:
        """What claims may take: set once registration closes, before any claim."""
        self._kinds = kinds
        self._queues = queues

    def trade(self, outcome: tuple[Claim, Outcome] | None, *, wants: bool) -> Trade:
        """Hand in ``outcome`` (if any) and, with ``wants``, take a job: in the next batch.

        Returns once the batch has committed (or failed: ``error`` set, and
        nothing of it happened). The caller retries its own outcome then.
        """
        trade = Trade(outcome, wants)
        with self._changed:
            if outcome is None and wants and self._spares:
                trade.job = self._spares.popleft()  # claimed for an idle worker: this one
                self._out.add(trade.job.claim)
                return trade
            if outcome is not None:
                self._out.discard(outcome[0])
            self._pending.append(trade)
            self._changed.notify_all()  # a leader gathering peers may be waiting for this one
            while not trade.done:
                if self._leading:
                    self._changed.wait()
                    continue
                self._leading = True
                batch = self._gather()
                self._changed.release()
                try:
                    self._commit(batch)
                finally:
                    self._changed.acquire()
                    self._leading = False
                    for each in batch:
                        each.done = True
                        if each.job is not None:
                            self._out.add(each.job.claim)
                    self._changed.notify_all()
        return trade

    def _gather(self) -> list[Trade]:
        """Wait (briefly, holding the lead) for peers holding a job to hand it in; take the batch.

        Called with the condition held.
        """
        if self._out and self._gathering.should_wait():
            before = len(self._pending)
            deadline = time.monotonic() + GATHER
            while self._out:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(left)
            self._gathering.waited(paid_off=len(self._pending) > before)
        batch = self._pending[:MAX_BATCH]
        del self._pending[:MAX_BATCH]
        return batch

    def _commit(self, batch: list[Trade]) -> None:
        outcomes = [trade.outcome for trade in batch if trade.outcome is not None]
        wanting = [trade for trade in batch if trade.wants]
        limit = len(wanting) + (self._unserved_idle_workers() if wanting else 0)
        try:
            held, jobs = self._store.record_and_claim(
                outcomes,
                limit=limit,
                runner_id=self._runner_id,
                now=self._clock.now(),
                kinds=self._kinds,
                queues=self._queues,
            )
        except BaseException as error:
            # Every trade learns that its batch failed, so each worker retries its own
            # outcome; one past Exception still ends the leader's thread as it would alone.
            failure = error if isinstance(error, Exception) else StoreError("database error")
            for trade in batch:
                trade.error = failure
            if failure is not error:
                raise
            return
        recorded = iter(held)
        for trade in batch:
            if trade.outcome is not None:
                trade.held = next(recorded)
        handed = iter(jobs)
        with self._changed:
            for trade in wanting:
                trade.job = next(handed, None)
            self._hand_to_waiting(handed)
            spares = list(handed)
            self._spares.extend(spares)
        if spares:
            self._spares_ready(len(spares))

    def _unserved_idle_workers(self) -> int:
        """Idle workers no spare is waiting for: those a batch may claim a job for.

        A worker woken for a spare counts as idle until it runs again, so
        without this a second batch would claim it a second job, which would
        wait, claimed and unrun, behind busy workers.
        """
        with self._changed:
            spares = len(self._spares)  # first: only the leader adds spares, so this only falls
        # A woken worker stops counting as idle before it takes its spare: read in this
        # order, the two counts never show a spare taken and its worker still idle.
        return max(0, self._idle_workers() - spares)

    def _hand_to_waiting(self, handed: Iterator[ClaimedJob]) -> None:
        """Give jobs claimed for idle workers first to workers already waiting here for one.

        An idle worker counted for this batch may have woken meanwhile and
        asked for a job of its own (its request waits for the next batch): it
        takes one of these instead, so no job claimed for it is left waiting
        behind busy workers. Only requests without an outcome: a job handed
        to one that still waits for its outcome to be recorded would be held
        by nobody the keeper can see (neither a spare nor running) for as long
        as that takes. Called with the condition held.
        """
        for waiting in [trade for trade in self._pending if trade.wants and not trade.outcome]:
            job = next(handed, None)
            if job is None:
                return
            self._pending.remove(waiting)
            waiting.job = job
            waiting.done = True
            self._out.add(job.claim)

    # -- spares --------------------------------------------------------------

    def has_spare(self) -> bool:
        return bool(self._spares)

    def take_spare(self) -> ClaimedJob | None:
        """A job claimed for an idle worker, now this worker's; None when there is none."""
        with self._changed:
            if not self._spares:
                return None
            job = self._spares.popleft()
            self._out.add(job.claim)
            return job

    def take_all_spares(self) -> list[ClaimedJob]:
        """Every spare, for a runner that stops or may no longer claim: to give back."""
        with self._changed:
            spares = list(self._spares)
            self._spares.clear()
            return spares

    def spare_claims(self) -> set[Claim]:
        """Claims held for idle workers: run by no worker yet, but not lost."""
        with self._changed:
            return {job.claim for job in self._spares}

    def put_down(self, claim: Claim) -> None:
        """The worker holding ``claim`` is done with it without trading (idempotent)."""
        with self._changed:
            self._out.discard(claim)
