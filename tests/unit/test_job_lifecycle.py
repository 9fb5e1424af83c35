"""The runner's side of the job lifecycle: retries with backoff and checkpoints, snoozes,
schedules, priorities, queues, cancels, timeouts and handlers that ignore their stop."""

from __future__ import annotations

import datetime
import threading

import pytest

from jobtable.core import Failure, JobContext, Status
from jobtable.core.codes import CANCELLED, TIMED_OUT
from jobtable.core.errors import Snooze, StoreUnavailableError
from jobtable.core.jobs import CancelOutcome
from tests.unit.kinds_for_tests import CountPayload, CountResult, count


def test_a_retryable_code_runs_again_after_its_backoff_resuming_from_its_checkpoint(make_system):
    system = make_system()
    seen: list[tuple[int, object]] = []

    def flaky(ctx: JobContext, payload: CountPayload) -> CountResult:
        seen.append((ctx.attempt, ctx.checkpoint))
        start = (ctx.checkpoint or {"done": 0})["done"]
        ctx.publish(CountResult(done=start + 1))
        if ctx.attempt == 1:
            raise Failure("rate_limited")
        return CountResult(done=start + 2)

    kind = system.kinds.register(
        "flaky", flaky, payload=CountPayload, failure_codes=["rate_limited"],
        retry_on=["rate_limited"], max_attempts=3, backoff=(4.0, 60.0),
    )  # fmt: skip
    system.start()
    job_id = kind.enqueue(CountPayload())
    waiting = system.wait_for(
        job_id, lambda job: job.result == {"done": 1} and job.status is Status.QUEUED
    )
    assert waiting.error is None  # a retrying job is queued, its partial result visible
    assert system.clock.wait_for_sleepers(1) == [4.0]  # the scheduler sleeps until it is due
    system.clock.advance(4.0)
    job = system.wait_for(job_id)
    assert (job.status, job.result) == (Status.SUCCEEDED, {"done": 3})
    assert seen == [(1, None), (2, {"done": 1})]
    assert "job attempt failed; retrying" in system.logs.text


def test_a_declared_code_not_listed_is_final(make_system):
    system = make_system()

    def refuses(ctx: JobContext, payload: CountPayload) -> CountResult:
        raise Failure("card_declined")

    kind = system.kinds.register(
        "pay", refuses, payload=CountPayload, result=CountResult,
        failure_codes=["card_declined"], max_attempts=5,
    )  # fmt: skip
    system.start()
    job = system.wait_for(kind.enqueue(CountPayload()))
    assert (job.status, job.error) == (Status.FAILED, "card_declined")
    assert system.store.row(job.id)["attempt"] == 1


def test_a_snooze_runs_the_job_later_without_using_an_attempt(make_system):
    system = make_system()
    attempts: list[int] = []

    def not_yet(ctx: JobContext, payload: CountPayload) -> CountResult:
        attempts.append(ctx.attempt)
        if len(attempts) == 1:
            raise Snooze(10)
        return CountResult(done=1)

    kind = system.kinds.register("later", not_yet, payload=CountPayload)  # one attempt only
    system.start()
    job_id = kind.enqueue(CountPayload())
    assert system.clock.wait_for_sleepers(1) == [10.0]
    system.clock.advance(10)
    assert system.wait_for(job_id).status is Status.SUCCEEDED
    assert attempts == [1, 1]


def test_a_scheduled_job_runs_once_due_and_not_before(make_system):
    system = make_system()
    ran = threading.Event()

    def mark(ctx: JobContext, payload: CountPayload) -> CountResult:
        ran.set()
        return CountResult(done=1)

    kind = system.kinds.register("mark", mark, payload=CountPayload)
    system.start()
    # Under 15 s in all: on PostgreSQL a runner whose fake clock jumps past its liveness
    # lease (no check thread here to confirm it) would stop claiming.
    due = system.clock.now() + datetime.timedelta(seconds=9)
    job_id = kind.enqueue(CountPayload(), run_at=due)
    assert system.clock.wait_for_sleepers(1) == [9.0]
    system.clock.advance(8)
    assert system.clock.wait_for_sleepers(1) == [1.0]
    assert not ran.is_set()
    assert system.store.get(job_id).status is Status.QUEUED
    system.clock.advance(1)
    assert system.wait_for(job_id).status is Status.SUCCEEDED


def test_an_earlier_job_from_elsewhere_shortens_the_wait(make_system):
    system = make_system()
    kind = system.kinds.register("count", count, payload=CountPayload)
    system.start()
    kind.enqueue(CountPayload(), delay=600)
    assert system.clock.wait_for_sleepers(1) == [600.0]
    other = make_system()  # another process on the same database, never started
    other.kinds.register("count", count, payload=CountPayload)
    soon = other.runner.enqueue("count", {"steps": 2}, _options(delay=5))
    system.runner.notice_jobs_from_elsewhere()  # what the watcher does on its commit
    system.clock.wait_for_sleeping(lambda sleeping: sleeping == [5.0])
    system.clock.advance(5)
    assert system.wait_for(soon).status is Status.SUCCEEDED


def _options(**given):
    from jobtable.core.enqueue_options import EnqueueOptions

    return EnqueueOptions(**given)


def test_one_worker_runs_jobs_by_priority_then_age(make_system):
    system = make_system()
    order: list[int] = []

    def note(ctx: JobContext, payload: CountPayload) -> CountResult:
        order.append(payload.steps)
        return CountResult(done=payload.steps)

    kind = system.kinds.register("note", note, payload=CountPayload, priority=5)
    ids = [kind.enqueue(CountPayload(steps=1)), kind.enqueue(CountPayload(steps=2), priority=0),
           kind.enqueue(CountPayload(steps=3)), kind.enqueue(CountPayload(steps=4), priority=9)]  # fmt: skip
    system.start()
    for job_id in ids:
        system.wait_for(job_id)
    assert order == [2, 1, 3, 4]


def test_a_runner_serves_only_its_queues(make_system):
    mail_only = make_system(queues={"mail"})
    kind = mail_only.kinds.register("count", count, payload=CountPayload, queue="reports")
    reports_job = kind.enqueue(CountPayload())
    mail_job = kind.enqueue(CountPayload(), queue="mail")
    mail_only.start()
    assert mail_only.wait_for(mail_job).status is Status.SUCCEEDED
    assert mail_only.store.get(reports_job).status is Status.QUEUED
    assert mail_only.runner.runners()[0].info.queues == ("mail",)


def test_an_insert_only_runner_enqueues_and_claims_nothing(make_system):
    web = make_system(workers=0)
    kind = web.kinds.register("count", count, payload=CountPayload)
    web.start()
    job_id = kind.enqueue(CountPayload())
    assert web.store.get(job_id).status is Status.QUEUED
    assert web.runner.runners() == []  # it is no runner of jobs: "why" must not count it
    assert web.store.claims == 0
    web.runner.stop()
    assert web.runner.join(timeout=5)


# -- cancel ------------------------------------------------------------------


def test_cancelling_a_queued_job_fails_it_at_once(make_system):
    system = make_system()
    kind = system.kinds.register("count", count, payload=CountPayload)
    job_id = kind.enqueue(CountPayload())
    outcome, job = system.runner.cancel(job_id)
    assert (outcome, job.status, job.error) == (CancelOutcome.CANCELLED, Status.FAILED, CANCELLED)
    assert system.runner.cancel("no-such-job") is None


def test_cancelling_a_running_job_stops_its_handler_and_records_cancelled(make_system):
    system = make_system()
    started = threading.Event()

    def long(ctx: JobContext, payload: CountPayload) -> CountResult:
        ctx.publish(CountResult(done=1))
        started.set()
        ctx.wait(3600)
        raise RuntimeError("stopped early")

    kind = system.kinds.register("long", long, payload=CountPayload, max_attempts=5)
    system.start()
    job_id = kind.enqueue(CountPayload())
    assert started.wait(10)
    outcome, job = system.runner.cancel(job_id)
    assert (outcome, job.status) == (CancelOutcome.REQUESTED, Status.RUNNING)
    job = system.wait_for(job_id)
    assert (job.status, job.error, job.result) == (Status.FAILED, CANCELLED, {"done": 1})
    assert system.runner.cancel(job_id)[0] is CancelOutcome.CANCELLED  # again: same answer


def test_a_cancel_from_another_process_reaches_the_handler_on_the_next_sweep(make_system):
    from jobtable.core.liveness import SWEEP_INTERVAL

    worker = make_system(sweep_interval=SWEEP_INTERVAL)
    started = threading.Event()

    def long(ctx: JobContext, payload: CountPayload) -> CountResult:
        started.set()
        return CountResult(done=0 if ctx.wait(3600) else 1)  # returns a result when stopped

    kind = worker.kinds.register("long", long, payload=CountPayload)
    worker.start()
    job_id = kind.enqueue(CountPayload())
    assert started.wait(10)
    elsewhere = make_system()
    elsewhere.kinds.register("long", long, payload=CountPayload)
    assert elsewhere.runner.cancel(job_id)[0] is CancelOutcome.REQUESTED
    worker.clock.wait_for_sleepers(1)
    # Busy, it sweeps at its busy pace (even where an idle runner sweeps slower): the next
    # sweep is at most an interval away, wherever its wait started.
    worker.clock.advance(SWEEP_INTERVAL)
    job = worker.wait_for(job_id)
    # It returned a result once told to stop: a result returned first wins over the cancel.
    assert (job.status, job.result) == (Status.SUCCEEDED, {"done": 0})


def test_a_finished_job_is_not_cancelled(make_system):
    system = make_system()
    kind = system.kinds.register("count", count, payload=CountPayload)
    job_id = kind.enqueue(CountPayload())
    system.runner.drain()
    outcome, job = system.runner.cancel(job_id)
    assert (outcome, job.status) == (CancelOutcome.REFUSED, Status.SUCCEEDED)


# -- timeouts and handlers left behind ----------------------------------------------


def test_a_job_past_its_timeout_is_told_to_stop_and_fails_timed_out(make_system):
    system = make_system()
    started = threading.Event()

    def slow(ctx: JobContext, payload: CountPayload) -> CountResult:
        started.set()
        if ctx.wait(3600):
            raise RuntimeError("told to stop")
        return CountResult(done=1)

    kind = system.kinds.register("slow", slow, payload=CountPayload, timeout=5)
    system.start()
    job_id = kind.enqueue(CountPayload())
    assert started.wait(10)
    assert sorted(system.clock.wait_for_sleepers(2)) == [5.0, 3600.0]
    system.clock.advance(5)
    job = system.wait_for(job_id)
    assert (job.status, job.error) == (Status.FAILED, TIMED_OUT)
    assert "job ran past its timeout" in system.logs.text


def test_a_timed_out_job_retries_while_attempts_remain(make_system):
    system = make_system()
    attempts: list[int] = []

    def slow_once(ctx: JobContext, payload: CountPayload) -> CountResult:
        attempts.append(ctx.attempt)
        if ctx.attempt == 1 and ctx.wait(3600):
            raise RuntimeError("told to stop")
        return CountResult(done=ctx.attempt)

    kind = system.kinds.register(
        "slow", slow_once, payload=CountPayload, timeout=5, max_attempts=2, backoff=(1, 1)
    )
    system.start()
    job_id = kind.enqueue(CountPayload(), timeout=3)  # the job's own timeout wins
    assert sorted(system.clock.wait_for_sleepers(2)) == [3.0, 3600.0]
    system.clock.advance(3)
    system.wait_for(job_id, lambda job: job.status is Status.QUEUED)
    system.clock.wait_for_sleepers(1)
    system.clock.advance(1)
    job = system.wait_for(job_id)
    assert (job.status, job.result, attempts) == (Status.SUCCEEDED, {"done": 2}, [1, 2])


def test_a_handler_that_ignores_its_stop_is_left_behind_and_its_worker_replaced(make_system):
    system = make_system()
    release = threading.Event()
    started = threading.Event()

    def stubborn(ctx: JobContext, payload: CountPayload) -> CountResult:
        started.set()
        release.wait(30)  # ignores ctx entirely
        return CountResult(done=99)

    slow = system.kinds.register("stubborn", stubborn, payload=CountPayload, timeout=5)
    quick = system.kinds.register("count", count, payload=CountPayload)
    system.start()
    stuck = slow.enqueue(CountPayload())
    assert started.wait(10)
    behind_it = quick.enqueue(CountPayload(steps=7))
    assert system.clock.wait_for_sleepers(1) == [5.0]
    system.clock.advance(5)  # told to stop: it does not
    assert system.clock.wait_for_sleepers(1) == [2.0]
    system.clock.advance(2)  # the grace is over: recorded, and a new worker takes its place
    assert (system.wait_for(stuck).status, system.wait_for(stuck).error) == (
        Status.FAILED, TIMED_OUT,
    )  # fmt: skip
    assert system.wait_for(behind_it).status is Status.SUCCEEDED  # the pool kept its size
    assert "handler ignored its stop" in system.logs.text
    release.set()  # its late result is refused by the fence
    system.runner.stop()
    assert system.runner.join(timeout=10)
    assert system.store.get(stuck).result is None
    assert system.runner.live_workers == 0


def test_past_the_cap_of_handlers_left_behind_the_runner_claims_with_fewer_workers(make_system):
    system = make_system(left_behind_cap=1)
    release = threading.Event()
    started = threading.Semaphore(0)

    def stubborn(ctx: JobContext, payload: CountPayload) -> CountResult:
        started.release()
        release.wait(30)
        return CountResult(done=1)

    slow = system.kinds.register("stubborn", stubborn, payload=CountPayload, timeout=1)
    quick = system.kinds.register("count", count, payload=CountPayload, priority=9)
    system.start()
    first, second = slow.enqueue(CountPayload()), slow.enqueue(CountPayload())
    waiting = quick.enqueue(CountPayload())
    for _ in range(2):  # each: timeout, then grace, then left behind
        assert started.acquire(timeout=10)
        system.clock.wait_for_sleepers(1)
        system.clock.advance(1)
        system.clock.wait_for_sleepers(1)
        system.clock.advance(2)
    system.wait_for(second)
    assert "too many handlers left behind" in system.logs.text
    assert system.store.get(waiting).status is Status.QUEUED  # no worker to run it
    release.set()  # both return: a slot is filled again
    assert system.wait_for(waiting).status is Status.SUCCEEDED
    assert {system.store.get(first).error, system.store.get(second).error} == {TIMED_OUT}


@pytest.mark.parametrize(
    "bad",
    [
        {"priority": 10},
        {"queue": "no spaces"},
        {"delay": -1},
        {"run_at": datetime.datetime(2127, 1, 1, tzinfo=datetime.UTC)},  # over a century ahead
    ],
)
def test_bad_enqueue_options_store_nothing(make_system, bad):
    from jobtable.core.enqueue_options import InvalidOptionError

    system = make_system()
    kind = system.kinds.register("count", count, payload=CountPayload)
    with pytest.raises(InvalidOptionError):
        kind.enqueue(CountPayload(), **bad)
    assert system.store.queues() == []


def test_a_naive_run_at_is_refused():
    from jobtable.core.enqueue_options import EnqueueOptions, InvalidOptionError

    with pytest.raises(InvalidOptionError, match="timezone-aware"):
        EnqueueOptions(run_at=datetime.datetime(2026, 1, 1)).check()


@pytest.mark.parametrize(
    "given",
    [
        {"delay": 1e12},
        {"delay": 10**400},
        {"timeout": 1e30},
        {"run_at": datetime.datetime.fromisoformat("9999-12-31T23:00:00-05:00")},
    ],
)
def test_options_past_any_datetime_are_refused_not_crashed_on(make_system, given):
    from jobtable.core.enqueue_options import InvalidOptionError

    system = make_system()
    kind = system.kinds.register("count", count, payload=CountPayload)
    with pytest.raises(InvalidOptionError):
        kind.enqueue(CountPayload(), **given)


def test_a_snooze_past_a_century_is_refused():
    with pytest.raises(ValueError, match="century"):
        Snooze(1e30)


def test_timeouts_are_kept_after_stop_so_join_returns(make_system):
    system = make_system()
    started = threading.Event()

    def polls(ctx: JobContext, payload: CountPayload) -> CountResult:
        started.set()
        while not ctx.wait(0.5):  # polls, as long work does, until told to stop
            pass
        raise RuntimeError("told to stop")

    kind = system.kinds.register("polls", polls, payload=CountPayload, timeout=2)
    system.start()
    job_id = kind.enqueue(CountPayload())
    assert started.wait(10)
    system.runner.stop()  # phase one: the running job goes on, its timeout still counts
    for _ in range(4):
        system.clock.wait_for_sleepers(1)
        system.clock.advance(0.5)
    job = system.wait_for(job_id)
    assert (job.status, job.error) == (Status.FAILED, TIMED_OUT)
    assert system.runner.join(timeout=10)


def test_a_start_that_failed_recording_its_schedules_can_be_tried_again(make_system):
    from jobtable.core import StoreUnavailableError

    system = make_system()
    kind = system.kinds.register("count", count, payload=CountPayload)
    system.kinds.every(3600, kind, CountPayload())
    real = system.store.inner.record_schedule
    failures = [StoreUnavailableError("database unavailable")]

    def fails_once(name, *, now):
        if failures:
            raise failures.pop()
        return real(name, now=now)

    system.store.inner.record_schedule = fails_once
    with pytest.raises(StoreUnavailableError):
        system.start()
    assert system.runner.runners() == []  # nothing registered by the failed start
    system.start()
    assert system.wait_for(kind.enqueue(CountPayload(steps=2))).status is Status.SUCCEEDED


def test_a_job_requeued_by_the_runner_past_the_cap_wakes_an_idle_worker(make_system):
    system = make_system(workers=2, left_behind_cap=0)
    release = threading.Event()
    started = threading.Event()

    def stubborn_once(ctx: JobContext, payload: CountPayload) -> CountResult:
        if ctx.attempt == 1:
            started.set()
            release.wait(30)  # ignores its stop
        return CountResult(done=ctx.attempt)

    kind = system.kinds.register(
        "stubborn", stubborn_once, payload=CountPayload, timeout=1, max_attempts=2,
        backoff=(0, 0),
    )  # fmt: skip
    system.start()
    job_id = kind.enqueue(CountPayload())
    assert started.wait(10)
    system.clock.wait_for_sleepers(1)
    system.clock.advance(1)  # timed out: told to stop
    system.clock.wait_for_sleepers(1)
    system.clock.advance(2)  # left behind, its slot not refilled (cap 0), due again at once
    try:
        job = system.wait_for(
            job_id, lambda job: job is not None and job.status is Status.SUCCEEDED
        )
        assert job.result == {"done": 2}  # the other, idle worker ran the retry
    finally:
        release.set()


class _PromotionReplyLost:
    """A store whose first promotion commits, then raises: the reply was lost."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.lost = threading.Event()

    def promote_due(self, *, now):
        promoted = self.inner.promote_due(now=now)
        if promoted and not self.lost.is_set():
            self.lost.set()
            raise StoreUnavailableError("connection lost")
        return promoted

    def __getattr__(self, name):
        return getattr(self.inner, name)


def test_a_promotion_whose_reply_was_lost_still_gets_its_jobs_run(shared_store):
    from tests.support.harness import JobSystem

    store = _PromotionReplyLost(shared_store)
    system = JobSystem(store)
    kind = system.kinds.register("count", count, payload=CountPayload)
    system.start()
    try:
        job_id = kind.enqueue(CountPayload(steps=1), delay=5)
        system.clock.wait_for_sleepers(1)
        system.clock.advance(5)
        assert store.lost.wait(10)
        assert system.wait_for(job_id).status is Status.SUCCEEDED
    finally:
        system.stop()


class PartnerDown(Exception):
    """An exception of the application's own, named by its class path in the detail."""


def test_each_failed_attempt_names_its_exception_class_and_never_its_message(make_system):
    system = make_system()

    def fails(ctx: JobContext, payload: CountPayload) -> CountResult:
        if ctx.attempt == 1:
            raise KeyError("card 4242 4242 4242 4242")
        if ctx.attempt == 2:
            raise PartnerDown("token=s3cret")
        raise Failure("declined")

    kind = system.kinds.register(
        "fails", fails, payload=CountPayload, failure_codes=["declined"],
        max_attempts=2, backoff=(1.0, 1.0),
    )  # fmt: skip
    system.start()
    job_id = kind.enqueue(CountPayload())
    system.wait_for(job_id, lambda job: job.status is Status.QUEUED and job.result is None)
    system.clock.wait_for_sleepers(1)
    system.clock.advance(1.0)
    assert system.wait_for(job_id).status is Status.FAILED
    ended = [(a.attempt, a.outcome, a.error_class) for a in system.runner.detail(job_id).attempts]
    assert ended == [
        (1, "internal_error", "builtins.KeyError"),
        (2, "internal_error", f"{__name__}.PartnerDown"),
    ]
    # An operator's retry logs the last attempt with its class; a declared code has none.
    system.runner.retry(job_id)
    assert system.wait_for(job_id, lambda job: job.error == "declined").status is Status.FAILED
    attempts = system.runner.detail(job_id).attempts
    assert [(a.outcome, a.error_class) for a in attempts] == [
        ("internal_error", "builtins.KeyError"),
        ("internal_error", f"{__name__}.PartnerDown"),
        ("declined", None),
    ]
    assert "4242" not in repr(attempts) and "s3cret" not in repr(attempts)
