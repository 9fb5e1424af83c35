"""The embedding Client (core/client.py) on the memory store and a fake clock: enqueue and
read decoded results, one detail, wait for a finished job, follow each version."""

from __future__ import annotations

import threading

import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.memory import MemoryStore
from jobtable.core import JobContext, JobDetail, JobNotFoundError, Runner, Status
from jobtable.core.client import Client
from tests.support.threads import run_in_threads
from tests.unit.kinds_for_tests import CountPayload, CountResult, count


def stepping(ctx: JobContext, payload: CountPayload) -> CountResult:
    """Publishes each step but the last, then returns it."""
    for step in range(1, payload.steps):
        ctx.publish(CountResult(done=step))
    return CountResult(done=payload.steps)


def client_and_runner(store: MemoryStore, clock: FakeClock) -> tuple[Client, Runner]:
    """A client on its own and a runner of the same kinds over one store, sharing one hub of
    changes as the runners of one process do (another process's would hear the database)."""
    runner = Runner(store, clock, workers=1, check_interval=None, sweep_interval=None)
    client = Client(store, clock, changes=runner.changes)
    for kinds in (client.kinds, runner.kinds):
        kinds.register("count", count, payload=CountPayload)
        kinds.register("stepping", stepping, payload=CountPayload, result=CountResult)
    return client, runner


def test_a_client_enqueues_and_reads_the_result_as_its_decoded_value():
    store, clock = MemoryStore(), FakeClock(auto_advance=True)
    client, runner = client_and_runner(store, clock)
    job_id = client.enqueue("count", {"steps": 3})
    assert client.get(job_id).status is Status.QUEUED

    (ran,) = runner.drain()

    job = client.get(job_id)
    assert (ran.id, job.status, job.result) == (job_id, Status.SUCCEEDED, {"done": 3})
    assert job.to_public()["result"] == {"done": 3}
    assert client.list_jobs().jobs[0].result == {"done": 3}
    assert client.events(job_id).last.job.result == {"done": 3}


def test_a_detail_is_one_object_whose_job_is_what_get_gives():
    store, clock = MemoryStore(), FakeClock(auto_advance=True)
    client, runner = client_and_runner(store, clock)
    waiting = client.enqueue("count", {"steps": 1})
    detail = client.detail(waiting)
    assert isinstance(detail, JobDetail)
    assert detail.waiting == ("no live runner serves kind count",)

    done = client.enqueue("stepping", {"steps": 3})
    runner.drain()
    detail = client.detail(done)
    job = client.get(done)
    assert (detail.job, detail.job.version) == (job, job.version)
    assert job.version == 4  # claimed, two publishes, succeeded
    assert detail.waiting == ()
    assert [record.outcome for record in detail.attempts] == ["succeeded"]
    assert client.detail("no-such-job") is None


def test_wait_returns_the_job_once_a_runner_has_finished_it():
    store, clock = MemoryStore(), FakeClock()
    client, runner = client_and_runner(store, clock)
    job_id = client.enqueue("stepping", {"steps": 2})
    runner.start()
    try:
        job = client.wait(job_id, timeout=30)
    finally:
        runner.stop()
        assert runner.join(timeout=10)
    assert (job.status, job.result) == (Status.SUCCEEDED, {"done": 2})
    assert runner.wait(job_id, timeout=0) == job  # the runner's is its client's


def test_wait_raises_timeout_error_once_its_time_has_passed_on_the_clock():
    store, clock = MemoryStore(), FakeClock()
    client, _ = client_and_runner(store, clock)
    job_id = client.enqueue("count", {})  # no runner runs it
    raised: list[BaseException] = []

    def wait() -> None:
        try:
            client.wait(job_id, timeout=5)
        except TimeoutError as error:
            raised.append(error)

    waiter = threading.Thread(target=wait)
    waiter.start()
    clock.wait_for_sleepers(1)
    assert raised == []  # not before its time
    clock.advance(5)
    waiter.join(timeout=10)
    assert not waiter.is_alive()
    assert [str(error) for error in raised] == [f"job {job_id} has not finished within 5 s"]
    with pytest.raises(TimeoutError):
        client.wait(job_id, timeout=0)


def test_wait_and_follow_of_an_unknown_job_raise_job_not_found():
    client = Client(MemoryStore(), FakeClock())
    with pytest.raises(JobNotFoundError) as missing:
        client.wait("0190a1b2-0000-7000-8000-000000000000", timeout=1)
    assert isinstance(missing.value, LookupError)
    with pytest.raises(JobNotFoundError):
        next(client.follow("<not an id>"))
    with pytest.raises(ValueError, match="timeout"):
        client.wait("x", timeout=-1)


def test_follow_yields_every_version_until_the_job_finishes():
    store, clock = MemoryStore(), FakeClock()
    client, runner = client_and_runner(store, clock)
    job_id = client.enqueue("stepping", {"steps": 3})
    seen = []

    def follow() -> None:
        seen.extend(client.follow(job_id))

    runner.start()
    try:
        run_in_threads([follow], within=30)
    finally:
        runner.stop()
        assert runner.join(timeout=10)
    assert [(job.version, job.status, job.result) for job in seen] == [
        (0, Status.QUEUED, None),
        (1, Status.RUNNING, None),
        (2, Status.RUNNING, {"done": 1}),
        (3, Status.RUNNING, {"done": 2}),
        (4, Status.SUCCEEDED, {"done": 3}),
    ]


def test_a_cancel_through_the_runners_client_stops_a_handler_running_here():
    store, clock = MemoryStore(), FakeClock()
    runner = Runner(store, clock, workers=1, check_interval=None, sweep_interval=None)
    started, told = threading.Event(), threading.Event()

    def patient(ctx: JobContext, payload: CountPayload) -> CountResult:
        started.set()
        if ctx.wait(3600):  # the fake clock never gets there: only a stop ends it
            told.set()
        return CountResult(done=0)

    runner.kinds.register("patient", patient, payload=CountPayload)
    job_id = runner.client.enqueue("patient", {})
    runner.start()
    try:
        assert started.wait(10)
        outcome, _ = runner.client.cancel(job_id)
        assert told.wait(10)  # the client told the pool of its process at once
        job = runner.client.wait(job_id, timeout=30)
    finally:
        runner.stop()
        assert runner.join(timeout=10)
    assert (outcome.value, job.status) == ("requested", Status.SUCCEEDED)  # it returned first
