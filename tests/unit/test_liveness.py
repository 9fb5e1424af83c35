"""Liveness, with runners on one in-memory store and a fake clock: only the certainly dead are settled.

A dead runner is one that holds no lock and raises no beat: registered in the
store under a made-up id, its lock taken away, as a crashed process's would be.
"""

from __future__ import annotations

import threading
import time

import attrs
import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.memory import MemoryStore
from jobtable.core import CANCELLED, INTERRUPTED, JobContext, LivenessTerms, RunnerInfo, Status
from jobtable.core.batch import Batch
from jobtable.core.errors import StoreUnavailableError
from jobtable.core.liveness import (
    CHECK_INTERVAL,
    FAST_WINDOW,
    IDLE_CHECK_INTERVAL,
    SWEEP_INTERVAL,
)
from jobtable.core.outcome import Succeed
from tests.support.harness import JobSystem
from tests.support.observed import ObservedStore
from tests.support.settling import interrupt, running_claims
from tests.support.stores import break_lock
from tests.unit.kinds_for_tests import CountPayload, CountResult, count


@attrs.define
class Gate:
    """A handler that holds its job running until the test opens the gate."""

    started: threading.Semaphore = attrs.Factory(lambda: threading.Semaphore(0))
    release: threading.Event = attrs.Factory(threading.Event)
    told_to_stop: list[str] = attrs.Factory(list)

    def handler(self, ctx: JobContext, payload: CountPayload) -> CountResult:
        ctx.publish(CountResult(done=1))
        self.started.release()
        while not self.release.wait(0.01):
            if ctx.stopping:
                self.told_to_stop.append(ctx.job_id)
                raise RuntimeError("stopped")
        return CountResult(done=2)


@pytest.fixture
def gate():
    made = Gate()
    yield made
    made.release.set()


def sweep(system: JobSystem, *, sleepers: int = 1) -> None:
    """Let one sweep happen: advance the clock a sweep interval at a time until the runner has
    swept (more than once where an idle runner sweeps slower), and wait until it is done."""
    done = system.sweeps
    while system.sweeps == done:
        system.clock.wait_for_sleepers(sleepers)
        system.clock.advance(SWEEP_INTERVAL)
        system.clock.wait_for_sleepers(sleepers)


def a_dead_runner_holding(store, clock, kind: str = "slow", job_id: str | None = None):
    """A runner that registered, claimed a job and died: no lock, no beat from now on."""
    info = RunnerInfo(
        id="runner-dead", host="gone", pid=1, started_at=clock.now(),
        kinds=(kind,), queues=None, workers=1,
    )  # fmt: skip
    store.register_runner(info, now=clock.now())
    claimed = store.claim_next(runner_id=info.id, now=clock.now())
    assert claimed is not None and (job_id is None or claimed.id == job_id)
    store.publish(claimed.claim, result='{"done":1}', now=clock.now())
    break_lock(store, info.id)
    return claimed.claim


def test_a_second_runner_leaves_a_live_runners_running_jobs_alone(make_system, gate):
    first = make_system()
    kind = first.kinds.register("slow", gate.handler, payload=CountPayload)
    first.start()
    job_id = kind.enqueue(CountPayload())
    assert gate.started.acquire(timeout=10)

    second = make_system(sweep_interval=SWEEP_INTERVAL)
    second.kinds.register("slow", gate.handler, payload=CountPayload)
    second.start()
    for _ in range(6):  # several sweeps pass
        sweep(second)
    assert second.runner.get(job_id).status is Status.RUNNING

    gate.release.set()
    assert first.wait_for(job_id).status is Status.SUCCEEDED


def test_a_dead_runners_job_is_settled_once_seen_dead_for_two_sweeps(make_system):
    survivor = make_system(sweep_interval=SWEEP_INTERVAL)
    kind = survivor.kinds.register("slow", count, payload=CountPayload)
    kind.enqueue(CountPayload())
    claim = a_dead_runner_holding(
        survivor.store, survivor.clock
    )  # before the survivor can claim it
    survivor.start()
    survivor.runner.stop()  # no claims of its own: only its sweeps act

    # Seen dead at its first look, then dead for one sweep: not yet two sweeps' worth (the
    # fast window), unless an idle runner's sweeps are that far apart (PostgreSQL's).
    sweep(survivor)
    if survivor.store.liveness_terms.idle_sweeps_slower * SWEEP_INTERVAL < FAST_WINDOW:
        assert survivor.store.get(claim.job_id).status is Status.RUNNING
        sweep(survivor)
    job = survivor.wait_for(claim.job_id)
    assert (job.status, job.error, job.result) == (Status.FAILED, INTERRUPTED, {"done": 1})
    assert not survivor.store.record(
        claim, Succeed(result="{}"), now=survivor.clock.now()
    )  # fenced
    assert [r.info.id for r in survivor.store.runners()] == [survivor.runner.id]  # row removed
    assert "marked jobs interrupted by restart count=1" in survivor.logs.text


def test_the_attempt_budget_stored_on_the_job_is_used_whoever_settles_it(make_system):
    """The dead runner registered the kind with 2 attempts; the survivor with the default 1."""
    dead_side = make_system()
    kind = dead_side.kinds.register("retry", count, payload=CountPayload, max_attempts=2)
    job_id = kind.enqueue(CountPayload(steps=3))
    assert dead_side.store.row(job_id)["max_attempts"] == 2

    survivor = make_system(sweep_interval=SWEEP_INTERVAL)
    survivor.kinds.register("retry", count, payload=CountPayload)  # max_attempts=1 here
    a_dead_runner_holding(survivor.store, survivor.clock, kind="retry", job_id=job_id)
    survivor.start()
    for _ in range(2):  # its first look at start, then two sweeps' worth
        sweep(survivor)
    job = survivor.wait_for(job_id)
    assert (job.status, job.result) == (Status.SUCCEEDED, {"done": 3})
    assert survivor.store.row(job_id)["attempt"] == 2
    assert "requeued jobs of a dead runner count=1" in survivor.logs.text


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "2"])
def test_max_attempts_must_be_a_whole_number_of_at_least_one(make_system, value):
    from jobtable.core import RegistrationError

    with pytest.raises(RegistrationError, match="max_attempts"):
        make_system().kinds.register("x", count, payload=CountPayload, max_attempts=value)


def test_by_default_an_idle_runner_checks_its_lock_every_0_4_s_a_busy_one_ten_times_a_second(
    shared_store, gate
):
    from jobtable.core import Runner

    clock = FakeClock()
    runner = Runner(shared_store, clock)  # the default intervals
    slow = runner.kinds.register("slow", gate.handler, payload=CountPayload)
    runner.start()
    try:
        terms = shared_store.liveness_terms
        # The check thread, and where the store's liveness can run out (a lease, a lock
        # session the server ends) a deadline thread at the same pace; then the sweeper.
        checks = 2 if terms.lease is not None or terms.lock_timeout is not None else 1
        assert clock.wait_for_sleepers(checks + 1) == [
            *[pytest.approx(IDLE_CHECK_INTERVAL)] * checks,
            pytest.approx(SWEEP_INTERVAL),
        ]
        assert (CHECK_INTERVAL, IDLE_CHECK_INTERVAL, SWEEP_INTERVAL) == (0.1, 0.4, 0.5)
        slow.enqueue(CountPayload())  # claimed at once: the registration's check is fresh
        assert gate.started.acquire(timeout=10)
        # The job ends the idle waits: the next check comes at the busy pace (no clock moved).
        busy = [pytest.approx(CHECK_INTERVAL)] * checks
        clock.wait_for_sleeping(lambda sleeping: sleeping[:checks] == busy)
        clock.advance(CHECK_INTERVAL)  # that check; then the next, as long as the job runs
        clock.wait_for_sleeping(lambda sleeping: sleeping[:checks] == busy)
    finally:
        gate.release.set()
        runner.stop()
        assert runner.join(timeout=None)


def test_a_worker_that_finds_the_last_check_too_old_to_claim_asks_for_one_at_once(
    make_system, monkeypatch
):
    """Idle, the lock is checked seldom, so the last check may be too old to claim on: the
    worker a job wakes asks for a check then, rather than waiting for the next. (Here idle
    checks are 5 s apart, past the half second a check allows claims for.)"""
    from jobtable.core import check_pace

    monkeypatch.setattr(check_pace, "IDLE_CHECK_INTERVAL", 5.0)
    monkeypatch.setattr(check_pace, "IDLE_SHARE", 10.0)
    system = make_system(check_interval=CHECK_INTERVAL)
    kind = system.kinds.register("count", count, payload=CountPayload)
    system.start()
    system.store.wait_until(lambda: system.store.claims == 1)  # found nothing, idle
    system.clock.wait_for_sleeping(lambda sleeping: pytest.approx(5.0) in sleeping)
    system.clock.advance(2 * SWEEP_INTERVAL)  # the registration's check is too old now
    assert not system.runner._registration.may_claim()
    job_id = kind.enqueue(CountPayload(steps=1))
    assert system.wait_for(job_id).status is Status.SUCCEEDED  # the clock never reached 5 s


def test_a_runner_that_lost_its_lock_takes_it_again_and_keeps_its_jobs(make_system, gate):
    owner = make_system(sweep_interval=SWEEP_INTERVAL, check_interval=CHECK_INTERVAL)
    kind = owner.kinds.register("slow", gate.handler, payload=CountPayload)
    owner.start()
    job_id = kind.enqueue(CountPayload())
    assert gate.started.acquire(timeout=10)
    observer = make_system(sweep_interval=SWEEP_INTERVAL)
    observer.start()

    break_lock(owner.store, owner.runner.id)  # as a killed session or a removed file
    owner.clock.wait_for_sleepers(2)
    owner.clock.advance(CHECK_INTERVAL)  # the owner's next check takes it again
    owner.store.wait_until(lambda: "lock was lost and is taken again" in owner.logs.text)
    for _ in range(4):
        sweep(observer)
    assert observer.store.get(job_id).status is Status.RUNNING
    assert gate.told_to_stop == []
    gate.release.set()
    assert owner.wait_for(job_id).status is Status.SUCCEEDED


def test_a_runner_that_takes_its_lock_again_stops_the_handlers_of_jobs_settled_meanwhile(
    make_system, gate
):
    owner = make_system(workers=2, sweep_interval=SWEEP_INTERVAL, check_interval=CHECK_INTERVAL)
    kind = owner.kinds.register("slow", gate.handler, payload=CountPayload)
    owner.start()
    kept, settled = kind.enqueue(CountPayload()), kind.enqueue(CountPayload())
    for _ in range(2):
        assert gate.started.acquire(timeout=10)
    store = owner.store.inner
    break_lock(store, owner.runner.id)
    # Meanwhile another runner settled one of its jobs (and the owner could not know).
    stolen = next(c for c in running_claims(store, owner.runner.id) if c.job_id == settled)
    assert interrupt(store, stolen, code=INTERRUPTED, now=owner.clock.now())

    owner.clock.wait_for_sleepers(2)
    owner.clock.advance(CHECK_INTERVAL)
    owner.store.wait_until(lambda: gate.told_to_stop == [settled])
    assert "jobs of this runner were settled elsewhere" in owner.logs.text
    gate.release.set()
    assert owner.wait_for(kept).status is Status.SUCCEEDED


def test_a_runner_never_claims_while_its_liveness_is_unconfirmed(make_system, monkeypatch):
    system = make_system(check_interval=CHECK_INTERVAL)
    kind = system.kinds.register("count", count, payload=CountPayload)
    system.start()
    failing = threading.Event()
    real_confirm = system.store.inner.confirm_liveness

    def confirm(runner_id, *, timeout):
        if failing.is_set():
            raise StoreUnavailableError("database unavailable")
        return real_confirm(runner_id, timeout=timeout)

    monkeypatch.setattr(system.store.inner, "confirm_liveness", confirm)
    system.store.wait_until(lambda: system.store.claims == 1)  # found nothing, idle
    failing.set()
    system.clock.wait_for_sleepers(1)
    system.clock.advance(SWEEP_INTERVAL + CHECK_INTERVAL)  # the last confirmation goes stale
    system.clock.wait_for_sleepers(1)  # ...and the check after it failed

    job_id = kind.enqueue(CountPayload(steps=1))
    system.store.wait_until(lambda: "liveness lock failed" in system.logs.text)
    assert system.store.claims == 1  # woken, but it did not claim
    assert system.store.get(job_id).status is Status.QUEUED

    failing.clear()
    system.clock.advance(CHECK_INTERVAL)
    assert system.wait_for(job_id).status is Status.SUCCEEDED


def test_handlers_are_told_to_stop_before_any_observer_could_judge_their_runner_dead():
    terms = LivenessTerms(lease=6.0, lock_timeout=6.0)
    store = ObservedStore(MemoryStore(liveness_terms=terms))
    clock = FakeClock()
    owner = JobSystem(store, clock=clock, check_interval=CHECK_INTERVAL)  # beats: none
    observer = JobSystem(store, clock=clock, sweep_interval=SWEEP_INTERVAL)
    started, told, release = threading.Event(), threading.Event(), threading.Event()

    def holds_on(ctx: JobContext, payload: CountPayload) -> CountResult:
        started.set()
        while not release.wait(0.005):
            if ctx.stopping:
                told.set()  # it notices, and (badly) goes on: the observer must still wait
        return CountResult(done=1)

    kind = owner.kinds.register("slow", holds_on, payload=CountPayload)
    owner.start()
    observer.start()
    job_id = kind.enqueue(CountPayload())
    assert started.wait(10)
    real_confirm = store.inner.confirm_liveness

    def partitioned(runner_id, *, timeout):
        if runner_id == owner.runner.id:
            raise StoreUnavailableError("database unavailable")
        return real_confirm(runner_id, timeout=timeout)

    store.inner.confirm_liveness = partitioned  # the owner's checks (and beats) get nowhere
    stopped_at = dead_at = None
    try:
        while dead_at is None and clock.monotonic() < 20:
            # The owner's check and deadline threads, the observer's sweeper.
            clock.wait_for_sleepers(3)
            clock.advance(0.5)
            clock.wait_for_sleepers(3)  # all three are through this step
            if stopped_at is None and "telling every handler to stop" in owner.logs.text:
                stopped_at = clock.monotonic()
                assert told.wait(10)  # the handler saw ctx.stopping
            if store.get(job_id).status is not Status.RUNNING:
                dead_at = clock.monotonic()
    finally:
        release.set()
        owner.stop()
        observer.stop()
    assert stopped_at == 6.0 - terms.margin  # the lease runs out at 6 s; the margin is 2 s
    assert dead_at == 6.0
    assert (store.get(job_id).status, store.get(job_id).error) == (Status.FAILED, INTERRUPTED)


def test_join_returns_within_its_timeout_when_the_database_hangs(make_system):
    system = make_system()
    system.start()
    hang = threading.Event()
    system.store.inner.unregister_runner = lambda runner_id: hang.wait(60)
    system.runner.stop()
    deadline = time.monotonic() + 10
    while system.runner.live_workers and time.monotonic() < deadline:
        time.sleep(0.005)  # a worker's exit changes no store row to wait on
    assert system.runner.live_workers == 0
    returned = []
    joiner = threading.Thread(target=lambda: returned.append(system.runner.join(timeout=2.0)))
    joiner.start()
    system.clock.wait_for_sleepers(1)
    system.clock.advance(2.0)
    joiner.join(10)
    hang.set()
    assert returned == [True]  # every worker exited; the row is left for others to clear


def test_jobs_held_ahead_are_given_back_not_run_once_the_liveness_was_lost(make_system, gate):
    """A job held ahead and not yet started when the runner lost its liveness may have been
    freed elsewhere meanwhile: no worker of it may start it. The one still queued is given
    back and runs later; the one cancelled meanwhile never runs."""
    owner = make_system(workers=1, sweep_interval=SWEEP_INTERVAL, check_interval=CHECK_INTERVAL)
    kind = owner.kinds.register("slow", gate.handler, payload=CountPayload)
    owner.start()
    busy = kind.enqueue(CountPayload())
    assert gate.started.acquire(timeout=10)  # the one worker is busy
    still_queued, cancelled = kind.enqueue(CountPayload()), kind.enqueue(CountPayload())
    store = owner.store.inner
    held = store.run_batch(
        Batch(hold=2), runner_id=owner.runner.id, now=owner.clock.now(), kinds=["slow"]
    ).held
    assert [job.id for job in held] == [still_queued, cancelled]
    # As a batch leaves them for the workers, never expiring on their own here.
    owner.runner._exchange._held.extend((job, time.monotonic() + 3600) for job in held)
    owner.runner._exchange._holds_in_store = True

    break_lock(store, owner.runner.id)
    store.cancel(cancelled, now=owner.clock.now())
    owner.clock.wait_for_sleepers(2)
    owner.clock.advance(CHECK_INTERVAL)  # the lock is taken again; the sweep reconciles
    claimed: list = []

    def freed() -> bool:  # given back: another runner may claim it
        batch = Batch(claim=1)
        claimed.extend(store.run_batch(batch, runner_id="another", now=owner.clock.now()).claimed)
        return bool(claimed)

    owner.store.wait_until(freed)
    assert owner.runner._exchange.held_claims() == set()
    assert [job.id for job in claimed] == [still_queued]
    store.put_back([claimed[0].claim], now=owner.clock.now())

    gate.release.set()
    assert owner.wait_for(busy).status is Status.SUCCEEDED
    assert owner.wait_for(still_queued).status is Status.SUCCEEDED
    job = owner.runner.get(cancelled)
    assert (job.status, job.error) == (Status.FAILED, CANCELLED)
    assert gate.started.acquire(timeout=0) and not gate.started.acquire(timeout=0)  # 1 more run


def test_a_claim_whose_reply_was_lost_is_given_back_after_two_sweeps_and_runs(make_system):
    system = make_system(sweep_interval=SWEEP_INTERVAL)
    kind = system.kinds.register("count", count, payload=CountPayload)
    system.store.lost_claims = 1  # the claim commits; the worker is told it failed
    system.start()
    job_id = kind.enqueue(CountPayload(steps=2))
    system.store.wait_until(lambda: system.store.lost_claims == 0)
    assert system.runner.get(job_id).status is Status.RUNNING  # held, yet run by no worker

    # The worker retries its claim after the backoff (and then idles: the queue is
    # empty); the first sweep suspects the job, the second gives it back.
    assert system.clock.wait_for_sleepers(2) == [pytest.approx(0.05), pytest.approx(0.5)]
    sweep(system)
    assert system.runner.get(job_id).status is Status.RUNNING  # suspected, not yet moved
    # The second sweep gives it back; a later one, when the worker's retried claim was still
    # in flight (a loaded database: that claim might have been the one holding it). Sweeps
    # take no wall time on the fake clock, so they go on until the claim has come back.
    deadline = time.monotonic() + 30
    while system.runner.get(job_id).status is Status.RUNNING:
        assert time.monotonic() < deadline, "the lost claim was never given back"
        sweep(system)
    job = system.wait_for(job_id)
    assert (job.status, job.result) == (Status.SUCCEEDED, {"done": 2})
    assert "requeued jobs whose claim reply was lost count=1" in system.logs.text
    assert system.store.inner.row(job_id)["attempt"] == 1  # the lost claim's attempt given back


def test_a_claim_whose_reply_is_slow_is_never_given_back_however_many_sweeps_pass(make_system):
    """A claim committed whose reply comes late (a busy database, a slow network) is the
    runner's still: given back, it would run twice once the reply came."""
    system = make_system(sweep_interval=SWEEP_INTERVAL)
    kind = system.kinds.register("count", count, payload=CountPayload)
    reply = threading.Event()
    system.store.slow_claim = reply  # the claim commits; its reply waits for the test
    system.start()
    job_id = kind.enqueue(CountPayload(steps=2))
    system.store.wait_until(lambda: system.store.slow_claim_waiting)
    for _ in range(3):
        sweep(system)
        assert system.runner.get(job_id).status is Status.RUNNING  # held here: not moved
    reply.set()
    job = system.wait_for(job_id)
    assert (job.status, job.result) == (Status.SUCCEEDED, {"done": 2})
    assert "requeued" not in system.logs.text
    assert system.store.inner.row(job_id)["attempt"] == 1  # run once, by its one claim


def test_a_claim_whose_handler_ran_but_whose_outcome_never_landed_is_interrupted_not_given_back(
    make_system,
):
    from jobtable.core import NewJob

    system = make_system(sweep_interval=SWEEP_INTERVAL)
    system.start()
    system.runner.stop()  # its workers take nothing more; its sweeps go on
    store = system.store
    store.create(NewJob(id="ran", kind="noop", payload="{}"), now=system.clock.now())
    claim = store.claim_next(runner_id=system.runner.id, now=system.clock.now()).claim
    # As a worker whose handler ran, then gave up recording the outcome (database down):
    system.runner._recorder.ran_unrecorded(claim, INTERRUPTED)
    sweep(system)  # suspected: held here, run by no worker
    sweep(system)
    job = system.wait_for("ran")
    assert (job.status, job.error) == (Status.FAILED, INTERRUPTED)
    assert store.row("ran")["attempt"] == 1  # counted: its handler did run


def test_joining_in_short_slices_still_waits_for_the_runners_row_to_go(make_system):
    """As the CLI joins, a slice at a time: a later join waits for the deletion the first began."""
    system = make_system()
    system.start()
    store = system.store.inner
    real_unregister = store.unregister_runner
    slow = threading.Event()
    store.unregister_runner = lambda runner_id: slow.wait(10) and real_unregister(runner_id)
    system.runner.stop()
    deadline = time.monotonic() + 10
    while system.runner.live_workers and time.monotonic() < deadline:
        time.sleep(0.005)  # a worker's exit changes no store row to wait on
    assert system.runner.join(timeout=0.0)  # the workers are gone; the row is not yet
    returned = []
    joiner = threading.Thread(target=lambda: returned.append(system.runner.join(timeout=5.0)))
    joiner.start()
    system.clock.wait_for_sleepers(1)  # the second join waits for the deletion too
    slow.set()
    joiner.join(10)
    assert returned == [True]
    assert store.runners() == []


def counting_beats(store) -> list[int]:
    """The busy count of every beat the store is sent, from now on."""
    sent: list[int] = []
    real_beat = store.inner.beat

    def beat(runner_id, *, busy, now):
        sent.append(busy)
        return real_beat(runner_id, busy=busy, now=now)

    store.inner.beat = beat
    return sent


def test_an_idle_runner_whose_lock_is_proof_writes_no_beat_and_its_busy_count_once_a_change(
    make_system, gate
):
    system = make_system(sweep_interval=SWEEP_INTERVAL)
    if not system.store.liveness_terms.never_run_out:
        pytest.skip("PostgreSQL: its lease is kept by beats (tested on a memory store with one)")
    kind = system.kinds.register("slow", gate.handler, payload=CountPayload)
    beats = counting_beats(system.store)
    system.start()
    for _ in range(6):  # idle sweeps
        sweep(system)
    assert beats == []  # nothing to say: nothing written

    job_id = kind.enqueue(CountPayload())
    assert gate.started.acquire(timeout=10)
    for _ in range(3):
        sweep(system)
    assert beats == [1]  # busy: said once
    assert [r.busy for r in system.store.runners()] == [1]
    gate.release.set()
    assert system.wait_for(job_id).status is Status.SUCCEEDED
    for _ in range(3):
        sweep(system)
    assert beats == [1, 0]
    assert [r.busy for r in system.store.runners()] == [0]


def test_an_idle_runner_judged_dead_finds_its_row_gone_and_registers_again(make_system):
    system = make_system(sweep_interval=SWEEP_INTERVAL)
    beats = counting_beats(system.store)
    system.start()
    sweep(system)
    system.store.unregister_runner(system.runner.id)  # as a settler removes a dead one's row
    system.store.confirm_liveness(system.runner.id, timeout=1.0)  # the lock held, as before
    for _ in range(3):
        sweep(system)
    assert beats == [0]  # the look at the runners missed its row: one beat found it gone
    assert [r.info.id for r in system.store.runners()] == [system.runner.id]
    assert "registering again" in system.logs.text


def test_an_idle_runner_on_a_store_with_a_lease_beats_only_to_keep_it():
    terms = LivenessTerms(lease=6.0, lock_timeout=6.0)
    store = ObservedStore(MemoryStore(liveness_terms=terms))
    system = JobSystem(store, sweep_interval=SWEEP_INTERVAL)
    beats = counting_beats(store)
    system.start()
    try:
        period = terms.idle_beat_period
        assert period is not None
        sweeps = 0
        while system.clock.monotonic() < 3 * period:
            sweep(system, sleepers=1)
            sweeps += 1
        assert 2 <= len(beats) <= 3 < sweeps  # one a period, not one a sweep
    finally:
        system.stop()
