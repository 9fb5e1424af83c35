"""Where a runner's workers hand in outcomes and take jobs: few transactions for many jobs.

Outcomes are buffered and written together, durably, within FLUSH_AFTER, by the flusher
(core/flusher.py); a worker that wants a job starts one held ahead (core/ahead.py) or
claims one, in a batch with every other worker's that commits without waiting for the
disk; a runner of short jobs holds a few more ahead in the same batch, while its claims
find all they ask for (one woken from idle for a job or two claims them alone).
"""

from __future__ import annotations

import datetime
import threading
import time
from collections import deque
from collections.abc import Callable, Collection

from jobtable.core.ahead import AHEAD_LIMIT, AheadPolicy
from jobtable.core.batch import Batch, BatchDone
from jobtable.core.clock import Clock
from jobtable.core.errors import StoreError
from jobtable.core.exchange_items import InHand, Unsent, Want
from jobtable.core.jobs import Claim, ClaimedJob
from jobtable.core.limits import RateLimit, RunningLimit
from jobtable.core.outcome import Outcome
from jobtable.core.ports import JobQueue

FLUSH_AFTER = 0.005
"""Seconds an outcome waits at most, buffered, before a durable commit writes it (and the
write's own time): what a client waiting on a job may wait longer to see its end."""

FLUSH_AT = 100
"""Buffered outcomes that are written at once, without waiting for FLUSH_AFTER."""

MAX_STARTS = 128
"""Workers' requests one transaction carries at most; the rest go in the next."""


def _nobody_to_wake(count: int) -> None:
    return None


_NO_RULES = Batch()


def _no_rate_wait(at: datetime.datetime) -> None:
    return None


def _written_nowhere(unsent: Unsent, recorded: bool) -> None:
    return None


def _always() -> bool:
    return True


class JobExchange:
    """Batches a runner's writes on the hot path: one transaction at a time.

    A worker's batch gives back jobs held past AHEAD_LIMIT, starts a held job for each
    worker that wants one (claims one when none is held), and holds as many more ahead
    as the policy allows; it need not wait for the disk (core/batch.py). The flusher's
    batch writes every outcome handed in (once the oldest waited FLUSH_AFTER, or
    FLUSH_AT wait), durably.
    The waits are on real time, not the runner's clock: they are far too short for a
    test to drive. Every write keeps its fence, so batching changes no outcome.
    """

    def __init__(
        self,
        store: JobQueue,
        clock: Clock,
        *,
        runner_id: str,
        policy: AheadPolicy,
        may_hold: Callable[[], bool] = _always,
        held_ready: Callable[[int], None] = _nobody_to_wake,
        slots_freed: Callable[[int], None] = _nobody_to_wake,
        rate_opens: Callable[[datetime.datetime], None] = _no_rate_wait,
        written: Callable[[Unsent, bool], None] = _written_nowhere,
    ) -> None:
        """``may_hold`` says whether the runner may hold more jobs now (liveness confirmed,
        not stopping); ``held_ready`` is told how many jobs a batch just held ahead, to wake
        that many idle workers; ``slots_freed`` is told how many outcomes of limited kinds a batch
        wrote, to wake that many idle workers to claim again; ``rate_opens`` when a job a
        rate held back may start; ``written`` hears of each outcome written (False: its claim
        was stale)."""
        self._store = store
        self._clock = clock
        self._runner_id = runner_id
        self._policy = policy
        self._may_hold = may_hold
        self._held_ready = held_ready
        self._slots_freed = slots_freed
        self._rate_opens = rate_opens
        self._written = written
        self._kinds: list[Collection[str] | None] = [None, ()]  # per lane (Want.lane)
        self._queues: Collection[str] | None = None
        self._limits: dict[str, RunningLimit] = {}
        self._rates: dict[str, RateLimit] = {}
        self._fair: frozenset[str] = frozenset()
        self._limited_queues: frozenset[str] = frozenset()  # as the last claim read them
        self.changed = threading.Condition()
        """Notified on every change here; the flusher (core/flusher.py) waits on it."""
        self._wants: list[Want] = []
        self._leading = False
        self._flush_waiting = False  # the flusher goes next: workers' batches wait for it
        self._held: deque[tuple[ClaimedJob, float]] = deque()
        self._expired: list[Claim] = []  # held too long: to give back
        self._unsent: list[Unsent] = []
        self._sending: list[Unsent] = []
        self._holds_maybe_lost = False
        self._holds_in_store = False  # a batch held jobs since the last give-back of all
        self._more_due = True  # lane 0's last claim or hold found all it asked: more may be due
        self._handed: set[Claim] = set()  # taken for a worker that has not begun it yet
        self._batches = 0  # batches begun
        self._in_flight: int | None = None  # the number of the batch being run, if any

    def serve(
        self,
        kinds: Collection[str] | None,
        queues: Collection[str] | None,
        rules: Batch = _NO_RULES,
        async_kinds: Collection[str] = (),
    ) -> None:
        """What claims may take, and the limits, rates and fair keys every claim carries
        (``KindRegistry.claim_rules``): set once registration closes, before any claim.
        ``async_kinds``, those with ``async def`` handlers, are taken by the async slots'
        requests only (lane 1), the rest by the threads' (lane 0)."""
        if async_kinds:
            apart = frozenset(async_kinds)
            self._kinds = [[kind for kind in kinds or () if kind not in apart], sorted(apart)]
        else:
            self._kinds = [kinds, ()]
        self._queues = queues
        self._limits = dict(rules.limits)
        self._rates = dict(rules.rates)
        self._fair = rules.fair

    # -- what workers call ----------------------------------------------------

    def take(self, lane: int = 0) -> ClaimedJob | None:
        """A job for a free worker of ``lane``: one held ahead, started now, else one claimed
        now; None when none is due. Raises what the store raised (then nothing of the batch
        happened). Only lane 0 holds jobs ahead."""
        want = Want(lane)
        with self.changed:
            self._wants.append(want)
            while not want.done:
                if self._leading or self._flush_waiting:
                    self.changed.wait()
                else:
                    self._lead(flushing=False)
        if want.error is not None:
            raise want.error
        return want.job

    def record(self, claimed: ClaimedJob, outcome: Outcome) -> None:
        """Hand in an attempt's outcome: written within FLUSH_AFTER, with the next batch."""
        with self.changed:
            self._unsent.append(Unsent(claimed, outcome, time.monotonic()))
            if len(self._unsent) in (1, FLUSH_AT):  # the flusher's next wake moved
                self.changed.notify_all()

    def has_held(self) -> bool:
        return bool(self._held)

    # -- what the flusher, the sweep and a stop call -----------------------------

    def next_due(self) -> float | None:
        """When (time.monotonic) a batch is due with no worker asking: the oldest outcome's
        flush, or the oldest held job's give-back; None when nothing waits."""
        with self.changed:
            return self._next_due()

    def _next_due(self) -> float | None:
        if self._expired or len(self._unsent) >= FLUSH_AT:
            return 0.0
        if self._holds_maybe_lost and not self._held:
            return 0.0  # a batch that held jobs lost its reply: free them, idle or not
        due = [self._unsent[0].since + FLUSH_AFTER] if self._unsent else []
        if self._held:
            due.append(self._held[0][1] + AHEAD_LIMIT)
        return min(due) if due else None

    def flush(self) -> None:
        """Write every outcome handed in, and give back the expired holds, now: the flusher's
        call, once due (``next_due``) or at a stop.

        Raises what the store raised; the outcomes stay buffered for the next try."""
        with self.changed:
            self._flush_waiting = True  # else workers leading batch after batch starve it
            try:
                while self._leading:
                    self.changed.wait()
                self._expire(time.monotonic())
                if not (self._unsent or self._expired or self._holds_maybe_lost):
                    return
                error = self._lead(flushing=True)  # the waiting workers' takes go in it too
            finally:
                self._flush_waiting = False
                self.changed.notify_all()
        if error is not None:
            raise error

    def has_unwritten(self) -> bool:
        with self.changed:
            return bool(self._unsent or self._sending)

    def in_hand(self) -> InHand:
        """Claims running in the store that are not lost: taken for a worker that has not
        begun the attempt yet (``began``), or whose outcome waits to be written; and the
        number of the batch in flight, whose claims and starts may be committed before
        anyone here knows of them."""
        with self.changed:
            claims = {each.claimed.claim for each in (*self._unsent, *self._sending)}
            return InHand(claims=claims | self._handed, batch_in_flight=self._in_flight)

    def began(self, claim: Claim) -> None:
        """The worker that took ``claim`` tracks it now (or put it back): idempotent."""
        with self.changed:
            self._handed.discard(claim)

    def drop_unwritten(self) -> list[Unsent]:
        """Take every outcome not written yet away (a stop that could not write them)."""
        with self.changed:
            while self._leading:
                self.changed.wait()
            dropped, self._unsent = self._unsent, []
            return dropped

    def give_back_held(self) -> int:
        """Give back every job held ahead (the runner stops, or lost its liveness): none
        of them runs here. Raises what the store raised; then the sweep of the runner's
        death, or its next give-back, frees them."""
        with self.changed:
            while self._leading:
                self.changed.wait()
            if not self._holds_in_store:
                return 0
            self._held.clear()
            self._expired.clear()
            freed = self._store.give_back_held(self._runner_id)
            self._holds_in_store = self._holds_maybe_lost = False
            return freed

    def held_claims(self) -> set[Claim]:
        with self.changed:
            return {job.claim for job, _ in self._held}

    # -- one batch ------------------------------------------------------------

    def _lead(self, *, flushing: bool) -> Exception | None:
        """Run one batch for the requests waiting now, and (``flushing``: the flusher's
        batch) write the outcomes waiting. Called with the condition held."""
        self._leading = True
        self._batches += 1
        self._in_flight = self._batches
        now = time.monotonic()
        lane = self._wants[0].lane if self._wants else 0
        wants: list[Want] = []
        kept: list[Want] = []  # another lane's, or past MAX_STARTS: the next batch's
        for want in self._wants:
            (wants if want.lane == lane and len(wants) < MAX_STARTS else kept).append(want)
        self._wants = kept
        self._expire(now)
        starts = []
        for want in wants:
            if not self._held or lane:
                break
            want.held = self._held.popleft()[0]
            starts.append(want.held.claim)
        # A runner with limited kinds holds nothing ahead: its held jobs would be started
        # before any claim, and a limited kind's jobs wait for claims.
        # Nor does a runner whose last claim came back short (idle, woken for a job or
        # two): its claim of them would wait for a hold that finds nothing.
        holding = (
            wants
            and not lane
            and not (self._limits or self._rates or self._fair)
            and self._more_due
            and self._may_hold()
        )
        target = self._policy.target() if holding else 0
        if flushing:
            self._sending, self._unsent = self._unsent, []
        give_backs, self._expired = self._expired, []
        batch = Batch(
            outcomes=[(each.claimed.claim, each.outcome) for each in self._sending],
            give_backs=give_backs,
            starts=starts,
            claim=len(wants) - len(starts),
            hold=target - len(self._held) if len(self._held) <= target // 2 else 0,
            limits=self._limits,
            rates=self._rates,
            fair=self._fair,
            limited_queues=self._limited_queues,
            clock=self._clock.now if self._rates or self._limited_queues else None,
            durable=bool(self._sending),
        )
        free_lost_holds = self._holds_maybe_lost and not self._held and not starts
        self._holds_in_store |= batch.hold > 0
        self.changed.release()
        error: Exception | None = None
        done = BatchDone()
        try:
            if free_lost_holds:  # jobs a batch held whose reply never came: free them first
                self._store.give_back_held(self._runner_id)
                self._holds_maybe_lost = False
            if not batch.empty:
                done = self._store.run_batch(
                    batch,
                    runner_id=self._runner_id,
                    now=self._clock.now(),
                    kinds=self._kinds[lane],
                    queues=self._queues,
                )
        except Exception as raised:
            error = raised
        except BaseException:
            error = StoreError("database error")
            raise
        finally:
            self.changed.acquire()
            self._leading = False
            self._settle(wants, batch, done, error, now)
            self._in_flight = None
            self.changed.notify_all()
        return error

    def _expire(self, now: float) -> None:
        """Move the jobs held longer than AHEAD_LIMIT to those to give back (condition held)."""
        while self._held and now - self._held[0][1] >= AHEAD_LIMIT:
            self._expired.append(self._held.popleft()[0].claim)

    def _settle(
        self, wants: list[Want], batch: Batch, done: BatchDone, error: Exception | None, at: float
    ) -> None:
        """Hand out what a batch did (condition held)."""
        sending, self._sending = self._sending, []
        if error is not None:
            self._unsent[:0] = sending  # written with the next batch, or by the flusher
            self._expired[:0] = batch.give_backs
            for want in reversed(wants):
                if want.held is not None:
                    self._held.appendleft((want.held, at))
            for want in wants:
                want.error, want.done = error, True
            self._holds_maybe_lost |= bool(batch.hold or batch.starts)
            return
        for each, recorded in zip(sending, done.recorded, strict=True):
            self._written(each, recorded)
        if wants and wants[0].lane == 0:  # another lane's claim says nothing of this one's
            if batch.hold:
                self._more_due = len(done.held) >= batch.hold
            elif batch.claim:
                self._more_due = len(done.claimed) >= batch.claim
        if done.rate_opens_at is not None:
            self._rate_opens(done.rate_opens_at)  # a job a rate holds back may start then
        freed = sum(
            each.claimed.kind in self._limits or each.claimed.queue in self._limited_queues
            for each in sending
        )
        if done.limited_queues is not None and done.limited_queues != self._limited_queues:
            newly = done.limited_queues - self._limited_queues
            self._limited_queues = done.limited_queues
            if newly:  # their jobs were passed over: claim them, apart, now
                freed += max(1, len(wants))
        if freed:
            self._slots_freed(freed)  # slots of limited kinds came back: idle workers look
        claimed = iter(done.claimed)
        starts = iter(done.started)
        for want in wants:
            if want.held is not None:
                if next(starts):
                    want.job, want.done = want.held, True
                    self._handed.add(want.held.claim)
                else:
                    want.held = None  # cancelled since it was held: look again
                    self._wants.append(want)
            else:
                want.job, want.done = next(claimed, None), True
                if want.job is not None:
                    self._handed.add(want.job.claim)
        if done.held:
            if self._may_hold():
                self._held.extend((job, at) for job in done.held)
                self._held_ready(len(done.held))
            else:
                self._expired.extend(job.claim for job in done.held)
