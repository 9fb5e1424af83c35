"""The exchange: outcomes and claims of several workers in one store call (core/exchange.py)."""

from __future__ import annotations

import threading

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.memory import MemoryStore
from jobtable.core import NewJob, Status
from jobtable.core.errors import StoreError, StoreUnavailableError
from jobtable.core.exchange import Handover, JobExchange
from jobtable.core.ids import JobIdGenerator
from jobtable.core.outcome import Succeed
from tests.support.threads import run_in_threads

RUNNER = "runner-x"
_ids = JobIdGenerator()


class RecordingStore:
    """Passes ``record_and_claim`` through, keeping what each call carried; can hold one call."""

    def __init__(self, inner: MemoryStore) -> None:
        self.inner = inner
        self.calls: list[tuple[list[str], int]] = []
        self.entered = threading.Event()
        self.release = threading.Event()
        self.release.set()
        self.fail_with: BaseException | None = None
        self.fail_from = 0  # the first call (counted from 0) that raises ``fail_with``
        self._guard = threading.Lock()

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def record_and_claim(self, outcomes, *, limit, **arguments):
        with self._guard:
            number = len(self.calls)
            self.calls.append(([claim.job_id for claim, _ in outcomes], limit))
        self.entered.set()
        assert self.release.wait(10), "the test never let the call go on"
        if self.fail_with is not None and number >= self.fail_from:
            raise self.fail_with
        return self.inner.record_and_claim(outcomes, limit=limit, **arguments)


def queued(store: MemoryStore, count: int, clock: FakeClock) -> list[str]:
    ids = [_ids.next_id(1_772_366_400_000 + n) for n in range(count)]
    for job_id in ids:
        store.create(NewJob(id=job_id, kind="count", payload="{}"), now=clock.now())
    return ids


def exchange_over(store, clock, *, idle=0, ahead=None) -> JobExchange:
    exchange = JobExchange(
        store,
        clock,
        runner_id=RUNNER,
        idle_workers=lambda: idle,
        claimed_ahead_ready=(ahead.append if ahead is not None else lambda count: None),
    )
    exchange.serve(frozenset({"count"}), None)
    return exchange


def wait_until(exchange: JobExchange, condition, what: str) -> None:
    """The exchange notifies its condition whenever a handover is handed in."""
    with exchange._changed:
        assert exchange._changed.wait_for(condition, timeout=10), what


def three_held_one_commit_paused(queued_count: int):
    """Three jobs handed out through an exchange, and the store set to hold the next call."""
    clock = FakeClock()
    memory = MemoryStore()
    store = RecordingStore(memory)
    queued(memory, queued_count, clock)
    exchange = exchange_over(store, clock)
    jobs = [exchange.hand_in(None, wants=True).job for _ in range(3)]
    store.calls.clear()
    store.entered.clear()
    store.release.clear()
    return memory, store, exchange, jobs


def first_in_flight_two_behind(exchange, store, hand_in, jobs) -> list[threading.Thread]:
    """The first job's outcome in a held commit, the other two queued for the next one."""
    first = threading.Thread(target=hand_in, args=(jobs[0],))
    first.start()
    assert store.entered.wait(10)  # the first commit is in flight, held
    others = [threading.Thread(target=hand_in, args=(job,)) for job in jobs[1:]]
    for thread in others:
        thread.start()
    wait_until(exchange, lambda: len(exchange._pending) == 2, "the two others never queued")
    return [first, *others]


def join_all(threads: list[threading.Thread]) -> None:
    for thread in threads:
        thread.join(10)
    assert not any(thread.is_alive() for thread in threads), "a handover never came back"


def test_outcomes_handed_in_during_a_commit_share_the_next_one():
    memory, store, exchange, jobs = three_held_one_commit_paused(6)
    handovers: dict[str, Handover] = {}

    def hand_in(job) -> None:
        handovers[job.id] = exchange.hand_in((job.claim, Succeed(result="{}")), wants=True)

    threads = first_in_flight_two_behind(exchange, store, hand_in, jobs)
    store.release.set()
    join_all(threads)
    assert store.calls == [([jobs[0].id], 1), ([jobs[1].id, jobs[2].id], 2)]
    assert all(handover.held for handover in handovers.values())
    assert len({handover.job.id for handover in handovers.values()}) == 3  # a new job each
    assert all(memory.get(job.id).status is Status.SUCCEEDED for job in jobs)


def test_jobs_are_claimed_ahead_for_idle_workers_in_claim_order():
    clock = FakeClock()
    store = MemoryStore()
    ids = queued(store, 5, clock)
    told: list[int] = []
    exchange = exchange_over(store, clock, idle=2, ahead=told)
    mine = exchange.hand_in(None, wants=True).job
    assert mine.id == ids[0]
    assert told == [2]
    kept = exchange.claimed_ahead_claims()
    ahead = [exchange.take_claimed_ahead(), exchange.take_claimed_ahead()]
    assert [job.id for job in ahead] == ids[1:3]
    assert kept == {job.claim for job in ahead}
    assert exchange.take_claimed_ahead() is None
    assert exchange.claimed_ahead_claims() == set()
    assert [store.get(job_id).status for job_id in ids] == [Status.RUNNING] * 3 + [
        Status.QUEUED
    ] * 2


def test_a_failed_commit_fails_every_handover_in_it_and_changes_nothing():
    clock = FakeClock()
    memory = MemoryStore()
    store = RecordingStore(memory)
    queued(memory, 3, clock)
    exchange = exchange_over(store, clock)
    jobs = [exchange.hand_in(None, wants=True).job for _ in range(2)]
    store.fail_with = StoreUnavailableError("database unavailable")
    handovers = [exchange.hand_in((job.claim, Succeed(result="{}")), wants=True) for job in jobs]
    assert all(isinstance(handover.error, StoreUnavailableError) for handover in handovers)
    assert all(handover.held is None and handover.job is None for handover in handovers)
    assert all(memory.get(job.id).status is Status.RUNNING for job in jobs)


def test_many_workers_trading_at_once_run_every_job_exactly_once():
    clock = FakeClock()
    store = MemoryStore()
    ids = queued(store, 300, clock)
    exchange = exchange_over(store, clock)
    ran: list[str] = []
    guard = threading.Lock()
    problems: list[str] = []

    def worker() -> None:
        job = exchange.hand_in(None, wants=True).job
        while job is not None:
            with guard:
                ran.append(job.id)
            handover = exchange.hand_in((job.claim, Succeed(result="{}")), wants=True)
            if not handover.held:
                problems.append(f"{job.id} not held")
            job = handover.job

    run_in_threads([worker] * 6)
    assert problems == []
    assert sorted(ran) == sorted(ids)
    assert all(store.get(job_id).status is Status.SUCCEEDED for job_id in ids)


def test_a_batch_claims_nothing_beyond_the_workers_that_want_a_job():
    clock = FakeClock()
    memory = MemoryStore()
    store = RecordingStore(memory)
    ids = queued(memory, 10, clock)
    exchange = exchange_over(store, clock, idle=3)
    job = exchange.hand_in(None, wants=True).job
    assert store.calls == [([], 4)]  # this worker and the three asleep
    exchange.hand_in((job.claim, Succeed(result="{}")), wants=False)
    assert store.calls[-1] == ([job.id], 0)  # handing in alone claims nothing
    assert sum(memory.get(job_id).status is Status.QUEUED for job_id in ids) == 6


def test_a_job_claimed_for_an_idle_worker_goes_to_it_when_it_asked_meanwhile():
    """The idle worker woke during the commit and asked for a job itself: it gets the one
    claimed for it, and nothing is left over, claimed ahead, behind busy workers."""
    clock = FakeClock()
    memory = MemoryStore()
    store = RecordingStore(memory)
    ids = queued(memory, 5, clock)
    told: list[int] = []
    exchange = exchange_over(store, clock, idle=1, ahead=told)
    store.release.clear()
    handovers: dict[str, Handover] = {}

    def ask(name: str) -> None:
        handovers[name] = exchange.hand_in(None, wants=True)

    leader = threading.Thread(target=ask, args=("leader",))
    leader.start()
    assert store.entered.wait(10)  # claiming for the leader and the idle worker, held
    woken = threading.Thread(target=ask, args=("woken",))
    woken.start()
    wait_until(exchange, lambda: len(exchange._pending) == 1, "the woken worker never asked")
    store.release.set()
    join_all([leader, woken])
    assert [job_id for job_id, _ in store.calls] == [[]]  # one claim, for both
    assert [handovers["leader"].job.id, handovers["woken"].job.id] == ids[:2]
    assert exchange.claimed_ahead_claims() == set()
    assert told == []


class Unusual(BaseException):
    """Past ``except Exception``, as some libraries' errors are."""


def test_a_batch_that_dies_past_exception_fails_every_handover_in_it_not_just_the_leaders():
    _, store, exchange, jobs = three_held_one_commit_paused(3)
    outcomes: dict[str, object] = {}

    def hand_in(job) -> None:
        try:
            outcomes[job.id] = exchange.hand_in((job.claim, Succeed(result="{}")), wants=False)
        except Unusual as raised:
            outcomes[job.id] = raised

    threads = first_in_flight_two_behind(exchange, store, hand_in, jobs)
    store.fail_with, store.fail_from = Unusual(), 1  # the pair's batch dies, not the first
    store.release.set()
    join_all(threads)
    assert outcomes[jobs[0].id].held is True
    died = [outcomes[job.id] for job in jobs[1:]]
    assert sum(isinstance(outcome, Unusual) for outcome in died) == 1  # the pair's leader
    (told,) = [outcome for outcome in died if isinstance(outcome, Handover)]
    assert isinstance(told.error, StoreError) and told.held is None  # its worker retries


def test_a_leader_stops_waiting_for_peers_that_never_come_and_tries_again_later():
    from jobtable.core.exchange import GatherPolicy

    policy = GatherPolicy()
    for _ in range(4):
        assert policy.should_wait()
        policy.waited(paid_off=False)  # peers in long handlers: nobody came
    skipped = 0
    while not policy.should_wait():
        skipped += 1
    assert 3 <= skipped <= 10  # a few batches alone, then one more try
    for _ in range(20):
        policy.waited(paid_off=True)
        assert policy.should_wait()  # short jobs: every wait brings a peer


def test_an_idle_worker_a_job_claimed_ahead_waits_for_is_not_claimed_for_again():
    """A worker woken for a job claimed ahead counts as idle until it runs: a batch committed in
    between must not claim it a second job, which would wait claimed and unrun
    behind busy workers (where no cancel or pause could stop it starting)."""
    clock = FakeClock()
    memory = MemoryStore()
    store = RecordingStore(memory)
    ids = queued(memory, 6, clock)
    busy = exchange_over(store, clock).hand_in(None, wants=True).job  # another worker's job
    exchange = exchange_over(
        store, clock, idle=1
    )  # one worker asleep, woken by the job claimed ahead...
    exchange.hand_in(None, wants=True)
    assert store.calls[-1][1] == 2 and len(exchange.claimed_ahead_claims()) == 1
    # ...and before it takes that job, a busy worker hands in its outcome for its next job.
    handover = exchange.hand_in((busy.claim, Succeed(result="{}")), wants=True)
    assert handover.held is True and handover.job is not None
    assert store.calls[-1] == ([busy.id], 1)  # for the one handing in alone
    assert (
        len(exchange.claimed_ahead_claims()) == 1
    )  # still one job claimed ahead for one idle worker
    assert [memory.get(job_id).status for job_id in ids[4:]] == [Status.QUEUED] * 2
