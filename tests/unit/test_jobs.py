"""The reference's jobs tests, ported: the runner's behaviour on a store and a fake clock.

tests/integration/test_jobs_on_sqlite.py runs this same module on SQLite.
"""

from __future__ import annotations

import json
import threading

import pytest

from jobtable.core import (
    INTERNAL_ERROR,
    INTERRUPTED,
    Failure,
    JobContext,
    NewJob,
    NoopPayload,
    Runner,
    Status,
)
from jobtable.core.errors import StoreError
from tests.support.harness import as_datetime, finished
from tests.unit.kinds_for_tests import (
    SENTINEL_SECRET,
    BadResult,
    CountPayload,
    CountResult,
    LeakyResult,
    NotJsonResult,
    count,
)


def test_a_job_succeeds_with_its_public_result(make_system):
    system = make_system(workers=2)
    kind = system.kinds.register("count", count, payload=CountPayload)
    system.start()

    job_id = kind.enqueue(CountPayload(steps=3))
    job = system.wait_for(job_id)

    assert (job.id, job.kind, job.status, job.error) == (job_id, "count", Status.SUCCEEDED, None)
    assert job.result == {"done": 3}  # the decoded value, not its JSON text
    row = system.store.row(job_id)
    assert row["payload"] == '{"steps":3}'
    for column in ("started_at", "finished_at", "created_at", "updated_at"):
        assert as_datetime(row[column]).tzinfo is not None, column


@pytest.mark.parametrize(
    "raise_failure",
    [
        pytest.param(lambda: Failure("no_regulars"), id="raised"),
        pytest.param(lambda: _wrapped(Failure("no_regulars")), id="wrapped with from"),
    ],
)
def test_a_job_fails_with_its_declared_failure_code(make_system, raise_failure):
    system = make_system()

    def suggest(ctx: JobContext, payload: CountPayload) -> CountResult:
        raise raise_failure()

    kind = system.kinds.register(
        "suggest", suggest, payload=CountPayload, failure_codes=["no_regulars"]
    )
    system.start()

    job = system.wait_for(kind.enqueue(CountPayload()))
    assert (job.status, job.error, job.result) == (Status.FAILED, "no_regulars", None)
    assert system.store.row(job.id)["error"] == "no_regulars"


def _wrapped(failure: Failure) -> Exception:
    try:
        raise failure
    except Failure as cause:
        wrapper = RuntimeError(f"call with key {SENTINEL_SECRET}")
        wrapper.__cause__ = cause
        return wrapper


def test_an_undeclared_failure_code_is_stored_as_internal_error(make_system):
    system = make_system()

    def suggest(ctx: JobContext, payload: CountPayload) -> CountResult:
        raise Failure("not_declared")

    kind = system.kinds.register(
        "suggest", suggest, payload=CountPayload, failure_codes=["no_regulars"]
    )
    system.start()

    job = system.wait_for(kind.enqueue(CountPayload()))
    assert (job.status, job.error) == (Status.FAILED, INTERNAL_ERROR)


def test_secrets_are_never_stored_served_or_logged(make_system):
    system = make_system()

    def typed(ctx: JobContext, payload: CountPayload) -> LeakyResult:
        ctx.publish(LeakyResult(dinners=["Tacos"]))
        return LeakyResult(dinners=["Tacos"])

    def leaky_error(ctx: JobContext, payload: CountPayload) -> LeakyResult:
        raise RuntimeError(f"GET https://api.example.com/v1?key={SENTINEL_SECRET}: 401")

    def leaky_failure(ctx: JobContext, payload: CountPayload) -> LeakyResult:
        raise Failure(SENTINEL_SECRET)

    def wrapped_failure(ctx: JobContext, payload: CountPayload) -> LeakyResult:
        raise RuntimeError(f"call with key {SENTINEL_SECRET}") from Failure("quota_exceeded")

    def bad_encoding(ctx: JobContext, payload: CountPayload) -> BadResult:
        return BadResult()

    def bad_partial(ctx: JobContext, payload: CountPayload) -> LeakyResult:
        ctx.publish(BadResult())
        return LeakyResult(dinners=[])

    def not_json(ctx: JobContext, payload: CountPayload) -> NotJsonResult:
        return NotJsonResult()

    register = system.kinds.register
    cases = [
        (register("typed", typed, payload=CountPayload), Status.SUCCEEDED, {"dinners": ["Tacos"]}, None),
        (register("leaky-error", leaky_error, payload=CountPayload), Status.FAILED, None, INTERNAL_ERROR),
        (
            register("leaky-failure", leaky_failure, payload=CountPayload, failure_codes=["quota_exceeded"]),
            Status.FAILED, None, INTERNAL_ERROR,
        ),
        (
            register("failure", wrapped_failure, payload=CountPayload, failure_codes=["quota_exceeded"]),
            Status.FAILED, None, "quota_exceeded",
        ),
        (register("bad-encoding", bad_encoding, payload=CountPayload), Status.FAILED, None, INTERNAL_ERROR),
        (register("bad-partial", bad_partial, payload=CountPayload), Status.FAILED, None, INTERNAL_ERROR),
        (register("not-json", not_json, payload=CountPayload), Status.FAILED, None, INTERNAL_ERROR),
    ]  # fmt: skip
    system.start()

    for kind, status, result, error in cases:
        job = system.wait_for(kind.enqueue(CountPayload()))
        public = job.to_public()
        assert (public["status"], public["result"], public["error"]) == (status, result, error)
        assert SENTINEL_SECRET not in json.dumps(public), kind.name
        assert SENTINEL_SECRET not in repr(system.store.row(job.id)), kind.name
    system.stop()
    assert SENTINEL_SECRET not in system.logs.text
    assert "code=internal_error" in system.logs.text
    assert "exception_type=RuntimeError" in system.logs.text


def test_partial_results_are_visible_while_the_job_runs(make_system):
    system = make_system()
    release = threading.Semaphore(0)

    def draft(ctx: JobContext, payload: CountPayload) -> CountResult:
        for step in range(1, payload.steps):
            ctx.publish(CountResult(done=step))
            release.acquire()
        return CountResult(done=payload.steps)

    kind = system.kinds.register("draft", draft, payload=CountPayload)
    system.start()

    job_id = kind.enqueue(CountPayload(steps=3))
    for step in (1, 2):
        job = system.wait_for(job_id, lambda j, s=step: j.result == {"done": s})
        assert (job.status, job.error) == (Status.RUNNING, None)
        release.release()
    job = system.wait_for(job_id)
    assert (job.status, job.result) == (Status.SUCCEEDED, {"done": 3})


def test_a_restart_fails_interrupted_jobs_and_runs_queued_ones(make_system):
    first = make_system(workers=1)
    started = threading.Event()

    def slow(ctx: JobContext, payload: CountPayload) -> CountResult:
        ctx.publish(CountResult(done=1))
        started.set()
        while not ctx.wait(3600):
            pass
        raise RuntimeError("stopped")

    kind = first.kinds.register("slow", slow, payload=CountPayload)
    first.start()
    interrupted = kind.enqueue(CountPayload())
    assert started.wait(10)
    waiting = kind.enqueue(CountPayload())  # the only worker is busy
    first.stop()  # both phases: the handler is told to stop and raises

    # The stopping runner settles what its handler gave up: one attempt, so it fails,
    # keeping its partial result (a runner that died is settled the same way by
    # others: tests/unit/test_liveness.py).
    job = first.store.get(interrupted)
    assert (job.status, job.error, job.result) == (Status.FAILED, INTERRUPTED, {"done": 1})
    assert first.store.get(waiting).status is Status.QUEUED

    second = make_system(workers=1)
    second.kinds.register(
        "slow", lambda ctx, p: CountResult(done=9), payload=CountPayload, result=CountResult
    )
    second.start()
    assert second.wait_for(waiting).status is Status.SUCCEEDED


def test_the_worker_pool_is_bounded(make_system):
    system = make_system(workers=2)
    lock = threading.Condition()
    running = peak = 0
    release = threading.Event()

    def busy(ctx: JobContext, payload: CountPayload) -> CountResult:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
            lock.notify_all()
        release.wait(30)
        with lock:
            running -= 1
        return CountResult(done=0)

    kind = system.kinds.register("busy", busy, payload=CountPayload)
    system.start()
    ids = [kind.enqueue(CountPayload()) for _ in range(5)]
    with lock:
        assert lock.wait_for(lambda: running == 2, 10), "two workers never ran at once"
    release.set()
    for job_id in ids:
        assert system.wait_for(job_id).status is Status.SUCCEEDED
    assert peak == 2


def test_a_job_of_a_kind_a_runner_does_not_run_waits_for_one_that_does(make_system):
    """Round 2 (DESIGN.md): a runner claims only the kinds it registered; the reference failed
    such a job ``unknown_kind``, which a deploy that adds a kind to one process at a time hits."""
    old = make_system()
    retired = old.kinds.register("retired", count, payload=CountPayload)
    job_id = retired.enqueue(CountPayload(steps=2))  # this runner never starts

    other = make_system()
    other.kinds.register("count", count, payload=CountPayload)
    other.start()
    other.store.wait_until(lambda: other.store.claims >= 1)  # it looked, and took nothing
    assert other.runner.get(job_id).status is Status.QUEUED

    able = make_system()
    able.kinds.register("retired", count, payload=CountPayload)
    job = able.start().wait_for(job_id)
    assert (job.status, job.result) == (Status.SUCCEEDED, {"done": 2})


def test_get_of_an_unknown_id_is_none(make_system):
    system = make_system()
    assert system.runner.get("01900000-0000-7000-8000-000000000000") is None


def test_the_noop_kind_succeeds_with_ok_true(make_system):
    system = make_system().start()
    job = system.wait_for(system.runner.builtins.noop.enqueue(NoopPayload()))
    assert (job.kind, job.status, job.result, job.error) == (
        "noop", Status.SUCCEEDED, {"ok": True}, None,
    )  # fmt: skip


def test_a_claim_error_is_retried_and_finds_a_job_queued_without_a_wake(make_system):
    system = make_system()
    system.kinds.register("count", count, payload=CountPayload)
    # Stored by another process or before a restart: no wake reaches this runner.
    system.store.create(
        NewJob(id="01900000-0000-7000-8000-000000000001", kind="count", payload='{"steps":3}'),
        now=system.clock.now(),
    )
    driver_error = RuntimeError(f"database is locked {SENTINEL_SECRET}")
    from_adapter = StoreError("database locked")
    from_adapter.__cause__ = driver_error
    system.store.claim_faults += [from_adapter, driver_error, StoreError(SENTINEL_SECRET)]
    system.start()

    for delay in (0.05, 0.1, 0.2):
        assert system.clock.wait_for_sleepers(1) == [pytest.approx(delay)]
        system.clock.advance(delay)
    job = system.wait_for("01900000-0000-7000-8000-000000000001")
    assert (job.status, job.result) == (Status.SUCCEEDED, {"done": 3})
    assert system.store.claims >= 2
    assert "claim job failed; retrying" in system.logs.text
    assert SENTINEL_SECRET not in system.logs.text


def test_a_payload_that_does_not_decode_fails_the_job_internal_error(make_system):
    system = make_system()
    system.kinds.register("count", count, payload=CountPayload)
    system.store.create(
        NewJob(id="01900000-0000-7000-8000-000000000002", kind="count", payload='{"stepz":3}'),
        now=system.clock.now(),
    )
    system.start()
    job = system.wait_for("01900000-0000-7000-8000-000000000002")
    assert (job.status, job.error) == (Status.FAILED, INTERNAL_ERROR)
    assert "reason=payload does not decode" in system.logs.text


def test_runner_refuses_bad_config(shared_store):
    from jobtable.adapters.fake_clock import FakeClock

    for workers in (-1, 1.5, True, None):  # 0 makes an insert-only runner
        with pytest.raises(ValueError, match="worker"):
            Runner(shared_store, FakeClock(), workers=workers)
    with pytest.raises(ValueError, match="store"):
        Runner(None, FakeClock())
    with pytest.raises(ValueError, match="clock"):
        Runner(shared_store, None)


def test_a_second_start_is_refused(make_system):
    from jobtable.core import RunnerStateError

    system = make_system().start()
    with pytest.raises(RunnerStateError):
        system.runner.start()


def test_jobs_run_oldest_first(make_system):
    system = make_system(workers=1)
    order: list[int] = []

    def record(ctx: JobContext, payload: CountPayload) -> CountResult:
        order.append(payload.steps)
        return CountResult(done=payload.steps)

    kind = system.kinds.register("record", record, payload=CountPayload)
    ids = [kind.enqueue(CountPayload(steps=n)) for n in range(8)]
    system.start()
    for job_id in ids:
        system.wait_for(job_id)
    assert order == list(range(8))
    assert ids == sorted(ids)


def test_finished_helper_ignores_running_jobs():
    assert not finished(None)
