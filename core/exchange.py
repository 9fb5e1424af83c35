"""Where a runner's workers hand in outcomes and take jobs: one transaction a batch.

Jobs claimed in a batch for idle workers wait here, *claimed ahead*, for them.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Iterator

import attrs

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


def _no_idle_workers() -> int:
    return 0


def _nobody_to_wake(count: int) -> None:
    return None


@attrs.frozen(kw_only=True)
class InHand:
    """What ``JobExchange.in_hand`` reads: claims held beside the attempts, the batch in flight."""

    claims: set[Claim]
    batch_in_flight: int | None


class Handover:
    """What one worker hands in (an outcome to record, or none) and whether it wants a job;
    filled in with what the batch did for it."""

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
    """Records every outcome handed in since the last commit and claims a job for every worker
    that wants one, in one transaction at a time per runner.

    Without it every job costs a commit (its outcome with its next claim) and
    an fsync. A worker that arrives while a transaction is in flight joins the
    next one. Claims stay bounded by idle workers, as River's producer and
    Oban's demand are: the jobs claimed for workers asleep in the runner are
    *claimed ahead*; the runner wakes that many, and each takes one. No job is
    claimed that none of its workers is free to start.

    The worker that leads a transaction first waits for peers that hold a job
    and may hand in their outcome in a moment, at most GATHER seconds (see
    GatherPolicy), and not at all when none does. That one wait is on real
    time, not the runner's clock: it is far too short for a test to drive and
    is cut short by the peer it waits for. Every write keeps its fence, so
    batching changes no outcome; a job claimed in a batch is held under this
    runner's id like any other claim, and recovered like one.
    """

    def __init__(
        self,
        store: JobQueue,
        clock: Clock,
        *,
        runner_id: str,
        idle_workers: Callable[[], int] = _no_idle_workers,
        claimed_ahead_ready: Callable[[int], None] = _nobody_to_wake,
    ) -> None:
        """``idle_workers`` counts workers asleep for want of a job (a batch claims ahead for
        them); ``claimed_ahead_ready`` is told how many jobs it just claimed ahead, to wake
        that many workers."""
        self._store = store
        self._clock = clock
        self._runner_id = runner_id
        self._idle_workers = idle_workers
        self._claimed_ahead_ready = claimed_ahead_ready
        self._kinds: Collection[str] | None = None
        self._queues: Collection[str] | None = None
        self._changed = threading.Condition()
        self._pending: list[Handover] = []
        self._leading = False
        self._out: set[Claim] = set()  # jobs handed to a worker that has not come back
        self._claimed_ahead: deque[ClaimedJob] = deque()
        self._gathering = GatherPolicy()
        self._batches = 0  # batches begun
        self._in_flight: int | None = None  # the number of the batch being committed, if any

    def serve(self, kinds: Collection[str] | None, queues: Collection[str] | None) -> None:
        """What claims may take: set once registration closes, before any claim."""
        self._kinds = kinds
        self._queues = queues

    def hand_in(self, outcome: tuple[Claim, Outcome] | None, *, wants: bool) -> Handover:
        """Hand in ``outcome`` (if any) and, with ``wants``, take a job: in the next batch.

        Returns once the batch has committed (or failed: ``error`` set, and
        nothing of it happened). The caller retries its own outcome then.
        """
        handover = Handover(outcome, wants)
        with self._changed:
            if outcome is None and wants and self._claimed_ahead:
                handover.job = self._claimed_ahead.popleft()  # claimed for an idle worker: this one
                self._out.add(handover.job.claim)
                return handover
            if outcome is not None:
                self._out.discard(outcome[0])
            self._pending.append(handover)
            self._changed.notify_all()  # a leader gathering peers may be waiting for this one
            while not handover.done:
                if self._leading:
                    self._changed.wait()
                    continue
                self._leading = True
                batch = self._gather()
                self._batches += 1
                self._in_flight = self._batches
                self._changed.release()
                try:
                    self._commit(batch)
                finally:
                    self._changed.acquire()
                    self._leading = False
                    self._in_flight = None
                    for each in batch:
                        each.done = True
                        if each.job is not None:
                            self._out.add(each.job.claim)
                    self._changed.notify_all()
        return handover

    def _gather(self) -> list[Handover]:
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

    def _commit(self, batch: list[Handover]) -> None:
        outcomes = [handover.outcome for handover in batch if handover.outcome is not None]
        wanting = [handover for handover in batch if handover.wants]
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
            # Every handover learns that its batch failed, so each worker retries its own
            # outcome; one past Exception still ends the leader's thread as it would alone.
            failure = error if isinstance(error, Exception) else StoreError("database error")
            for handover in batch:
                handover.error = failure
            if failure is not error:
                raise
            return
        recorded = iter(held)
        for handover in batch:
            if handover.outcome is not None:
                handover.held = next(recorded)
        handed = iter(jobs)
        with self._changed:
            for handover in wanting:
                handover.job = next(handed, None)
            self._hand_to_waiting(handed)
            ahead = list(handed)
            self._claimed_ahead.extend(ahead)
        if ahead:
            self._claimed_ahead_ready(len(ahead))

    def _unserved_idle_workers(self) -> int:
        """Idle workers no job claimed ahead is waiting for: those a batch may claim a job for.

        A worker woken for a job claimed ahead counts as idle until it runs again, so
        without this a second batch would claim it a second job, which would
        wait, claimed and unrun, behind busy workers.
        """
        with self._changed:
            ahead = len(
                self._claimed_ahead
            )  # first: only the leader claims ahead, so this only falls
        # A woken worker stops counting as idle before it takes its job: read in this
        # order, the two counts never show a job claimed ahead taken and its worker still idle.
        return max(0, self._idle_workers() - ahead)

    def _hand_to_waiting(self, handed: Iterator[ClaimedJob]) -> None:
        """Give jobs claimed for idle workers first to workers already waiting here for one.

        An idle worker counted for this batch may have woken meanwhile and
        asked for a job of its own (its request waits for the next batch): it
        takes one of these instead, so no job claimed for it is left waiting
        behind busy workers. Only requests without an outcome: a job handed
        to one that still waits for its outcome to be recorded would be held
        by nobody the registration can see (neither claimed ahead nor running) for as long
        as that takes. Called with the condition held.
        """
        for waiting in [each for each in self._pending if each.wants and not each.outcome]:
            job = next(handed, None)
            if job is None:
                return
            self._pending.remove(waiting)
            waiting.job = job
            waiting.done = True
            self._out.add(job.claim)

    # -- jobs claimed ahead for idle workers ----------------------------------

    def has_claimed_ahead(self) -> bool:
        return bool(self._claimed_ahead)

    def take_claimed_ahead(self) -> ClaimedJob | None:
        """A job claimed for an idle worker, now this worker's; None when there is none."""
        with self._changed:
            if not self._claimed_ahead:
                return None
            job = self._claimed_ahead.popleft()
            self._out.add(job.claim)
            return job

    def take_all_claimed_ahead(self) -> list[ClaimedJob]:
        """Every job claimed ahead, for a runner that stops or may no longer claim: to give back."""
        with self._changed:
            ahead = list(self._claimed_ahead)
            self._claimed_ahead.clear()
            return ahead

    def claimed_ahead_claims(self) -> set[Claim]:
        """Claims held for idle workers: run by no worker yet, but not lost."""
        with self._changed:
            return {job.claim for job in self._claimed_ahead}

    def in_hand(self) -> InHand:
        """The claims this runner holds outside its workers' attempts, and the batch in flight.

        A job a batch claimed is, from the batch's end, claimed ahead or handed
        to a worker until that worker hands in its outcome (by then its attempt
        holds it). Before the batch ends its claims may be committed, yet known
        to nobody here: ``batch_in_flight`` numbers that batch.
        """
        with self._changed:
            claims = {job.claim for job in self._claimed_ahead}
            claims |= self._out
            return InHand(claims=claims, batch_in_flight=self._in_flight)

    def put_down(self, claim: Claim) -> None:
        """The worker holding ``claim`` is done with it without handing in its outcome here
        (idempotent)."""
        with self._changed:
            self._out.discard(claim)
