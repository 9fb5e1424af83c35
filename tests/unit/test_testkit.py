"""The test mode users get: JobTestKit.drain() runs everything in the calling thread."""

from __future__ import annotations

import datetime

import attrs
import pytest

from jobtable.adapters.testkit import JobTestKit
from jobtable.core import JobContext, Limit, NoopPayload, Rate, RunnerStateError, Status, demo
from tests.support.settling import interrupt
from tests.unit.kinds_for_tests import CountPayload, CountResult, count


def test_drain_runs_every_queued_job_and_returns_them_in_the_order_they_finished():
    kit = JobTestKit()
    countdowns = demo.register(kit.kinds)
    ids = [countdowns.enqueue(demo.CountdownPayload(seconds=s)) for s in (2, -1, 3600)]

    finished = kit.drain()

    assert [job.id for job in finished] == ids
    assert [(job.status, job.error) for job in finished] == [
        (Status.SUCCEEDED, None), (Status.FAILED, "negative_seconds"), (Status.SUCCEEDED, None),
    ]  # fmt: skip
    assert finished[2].to_public()["result"] == {"remaining": 0, "counted": 3600}
    assert kit.drain() == []


@attrs.frozen
class FanOut:
    children: int


def test_drain_also_runs_the_jobs_a_handler_enqueues():
    kit = JobTestKit()

    def child(ctx: JobContext, payload: CountPayload) -> CountResult:
        return CountResult(done=payload.steps)

    children = kit.kinds.register("child", child, payload=CountPayload)

    def parent(ctx: JobContext, payload: FanOut) -> CountResult:
        for n in range(payload.children):
            children.enqueue(CountPayload(steps=n))
        return CountResult(done=payload.children)

    parents = kit.kinds.register("parent", parent, payload=FanOut)
    parents.enqueue(FanOut(children=3))

    finished = kit.drain()
    assert [job.kind for job in finished] == ["parent", "child", "child", "child"]
    assert all(job.status is Status.SUCCEEDED for job in finished)


def test_enqueue_by_name_validates_like_the_handle():
    kit = JobTestKit()
    demo.register(kit.kinds)
    job_id = kit.runner.enqueue("countdown", {"seconds": 1})
    (job,) = kit.drain()
    assert job.id == job_id


def test_drain_is_refused_once_the_runner_has_started(make_system):
    system = make_system().start()
    with pytest.raises(RunnerStateError):
        system.runner.drain()


def test_the_builtin_noop_is_there():
    kit = JobTestKit()
    kit.runner.builtins.noop.enqueue(NoopPayload())
    assert kit.drain()[0].result == {"ok": True}


def test_a_users_test_advances_time_to_run_scheduled_and_retrying_jobs():
    from jobtable import Failure
    from jobtable.adapters.testkit import JobTestKit
    from tests.unit.kinds_for_tests import CountPayload, CountResult

    kit = JobTestKit()
    tries: list[int] = []

    def flaky(ctx, payload: CountPayload) -> CountResult:
        tries.append(ctx.attempt)
        if ctx.attempt == 1:
            raise Failure("busy")
        return CountResult(done=payload.steps)

    kind = kit.kinds.register(
        "flaky", flaky, payload=CountPayload, failure_codes=["busy"], retry_on=["busy"],
        max_attempts=2, backoff=(10, 10),
    )  # fmt: skip
    later = kind.enqueue(CountPayload(steps=3), delay=60)
    assert kit.drain() == []  # not due yet
    kit.advance(60)
    assert kit.drain() == []  # ran once, failed "busy", retries within 10 s
    assert kit.get(later).status.value == "queued"
    kit.advance(10)
    (job,) = kit.drain()
    assert (job.id, job.status.value, tries) == (later, "succeeded", [1, 2])


def test_the_demo_countdown_resumes_from_its_checkpoint():
    from jobtable.adapters.testkit import JobTestKit
    from jobtable.core import INTERRUPTED
    from jobtable.core.demo import CountdownPayload, register

    kit = JobTestKit()
    countdown = register(kit.kinds)
    job_id = countdown.enqueue(CountdownPayload(seconds=5))
    # An attempt that got to 2 seconds left, then its runner was stopped.
    first = kit.store.claim_next(runner_id="gone", now=kit.clock.now())
    kit.store.publish(first.claim, result='{"remaining":2}', now=kit.clock.now())
    assert interrupt(kit.store, first.claim, code=INTERRUPTED, now=kit.clock.now())
    started = kit.clock.monotonic()
    (job,) = kit.drain()
    assert (job.id, job.to_public()["result"]) == (job_id, {"remaining": 0, "counted": 5})
    assert kit.clock.monotonic() - started == 2.0  # counted the last two seconds only


@attrs.frozen
class Ping:
    n: int


@attrs.frozen
class Pong:
    def public(self) -> dict:
        return {}


def ping(ctx: JobContext, payload: Ping) -> Pong:
    return Pong()


def test_the_kit_honours_a_rate_on_its_fake_clock_and_a_limit_in_its_drain():
    kit = JobTestKit()
    kind = kit.kinds.register("ping", ping, payload=Ping, rate=Rate(2, per=60), limit=Limit(1))
    ids = [kind.enqueue(Ping(n)) for n in range(5)]
    assert [job.id for job in kit.drain()] == ids[:2]  # the rest held back by the rate
    assert kit.get(ids[2]).status is Status.QUEUED
    kit.advance(60)
    assert [job.id for job in kit.drain()] == ids[2:4]
    kit.advance(60)
    assert [job.id for job in kit.drain()] == ids[4:]


def test_advancing_the_clock_fires_each_schedules_ticks_on_the_way():
    kit = JobTestKit()
    seen: list[str] = []

    def hourly_report(ctx: JobContext, payload: CountPayload) -> CountResult:
        seen.append(kit.clock.now().isoformat())
        return CountResult(done=payload.steps)

    reports = kit.kinds.register("report", hourly_report, payload=CountPayload)
    kit.kinds.cron("0 * * * *", reports, CountPayload(steps=1), name="hourly")
    kit.kinds.every(1800, reports, CountPayload(steps=2), name="half-hourly")
    start = kit.clock.now()
    kit.advance(3 * 3600)  # every tick from the first advance on, each once
    finished = kit.drain()

    def ticks(period: int) -> int:  # ticks in [start, start + 3 h]: multiples of the period
        first = -(-int(start.timestamp()) // period) * period
        return len(range(first, int(start.timestamp()) + 3 * 3600 + 1, period))

    assert ticks(3600) >= 3 and ticks(1800) >= 6
    assert sorted(job.result["done"] for job in finished) == [1] * ticks(3600) + [2] * ticks(1800)
    assert len(seen) == len({job.id for job in finished}) == ticks(3600) + ticks(1800)
    assert kit.clock.now() == start + datetime.timedelta(hours=3)
    kit.advance(60)  # no tick passed: nothing new
    assert kit.drain() == []
    listed = {stored.name: stored for stored in kit.runner.schedules()}
    assert set(listed) == {"hourly", "half-hourly"}
    assert listed["hourly"].expression == "0 * * * *" and listed["hourly"].next_run is not None
    assert listed["half-hourly"].expression == "every 1800s"
    assert listed["hourly"].last_tick is not None and listed["hourly"].last_tick <= kit.clock.now()


def test_advancing_with_no_schedule_leaves_the_kinds_open_and_refuses_going_back():
    kit = JobTestKit()
    kit.advance(60)
    kit.kinds.register("late", count, payload=CountPayload)  # still allowed: no schedule
    with pytest.raises(ValueError, match="advance needs seconds >= 0"):
        kit.advance(-1)
