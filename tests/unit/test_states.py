"""The operator's states (core/states.py): each job put in one shows it in its detail and its
list item, and a list filtered by a state holds exactly its jobs. Run again on SQLite and
PostgreSQL by tests/integration/test_jobs_on_*.py."""

from __future__ import annotations

import threading

import pytest

from jobtable.core import Failure, JobContext, Status
from jobtable.core.errors import InvalidOptionError, Snooze
from tests.support.states import states
from tests.unit.kinds_for_tests import CountPayload, CountResult, count


def test_every_state_is_told_apart_in_the_detail_the_list_and_its_filter(make_system):
    system = make_system(workers=3)
    release = threading.Event()

    def declines(ctx: JobContext, payload: CountPayload) -> CountResult:
        raise Failure("declined")

    def flaky(ctx: JobContext, payload: CountPayload) -> CountResult:
        raise Failure("flaky")

    def snoozes(ctx: JobContext, payload: CountPayload) -> CountResult:
        raise Snooze(600)

    def blocks(ctx: JobContext, payload: CountPayload) -> CountResult:
        while not release.is_set() and not ctx.wait(0.01):
            pass
        if ctx.stopping:
            raise RuntimeError("told to stop")
        return CountResult(done=1)

    kinds = system.kinds
    ok = kinds.register("ok", count, payload=CountPayload)
    bad = kinds.register("bad", declines, payload=CountPayload, failure_codes=["declined"])
    retry = kinds.register(
        "retry", flaky, payload=CountPayload, failure_codes=["flaky"], retry_on=["flaky"],
        max_attempts=3, backoff=(600, 600),
    )  # fmt: skip
    snooze = kinds.register("snooze", snoozes, payload=CountPayload)
    block = kinds.register("block", blocks, payload=CountPayload, timeout=3600)
    system.runner.pause_queue("held")
    system.start()
    jobs = {
        "succeeded": ok.enqueue(CountPayload()),
        "failed": bad.enqueue(CountPayload()),
        "retrying": retry.enqueue(CountPayload()),
        "snoozed": snooze.enqueue(CountPayload()),
        "scheduled": ok.enqueue(CountPayload(), delay=3600),
        "available": ok.enqueue(CountPayload(), queue="held"),
        "cancelled": ok.enqueue(CountPayload(), delay=3600),
        "running": block.enqueue(CountPayload()),
        "timed_out": block.enqueue(CountPayload(), timeout=5),
    }
    system.runner.cancel(jobs["cancelled"])
    for name in ("succeeded", "failed"):
        system.wait_for(jobs[name])
    for name in ("retrying", "snoozed"):
        system.wait_for(jobs[name], lambda job: job.status is Status.QUEUED and job.version >= 2)
    for name in ("running", "timed_out"):
        system.wait_for(jobs[name], lambda job: job.status is Status.RUNNING)
    system.clock.wait_for_sleepers(3)
    system.clock.advance(5)  # past timed_out's timeout, short of every other due time
    system.wait_for(jobs["timed_out"])
    expected = {name: name for name in jobs} | {"snoozed": "scheduled"}
    try:
        shown = {name: system.runner.detail(job_id).state for name, job_id in jobs.items()}
        assert shown == expected
        listed = {job.id: job.state for job in system.runner.list_jobs(limit=100).jobs}
        assert {name: listed[job_id] for name, job_id in jobs.items()} == expected
        for state in set(expected.values()):
            found = {job.id for job in system.runner.list_jobs(state=state, limit=100).jobs}
            assert found == {jobs[n] for n, s in expected.items() if s == state}, state
        queued = system.runner.list_jobs(status="queued", state="retrying", limit=100).jobs
        assert [job.id for job in queued] == [jobs["retrying"]]
        assert system.runner.list_jobs(status="failed", state="retrying").jobs == ()
        by_queue = {queue.name: queue.states for queue in system.runner.queues()}
        assert by_queue == {
            "default": states(scheduled=2, retrying=1, running=1, succeeded=1, failed=1,
                              cancelled=1, timed_out=1),
            "held": states(available=1),
        }  # fmt: skip
    finally:
        release.set()
    with pytest.raises(InvalidOptionError, match="state: must be one of scheduled, available"):
        system.runner.list_jobs(state="waiting")
