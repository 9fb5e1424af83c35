"""``async def`` handlers: run on the runner's event loop in async slots, through the same
lifecycle as sync handlers (retries, checkpoints, snoozes, timeouts, cancels, stops,
limits), bounded by ``async_workers``; a loop blocked by a handler is logged with its kind.

Run again on SQLite and PostgreSQL by tests/integration/test_jobs_on_*.py.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from jobtable.adapters.testkit import JobTestKit
from jobtable.core import Failure, JobContext, Limit, Status
from jobtable.core.codes import CANCELLED, INTERNAL_ERROR, INTERRUPTED, TIMED_OUT
from jobtable.core.errors import RunnerStateError, Snooze
from jobtable.core.jobs import CancelOutcome
from tests.unit.kinds_for_tests import CountPayload, CountResult, count

DEADLINE = 10.0


async def released(gate: threading.Event) -> None:
    """Await ``gate`` (set by the test's thread) without blocking the loop."""
    while not gate.is_set():
        await asyncio.sleep(0.002)


def wait_until(condition: Any, what: str) -> None:
    """Wait (on a condition the test's thread is told of) with a deadline."""
    changed = threading.Event()
    for _ in range(int(DEADLINE / 0.005)):
        if condition():
            return
        changed.wait(0.005)
    raise AssertionError(f"never happened: {what}")


def test_an_async_handler_runs_on_the_event_loop_and_publishes_without_blocking_it(make_system):
    system = make_system()
    gate = threading.Event()
    threads: list[str] = []

    async def doubles(ctx: JobContext, payload: CountPayload) -> CountResult:
        threads.append(threading.current_thread().name)
        await ctx.apublish(CountResult(done=payload.steps))
        await released(gate)
        return CountResult(done=payload.steps * 2)

    kind = system.kinds.register("doubles", doubles, payload=CountPayload)
    system.start()
    job_id = kind.enqueue(CountPayload(steps=21))
    partial = system.wait_for(job_id, lambda job: job is not None and job.result == {"done": 21})
    assert partial.status is Status.RUNNING  # the partial result is seen while it runs
    gate.set()
    job = system.wait_for(job_id)
    assert (job.status, job.result) == (Status.SUCCEEDED, {"done": 42})
    assert threads == ["jobtable-async-loop"]


def test_sync_and_async_kinds_run_side_by_side_each_in_its_own_slots(make_system):
    system = make_system(workers=1, async_workers=4)
    where: dict[str, str] = {}

    async def on_loop(ctx: JobContext, payload: CountPayload) -> CountResult:
        where[ctx.job_id] = threading.current_thread().name
        return CountResult(done=1)

    def in_thread(ctx: JobContext, payload: CountPayload) -> CountResult:
        where[ctx.job_id] = threading.current_thread().name
        return CountResult(done=2)

    on_loop_kind = system.kinds.register("on_loop", on_loop, payload=CountPayload)
    thread_kind = system.kinds.register("in_thread", in_thread, payload=CountPayload)
    system.start()
    async_ids = [on_loop_kind.enqueue(CountPayload()) for _ in range(10)]
    sync_ids = [thread_kind.enqueue(CountPayload()) for _ in range(10)]
    for job_id in async_ids + sync_ids:
        assert system.wait_for(job_id).status is Status.SUCCEEDED
    assert {where[job_id] for job_id in async_ids} == {"jobtable-async-loop"}
    assert {where[job_id] for job_id in sync_ids} == {"jobtable-worker-0"}


def test_async_workers_bound_the_async_handlers_running_at_once(make_system):
    system = make_system(workers=1, async_workers=3)
    gate = threading.Event()
    running: list[str] = []

    async def held(ctx: JobContext, payload: CountPayload) -> CountResult:
        running.append(ctx.job_id)
        await released(gate)
        return CountResult(done=1)

    kind = system.kinds.register("held", held, payload=CountPayload)
    ids = [kind.enqueue(CountPayload()) for _ in range(7)]
    system.start()
    wait_until(lambda: len(running) >= 3, "three async handlers running")
    statuses = [system.store.get(job_id).status for job_id in ids]
    assert statuses.count(Status.RUNNING) == 3
    assert statuses.count(Status.QUEUED) == 4
    gate.set()
    for job_id in ids:
        assert system.wait_for(job_id).status is Status.SUCCEEDED
    assert len(running) == 7


def test_a_limit_counts_async_handlers_as_it_counts_threads(make_system):
    system = make_system(workers=1, async_workers=8)
    gate = threading.Event()
    now_running: list[int] = [0]
    most: list[int] = [0]

    async def limited(ctx: JobContext, payload: CountPayload) -> CountResult:
        now_running[0] += 1  # one loop thread: no race
        most[0] = max(most[0], now_running[0])
        try:
            await released(gate)
        finally:
            now_running[0] -= 1
        return CountResult(done=1)

    kind = system.kinds.register("limited", limited, payload=CountPayload, limit=Limit(2))
    ids = [kind.enqueue(CountPayload()) for _ in range(6)]
    system.start()
    wait_until(lambda: most[0] >= 2, "two limited handlers running")
    assert [system.store.get(job_id).status for job_id in ids].count(Status.RUNNING) == 2
    gate.set()
    for job_id in ids:
        assert system.wait_for(job_id).status is Status.SUCCEEDED
    assert most[0] == 2


def test_a_retryable_code_runs_an_async_handler_again_from_its_checkpoint(make_system):
    system = make_system()
    seen: list[tuple[int, object]] = []

    async def flaky(ctx: JobContext, payload: CountPayload) -> CountResult:
        seen.append((ctx.attempt, ctx.checkpoint))
        start = (ctx.checkpoint or {"done": 0})["done"]
        await ctx.apublish(CountResult(done=start + 1))
        if ctx.attempt == 1:
            raise Failure("rate_limited")
        return CountResult(done=start + 2)

    kind = system.kinds.register(
        "flaky", flaky, payload=CountPayload, failure_codes=["rate_limited"],
        retry_on=["rate_limited"], max_attempts=3, backoff=(4.0, 60.0),
    )  # fmt: skip
    system.start()
    job_id = kind.enqueue(CountPayload())
    system.wait_for(job_id, lambda job: job.result == {"done": 1} and job.status is Status.QUEUED)
    assert system.clock.wait_for_sleepers(1) == [4.0]
    system.clock.advance(4.0)
    job = system.wait_for(job_id)
    assert (job.status, job.result) == (Status.SUCCEEDED, {"done": 3})
    assert seen == [(1, None), (2, {"done": 1})]


def test_a_snooze_from_an_async_handler_runs_it_later_without_an_attempt(make_system):
    system = make_system()
    attempts: list[int] = []

    async def not_yet(ctx: JobContext, payload: CountPayload) -> CountResult:
        attempts.append(ctx.attempt)
        if len(attempts) == 1:
            raise Snooze(10)
        return CountResult(done=1)

    kind = system.kinds.register("later", not_yet, payload=CountPayload)
    system.start()
    job_id = kind.enqueue(CountPayload())
    assert system.clock.wait_for_sleepers(1) == [10.0]
    system.clock.advance(10)
    assert system.wait_for(job_id).status is Status.SUCCEEDED
    assert attempts == [1, 1]


def test_a_timeout_cancels_the_async_handlers_task_and_its_finally_runs(make_system):
    system = make_system()
    started = threading.Event()
    cleaned = threading.Event()

    async def forever(ctx: JobContext, payload: CountPayload) -> CountResult:
        started.set()
        try:
            await asyncio.Event().wait()  # never set: only a cancel ends it
        finally:
            cleaned.set()
        return CountResult(done=1)

    kind = system.kinds.register("forever", forever, payload=CountPayload, timeout=5)
    system.start()
    job_id = kind.enqueue(CountPayload())
    assert started.wait(DEADLINE)
    assert system.clock.wait_for_sleepers(1) == [5.0]
    system.clock.advance(5)
    job = system.wait_for(job_id)
    assert (job.status, job.error) == (Status.FAILED, TIMED_OUT)
    assert cleaned.is_set()


def test_a_cancel_cancels_a_running_async_handlers_task(make_system):
    system = make_system()
    started = threading.Event()
    cleaned = threading.Event()

    async def long(ctx: JobContext, payload: CountPayload) -> CountResult:
        await ctx.apublish(CountResult(done=1))
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            cleaned.set()
        return CountResult(done=2)

    kind = system.kinds.register("long", long, payload=CountPayload, max_attempts=5)
    system.start()
    job_id = kind.enqueue(CountPayload())
    assert started.wait(DEADLINE)
    outcome, job = system.runner.cancel(job_id)
    assert (outcome, job.status) == (CancelOutcome.REQUESTED, Status.RUNNING)
    job = system.wait_for(job_id)
    assert (job.status, job.error, job.result) == (Status.FAILED, CANCELLED, {"done": 1})
    assert cleaned.is_set()


def test_the_second_phase_of_a_stop_cancels_async_handlers_and_their_jobs_go_back(make_system):
    system = make_system()
    started = threading.Event()
    cleaned = threading.Event()

    async def long(ctx: JobContext, payload: CountPayload) -> CountResult:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            cleaned.set()
        return CountResult(done=1)

    kind = system.kinds.register("long", long, payload=CountPayload)
    system.start()
    job_id = kind.enqueue(CountPayload())
    assert started.wait(DEADLINE)
    system.runner.stop()  # the first phase lets it run
    assert system.store.get(job_id).status is Status.RUNNING
    assert not cleaned.is_set()
    system.stop()  # the second phase tells it to stop: its task is cancelled
    assert cleaned.is_set()
    job = system.store.get(job_id)
    assert (job.status, job.error) == (Status.FAILED, INTERRUPTED)


def test_await_stop_sleeps_on_the_runners_clock_and_a_stop_ends_it(make_system):
    system = make_system()
    slept: list[bool] = []

    async def naps(ctx: JobContext, payload: CountPayload) -> CountResult:
        slept.append(await ctx.await_stop(30))
        return CountResult(done=len(slept))

    kind = system.kinds.register("naps", naps, payload=CountPayload)
    system.start()
    job_id = kind.enqueue(CountPayload())
    assert system.clock.wait_for_sleepers(1) == [30.0]
    system.clock.advance(30)
    assert system.wait_for(job_id).status is Status.SUCCEEDED
    assert slept == [False]


def test_a_coroutine_returned_by_a_sync_handler_fails_its_job_clearly(make_system):
    system = make_system()

    async def body() -> CountResult:
        return CountResult(done=1)

    kind = system.kinds.register(
        "sneaky", lambda ctx, payload: body(), payload=CountPayload, result=CountResult
    )
    system.start()
    job = system.wait_for(kind.enqueue(CountPayload()))
    assert (job.status, job.error) == (Status.FAILED, INTERNAL_ERROR)
    assert "the handler returned a coroutine: register it as an async def" in system.logs.text
    assert "was never awaited" not in system.logs.text


def test_a_handler_blocking_the_event_loop_is_logged_with_its_kind(make_system):
    system = make_system()
    blocking = threading.Event()
    unblock = threading.Event()

    async def blocks(ctx: JobContext, payload: CountPayload) -> CountResult:
        blocking.set()
        unblock.wait(DEADLINE)  # a blocking call on the loop: what the watchdog catches
        return CountResult(done=1)

    kind = system.kinds.register("blocks", blocks, payload=CountPayload)
    system.runner._event_loop._block_after = 0.05
    system.start()
    job_id = kind.enqueue(CountPayload())
    assert blocking.wait(DEADLINE)
    wait_until(lambda: "is blocking the event loop" in system.logs.text, "the block logged")
    unblock.set()
    assert system.wait_for(job_id).status is Status.SUCCEEDED
    line = next(line for line in system.logs.lines() if "is blocking the event loop" in line)
    assert f"kind=blocks job_id={job_id}" in line


def test_a_runner_with_async_kinds_and_no_async_workers_refuses_to_start(make_system):
    system = make_system(async_workers=0)

    async def on_loop(ctx: JobContext, payload: CountPayload) -> CountResult:
        return CountResult(done=1)

    system.kinds.register("on_loop", on_loop, payload=CountPayload)
    with pytest.raises(RunnerStateError, match="async_workers is 0"):
        system.runner.start()


def test_a_callable_whose_call_is_async_runs_as_an_async_handler(make_system):
    system = make_system()

    class Handler:
        async def __call__(self, ctx: JobContext, payload: CountPayload) -> CountResult:
            await asyncio.sleep(0)
            return CountResult(done=threading.current_thread().name == "jobtable-async-loop")

    kind = system.kinds.register("object", Handler(), payload=CountPayload, result=CountResult)
    system.kinds.register("count", count, payload=CountPayload)
    system.start()
    assert system.wait_for(kind.enqueue(CountPayload())).result == {"done": 1}


def test_the_test_kit_drains_async_handlers_on_its_fake_clock():
    kit = JobTestKit()

    async def naps(ctx: JobContext, payload: CountPayload) -> CountResult:
        if await ctx.await_stop(3600):  # the kit's clock jumps ahead: costs nothing
            raise RuntimeError("told to stop")
        await ctx.apublish(CountResult(done=1))
        return CountResult(done=payload.steps)

    kind = kit.kinds.register("naps", naps, payload=CountPayload)
    job_id = kind.enqueue(CountPayload(steps=3))
    (job,) = kit.drain()
    assert (job.id, job.status, job.result) == (job_id, Status.SUCCEEDED, {"done": 3})
