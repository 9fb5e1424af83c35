"""The exchange: workers' takes batched, jobs held ahead, outcomes buffered (core/exchange.py)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.memory import MemoryStore
from jobtable.core import NewJob, Status
from jobtable.core import exchange as exchange_module
from jobtable.core.ahead import AHEAD_LIMIT, AHEAD_WAIT, MAX_AHEAD, AheadPolicy
from jobtable.core.batch import Batch
from jobtable.core.errors import StoreUnavailableError
from jobtable.core.exchange import FLUSH_AFTER, FLUSH_AT, JobExchange
from jobtable.core.exchange_items import Unsent
from jobtable.core.ids import JobIdGenerator
from jobtable.core.limits import QueueLimit
from jobtable.core.outcome import Succeed
from tests.support.threads import run_in_threads

RUNNER = "runner-x"
_ids = JobIdGenerator()


class RecordingStore:
    """Passes ``run_batch`` through, keeping each batch; raises ``fail_with`` when set."""

    def __init__(self, inner: MemoryStore) -> None:
        self.inner = inner
        self.batches: list[Batch] = []
        self.fail_with: Exception | None = None
        self._guard = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def run_batch(self, batch: Batch, **arguments: Any) -> Any:
        with self._guard:
            self.batches.append(batch)
            if self.fail_with is not None:
                raise self.fail_with
        return self.inner.run_batch(batch, **arguments)


class Now:
    """The exchange's real-time clock, moved by hand."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.value = 1000.0
        monkeypatch.setattr(exchange_module.time, "monotonic", lambda: self.value)


def make(
    handler_seconds: float | None = None, *, workers: int = 2
) -> tuple[JobExchange, RecordingStore, list[tuple[str, bool]]]:
    store = RecordingStore(MemoryStore())
    policy = AheadPolicy(workers)
    if handler_seconds is not None:
        policy.ran(handler_seconds)
    written: list[tuple[str, bool]] = []

    def note(unsent: Unsent, recorded: bool) -> None:
        written.append((unsent.claimed.id, recorded))

    exchange = JobExchange(store, FakeClock(), runner_id=RUNNER, policy=policy, written=note)
    return exchange, store, written


def queue(exchange: JobExchange, count: int) -> list[str]:
    store: Any = exchange._store
    ids = [_ids.next_id(1_772_366_400_000) for _ in range(count)]
    for job_id in ids:
        store.inner.create(NewJob(id=job_id, kind="k", payload="{}"), now=FakeClock().now())
    return ids


def test_a_runner_of_unknown_or_long_handlers_claims_one_job_per_free_worker_and_holds_none():
    for seconds in (None, AHEAD_WAIT * 2):
        exchange, store, _ = make(seconds)
        first, _second = queue(exchange, 2)
        job = exchange.take()
        assert job is not None and job.id == first
        (batch,) = store.batches
        assert (batch.claim, batch.hold, batch.durable, list(batch.starts)) == (1, 0, False, [])
        assert not exchange.has_held()
        assert store.inner.get(first).status is Status.RUNNING


def test_short_handlers_hold_jobs_ahead_queued_and_later_takes_start_them():
    exchange, store, _ = make(0.001, workers=2)  # 20 ms over 1 ms a job, 2 workers: 40
    ids = queue(exchange, 50)
    first = exchange.take()
    assert first is not None and first.id == ids[0]
    assert store.batches[0].hold == 40
    assert len(exchange.held_claims()) == 40
    assert all(store.inner.get(job_id).status is Status.QUEUED for job_id in ids[1:])
    second = exchange.take()
    assert second is not None and second.id == ids[1]
    assert store.batches[1].starts == [second.claim] and store.batches[1].claim == 0
    assert store.inner.get(second.id).status is Status.RUNNING
    assert second.claim.attempt == 1


def test_a_runner_holds_ahead_only_while_its_claims_find_all_they_ask_for():
    """An idle runner woken for a job claims it alone (a hold would find nothing, and the
    job's start would wait for it); it holds ahead again once a claim found all it asked."""
    exchange, store, _ = make(0.001, workers=2)
    lone = queue(exchange, 1)
    assert exchange.take().id == lone[0]
    assert (store.batches[0].claim, store.batches[0].hold) == (1, 40)  # a runner's first
    assert exchange.take() is None  # came back short: the queue is empty
    woken = queue(exchange, 1)
    assert exchange.take().id == woken[0]
    assert (store.batches[2].claim, store.batches[2].hold) == (1, 0)  # claimed alone
    burst = queue(exchange, 30)  # the claim above found all it asked (one)
    assert exchange.take().id == burst[0]
    assert (store.batches[3].claim, store.batches[3].hold) == (1, 40)  # so it holds again
    assert len(exchange.held_claims()) == 29


def test_an_async_slots_short_claim_does_not_stop_the_threads_holding_ahead():
    """Only the threads' lane holds ahead, so only its claims say whether more may be due: an
    idle async slot that looks after each take and finds nothing changes nothing."""
    exchange, store, _ = make(0.001, workers=2)
    exchange.serve(["k", "async"], None, async_kinds=["async"])
    ids = queue(exchange, 100)
    for job_id in ids[:60]:  # past the first 40 held: the threads' lane holds again
        job = exchange.take()
        assert job is not None and job.id == job_id
        exchange.record(job, Succeed(result="{}"))
        assert exchange.take(1) is None  # the async slot its take woke: nothing for it
    assert sum(1 for batch in store.batches if batch.hold) >= 2


def test_the_ahead_policy_is_bounded_and_follows_the_handlers_times():
    policy = AheadPolicy(4)
    assert policy.target() == 0  # nothing timed yet
    policy.ran(0.0)
    assert policy.target() == MAX_AHEAD
    for _ in range(50):
        policy.ran(AHEAD_WAIT * 3)
    assert policy.target() == 0  # long handlers now: claims for free workers only


def test_a_held_job_cancelled_meanwhile_is_passed_over_for_the_next():
    exchange, store, _ = make(0.001)
    ids = queue(exchange, 3)
    assert exchange.take().id == ids[0]
    assert store.inner.cancel(ids[1], now=FakeClock().now()) is not None
    job = exchange.take()
    assert job is not None and job.id == ids[2]
    assert store.inner.get(ids[1]).status is Status.FAILED


def test_outcomes_wait_in_the_buffer_until_the_flush_writes_them_together_durably(monkeypatch):
    now = Now(monkeypatch)
    exchange, store, written = make()
    ids = queue(exchange, 3)
    jobs = [exchange.take() for _ in ids]
    for job in jobs:
        exchange.began(job.claim)
        exchange.record(job, Succeed(result="{}"))
    assert all(store.inner.get(job_id).status is Status.RUNNING for job_id in ids)
    assert exchange.in_hand().claims == {job.claim for job in jobs}
    assert exchange.next_due() == pytest.approx(now.value + FLUSH_AFTER)
    exchange.flush()
    assert store.batches[-1].durable and len(store.batches[-1].outcomes) == 3
    assert all(batch.durable is False for batch in store.batches[:-1])  # the takes
    assert all(store.inner.get(job_id).status is Status.SUCCEEDED for job_id in ids)
    assert written == [(job_id, True) for job_id in ids]
    assert exchange.in_hand().claims == set() and exchange.next_due() is None


def test_enough_outcomes_are_due_at_once():
    exchange, _, _ = make()
    ids = queue(exchange, FLUSH_AT)
    for _ in ids:
        exchange.record(exchange.take(), Succeed(result="{}"))
    assert exchange.next_due() == 0.0


def test_a_failed_write_keeps_every_outcome_and_held_job_for_the_next_try():
    exchange, store, written = make(0.001)
    ids = queue(exchange, 5)
    job = exchange.take()
    exchange.record(job, Succeed(result="{}"))
    held = exchange.held_claims()
    store.fail_with = StoreUnavailableError("database unavailable")
    with pytest.raises(StoreUnavailableError):
        exchange.flush()
    with pytest.raises(StoreUnavailableError):
        exchange.take()
    assert exchange.held_claims() == held
    assert exchange.in_hand().claims == {job.claim}
    store.fail_with = None
    exchange.flush()
    assert written == [(ids[0], True)]
    assert exchange.take().id == ids[1]


def test_jobs_held_past_the_limit_are_given_back_by_the_next_batch(monkeypatch):
    now = Now(monkeypatch)
    exchange, store, _ = make(0.001)
    ids = queue(exchange, 4)
    exchange.take()
    assert exchange.next_due() == pytest.approx(now.value + AHEAD_LIMIT)
    now.value += AHEAD_LIMIT * 2
    exchange.flush()
    assert [claim.job_id for claim in store.batches[-1].give_backs] == ids[1:]
    assert not exchange.has_held()
    other = store.inner.run_batch(Batch(claim=5), runner_id="another", now=FakeClock().now())
    assert [job.id for job in other.claimed] == ids[1:]


def test_give_back_held_frees_every_held_job_in_the_store():
    exchange, store, _ = make(0.001)
    ids = queue(exchange, 4)
    exchange.take()
    assert exchange.give_back_held() == 3
    assert not exchange.has_held()
    other = store.inner.run_batch(Batch(claim=5), runner_id="another", now=FakeClock().now())
    assert [job.id for job in other.claimed] == ids[1:]


def test_no_job_is_held_while_the_runner_may_not_hold_and_one_held_then_is_given_back():
    store = RecordingStore(MemoryStore())
    policy = AheadPolicy(2)
    policy.ran(0.001)
    allowed = [False]
    exchange = JobExchange(
        store, FakeClock(), runner_id=RUNNER, policy=policy, may_hold=lambda: allowed[0]
    )
    queue(exchange, 3)
    exchange.take()
    assert store.batches[-1].hold == 0 and not exchange.has_held()


def test_workers_taking_at_once_each_get_their_own_jobs_and_every_job_runs_once():
    exchange, _, _ = make(0.0001, workers=4)
    ids = set(queue(exchange, 300))
    taken: list[str] = []
    guard = threading.Lock()

    def worker() -> None:
        while (job := exchange.take()) is not None:
            with guard:
                taken.append(job.id)
            exchange.record(job, Succeed(result="{}"))

    run_in_threads([worker] * 4)
    exchange.flush()
    assert sorted(taken) == sorted(ids)
    store: Any = exchange._store
    assert all(store.inner.get(job_id).status is Status.SUCCEEDED for job_id in ids)


def test_give_back_held_frees_jobs_expired_but_not_yet_given_back(monkeypatch):
    """A stop between a hold's expiry and the batch that gives it back leaves none held."""
    now = Now(monkeypatch)
    exchange, store, _ = make(0.001)
    ids = queue(exchange, 4)
    exchange.take()
    now.value += AHEAD_LIMIT * 2
    exchange._expire(now.value)  # what the next batch would give back
    assert not exchange.has_held()
    assert exchange.give_back_held() == 3
    assert exchange.give_back_held() == 0  # nothing held since: no write
    other = store.inner.run_batch(Batch(claim=5), runner_id="another", now=FakeClock().now())
    assert [job.id for job in other.claimed] == ids[1:]


def test_a_job_taken_is_in_hand_until_its_worker_begins_it_and_its_outcome_until_written():
    exchange, _, _ = make()
    queue(exchange, 1)
    job = exchange.take()
    assert job is not None and exchange.in_hand().claims == {job.claim}  # not lost to a sweep
    exchange.began(job.claim)
    assert exchange.in_hand().claims == set()
    exchange.record(job, Succeed(result="{}"))
    assert exchange.in_hand().claims == {job.claim}
    exchange.flush()
    assert exchange.in_hand().claims == set()


class LosesReply(RecordingStore):
    """Commits a batch, then raises as a reply lost on the way back would."""

    lose_next = False

    def run_batch(self, batch: Batch, **arguments: Any) -> Any:
        done = super().run_batch(batch, **arguments)
        if self.lose_next:
            self.lose_next = False
            raise StoreUnavailableError("database unavailable")
        return done


def test_jobs_held_by_a_batch_whose_reply_was_lost_are_freed_by_the_flusher_while_idle():
    store = LosesReply(MemoryStore())
    policy = AheadPolicy(2)
    policy.ran(0.001)
    exchange = JobExchange(store, FakeClock(), runner_id=RUNNER, policy=policy)
    ids = queue(exchange, 4)
    store.lose_next = True
    with pytest.raises(StoreUnavailableError):
        exchange.take()  # it claimed one and held three; the answer never came
    held = [job_id for job_id in ids if store.inner.row(job_id)["held_by"] == RUNNER]
    assert held  # queued, held in this runner's name, claimable by no one
    assert exchange.next_due() is not None and exchange.next_due() <= time.monotonic()
    exchange.flush()  # the flusher's batch, with no worker asking
    assert all(store.inner.row(job_id)["held_by"] is None for job_id in held)
    other = store.inner.run_batch(Batch(claim=5), runner_id="another", now=FakeClock().now())
    assert {job.id for job in other.claimed} == set(held)


def test_a_retry_whose_write_was_refused_as_stale_still_has_the_scheduler_look_again():
    """A flush whose reply was lost may have written a retry; its next try is refused as
    stale. The scheduler must still hear of the job due later, or it waits forever."""
    import logging

    from jobtable.core.exchange_items import Unsent
    from jobtable.core.outcome import RunAgain
    from jobtable.core.recording import OutcomeRecorder

    exchange, store, _ = make()
    looked: list[bool] = []
    recorder = OutcomeRecorder(
        store, FakeClock(), logging.getLogger("test"), exchange,
        queued_again=lambda: looked.append(True),
    )  # fmt: skip
    queue(exchange, 1)
    job = exchange.take()
    retry = RunAgain(run_at=FakeClock().now(), code="flaky")
    recorder.written(Unsent(job, retry, 0.0), False)
    recorder.written(Unsent(job, Succeed(result="{}"), 0.0), False)
    assert looked == [True]


def test_only_an_outcome_in_a_limited_queue_wakes_idle_workers_for_its_slot():
    store = RecordingStore(MemoryStore())
    woken: list[int] = []
    exchange = JobExchange(
        store, FakeClock(), runner_id=RUNNER, policy=AheadPolicy(2), slots_freed=woken.append
    )
    exchange.serve(["k"], None)
    store.inner.set_queue_limit("slow", QueueLimit(running=5), now=FakeClock().now())
    for queue_name in ("fast", "slow"):
        job_id = _ids.next_id(1_772_366_400_000)
        job = NewJob(id=job_id, kind="k", payload="{}", queue=queue_name)
        store.inner.create(job, now=FakeClock().now())
    taken = [exchange.take(), exchange.take()]  # the first claim learns that slow is limited
    assert sorted(job.queue for job in taken if job is not None) == ["fast", "slow"]
    woken.clear()
    fast, slow = sorted(taken, key=lambda job: job.queue)
    exchange.record(fast, Succeed(result="{}"))
    exchange.flush()
    assert woken == []  # its queue has no limit: no slot came back
    exchange.record(slow, Succeed(result="{}"))
    exchange.flush()
    assert woken == [1]
