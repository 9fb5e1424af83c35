"""Waking, stopping and the claim-retry wait, driven by the fake clock."""

from __future__ import annotations

import threading

import pytest

from jobtable.core import JobContext, NoopPayload, Status
from jobtable.core.errors import StoreError
from tests.unit.kinds_for_tests import CountPayload, CountResult, count


def test_an_idle_runner_does_not_poll_and_an_enqueue_wakes_a_worker(make_system):
    system = make_system(workers=2)
    kind = system.kinds.register("count", count, payload=CountPayload)
    system.start()
    system.store.wait_until(lambda: system.store.claims == 2)  # each worker found nothing

    assert system.clock.sleeping() == []  # nobody waits on time: no polling
    job = system.wait_for(kind.enqueue(CountPayload(steps=4)))  # no clock advance needed
    assert job.status is Status.SUCCEEDED


def test_the_claim_retry_backs_off_and_resets_after_a_good_claim(make_system):
    system = make_system()
    kind = system.kinds.register("count", count, payload=CountPayload)
    system.store.claim_faults += [StoreError("database locked")] * 9
    system.start()

    seen = []
    for _ in range(9):
        (delay,) = system.clock.wait_for_sleepers(1)
        seen.append(delay)
        system.clock.advance(delay)
    assert seen == pytest.approx([0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0])
    system.store.wait_until(lambda: system.store.claims >= 10)  # the good, empty claim

    system.store.claim_faults.append(StoreError("database locked"))
    job_id = kind.enqueue(CountPayload(steps=1))
    assert system.clock.wait_for_sleepers(1) == [pytest.approx(0.05)]  # reset
    system.clock.advance(0.05)
    assert system.wait_for(job_id).status is Status.SUCCEEDED
    assert system.logs.text.count("claim job failed; retrying category=database locked") == 10


def test_stop_ends_the_claim_retry_wait_at_once(make_system):
    system = make_system()
    system.store.claim_faults.append(StoreError("database locked"))
    system.start()
    system.clock.wait_for_sleepers(1)

    system.runner.stop()
    assert system.runner.join(timeout=None)  # no clock advance: the wait ended on stop


def test_the_stop_signal_reaches_every_handler_and_a_returned_result_is_recorded(make_system):
    system = make_system(workers=3)
    waiting = threading.Semaphore(0)

    def patient(ctx: JobContext, payload: CountPayload) -> CountResult:
        waiting.release()
        stopped = ctx.wait(3600)
        return CountResult(done=1 if stopped and ctx.stopping else 0)

    kind = system.kinds.register("patient", patient, payload=CountPayload)
    system.start()
    ids = [kind.enqueue(CountPayload()) for _ in range(3)]
    for _ in ids:
        assert waiting.acquire(timeout=10)

    system.stop()
    for job_id in ids:
        job = system.runner.get(job_id)
        assert (job.status, job.result) == (Status.SUCCEEDED, {"done": 1})


@pytest.mark.parametrize(
    ("max_attempts", "settled"),
    [(1, (Status.FAILED, "interrupted by restart")), (2, (Status.QUEUED, None))],
)
def test_a_handler_failing_because_it_was_stopped_is_queued_again_while_attempts_last(
    make_system, max_attempts, settled
):
    system = make_system()
    started = threading.Event()

    def quits(ctx: JobContext, payload: CountPayload) -> CountResult:
        ctx.publish(CountResult(done=1))
        started.set()
        ctx.wait(3600)
        raise RuntimeError("stopped")

    kind = system.kinds.register("quits", quits, payload=CountPayload, max_attempts=max_attempts)
    system.start()
    job_id = kind.enqueue(CountPayload())
    assert started.wait(10)
    system.stop()  # both phases
    job = system.runner.get(job_id)
    assert (job.status, job.error, job.result) == (*settled, {"done": 1})
    assert f"job stopped before it finished; interrupted job_id={job_id}" in system.logs.text


def test_join_gives_up_on_a_handler_that_ignores_the_stop_signal(make_system):
    system = make_system()
    release = threading.Event()
    started = threading.Event()

    def stubborn(ctx: JobContext, payload: CountPayload) -> CountResult:
        started.set()
        release.wait(30)
        return CountResult(done=0)

    kind = system.kinds.register("stubborn", stubborn, payload=CountPayload)
    system.start()
    kind.enqueue(CountPayload())
    assert started.wait(10)
    system.runner.stop()

    outcome = []
    joiner = threading.Thread(target=lambda: outcome.append(system.runner.join(timeout=10)))
    joiner.start()
    system.clock.wait_for_sleepers(1)
    system.clock.advance(10)
    joiner.join(10)
    assert outcome == [False]
    release.set()
    assert system.runner.join(timeout=None)


def test_a_handler_waits_on_the_runner_clock(make_system):
    system = make_system()
    started = threading.Event()

    def sleeper(ctx: JobContext, payload: CountPayload) -> CountResult:
        started.set()
        return CountResult(done=int(ctx.wait(30)))

    kind = system.kinds.register("sleeper", sleeper, payload=CountPayload)
    system.start()
    job_id = kind.enqueue(CountPayload())
    assert system.clock.wait_for_sleepers(1) == [pytest.approx(30)]
    system.clock.advance(30)
    assert system.wait_for(job_id).result == {"done": 0}


def test_an_outcome_that_fails_to_record_is_retried_with_backoff(make_system):
    system = make_system()
    kind = system.kinds.register("count", count, payload=CountPayload)
    system.store.finish_faults += [StoreError("database locked"), StoreError("database locked")]
    system.start()
    job_id = kind.enqueue(CountPayload(steps=5))

    for delay in (0.05, 0.1):
        assert system.clock.wait_for_sleepers(1) == [pytest.approx(delay)]
        system.clock.advance(delay)
    job = system.wait_for(job_id)
    assert (job.status, job.result) == (Status.SUCCEEDED, {"done": 5})
    assert "record job outcome failed" in system.logs.text
    assert "attempt=2" in system.logs.text


def test_a_running_runner_keeps_retrying_an_outcome_past_record_attempts(make_system):
    from jobtable.core.recording import RECORD_ATTEMPTS

    system = make_system()
    kind = system.kinds.register("count", count, payload=CountPayload)
    faults = RECORD_ATTEMPTS + 2
    system.store.finish_faults += [StoreError("database unavailable")] * faults
    system.start()
    job_id = kind.enqueue(CountPayload(steps=5))
    delays = []
    for _ in range(faults):
        (delay,) = system.clock.wait_for_sleepers(1)
        delays.append(delay)
        system.clock.advance(delay)
    job = system.wait_for(job_id)
    assert (job.status, job.result) == (Status.SUCCEEDED, {"done": 5})
    assert delays == [pytest.approx(0.05 * 2**n) for n in range(faults)]
    assert system.logs.text.count("record job outcome failed") == faults
    assert "not recorded" not in system.logs.text


def test_a_stopping_runner_gives_up_recording_and_leaves_the_job_running(make_system):
    from jobtable.core.recording import RECORD_ATTEMPTS

    system = make_system()
    kind = system.kinds.register("count", count, payload=CountPayload)
    system.store.finish_faults += [StoreError("database unavailable")] * (RECORD_ATTEMPTS * 2)
    system.start()
    job_id = kind.enqueue(CountPayload(steps=5))
    system.clock.wait_for_sleepers(1)
    system.runner.stop_now()
    for _ in range(RECORD_ATTEMPTS - 1):
        (delay,) = system.clock.wait_for_sleepers(1)
        system.clock.advance(delay)
    assert system.runner.join(timeout=None)
    assert system.runner.get(job_id).status is Status.RUNNING
    assert len(system.store.finish_faults) == RECORD_ATTEMPTS
    assert system.logs.text.count("record job outcome failed") == RECORD_ATTEMPTS
    assert "job outcome not recorded; left running" in system.logs.text


def test_a_start_whose_first_sweep_fails_starts_nothing_and_may_be_retried(
    make_system, monkeypatch
):
    system = make_system()

    def locked():
        raise StoreError("database locked")

    monkeypatch.setattr(system.store.inner, "sight_runners", locked)
    with pytest.raises(StoreError):
        system.runner.start()
    assert system.store.claims == 0
    assert system.store.runners() == []  # its row and lock were let go
    monkeypatch.undo()
    system.start()
    job = system.wait_for(system.runner.builtins.noop.enqueue(NoopPayload()))
    assert job.status is Status.SUCCEEDED


def test_a_partial_result_the_database_refuses_is_retried_then_dropped_and_the_job_goes_on():
    from jobtable.adapters.faulty import FaultyStore
    from jobtable.adapters.memory import MemoryStore
    from jobtable.core.recording import PUBLISH_ATTEMPTS
    from tests.support.harness import JobSystem

    faulty = FaultyStore(MemoryStore(), rate=1.0, operations=["publish"])
    system = JobSystem(faulty)

    def publishes_then_counts(ctx: JobContext, payload: CountPayload) -> CountResult:
        ctx.publish(CountResult(done=0))
        return CountResult(done=payload.steps)

    kind = system.kinds.register("count", publishes_then_counts, payload=CountPayload)
    system.start()
    try:
        job_id = kind.enqueue(CountPayload(steps=3))
        for expected_delay in (0.05, 0.1)[: PUBLISH_ATTEMPTS - 1]:
            assert system.clock.wait_for_sleepers(1) == [pytest.approx(expected_delay)]
            system.clock.advance(expected_delay)
        job = system.wait_for(job_id)
    finally:
        system.stop()
    assert (job.status, job.result) == (Status.SUCCEEDED, {"done": 3})
    assert faulty.faults["publish"] == PUBLISH_ATTEMPTS
    assert f"partial result dropped job_id={job_id}" in system.logs.text


def test_a_faulty_store_refuses_unknown_operations_and_rates():
    from jobtable.adapters.faulty import FaultyStore
    from jobtable.adapters.memory import MemoryStore

    with pytest.raises(ValueError, match="unknown operations"):
        FaultyStore(MemoryStore(), rate=0.5, operations=["claim", "vacuum"])
    with pytest.raises(ValueError, match="rate"):
        FaultyStore(MemoryStore(), rate=1.5)


def test_a_job_from_elsewhere_noticed_while_the_worker_turns_idle_is_not_missed(make_system):
    """Another process's job, noticed after a worker's empty claim but before it sleeps."""
    from jobtable.core import NewJob

    system = make_system()
    kind = system.kinds.register("count", count, payload=CountPayload)
    store = system.store
    real_batch = store.run_batch
    armed = threading.Event()

    def claim_then_another_process_enqueues(batch, *, now, **arguments):
        done = real_batch(batch, now=now, **arguments)
        if batch.claim and not done.claimed and not done.held and armed.is_set():
            armed.clear()
            store.inner.create(NewJob(id="elsewhere", kind="count", payload="{}"), now=now)
            system.runner.notice_jobs_from_elsewhere()  # what the watcher does on the commit
        return done

    store.run_batch = claim_then_another_process_enqueues
    system.start()
    system.wait_for(kind.enqueue(CountPayload()))  # the worker is through one job, then idle
    armed.set()
    system.runner.notice_jobs_from_elsewhere()  # a first notice: the worker looks, finds none
    job = system.wait_for("elsewhere")
    assert job.status is Status.SUCCEEDED
