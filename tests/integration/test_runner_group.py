"""``--queues``: the runners one process makes, what each claims, and their waking one another.

On SQLite a process does not see its own commits through the watcher, so a
job one runner of the process stores must wake the runner that serves its
queue directly: these tests run without any watcher, so only that can wake it.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from contextlib import ExitStack

import attrs
import pytest

from jobtable.adapters.system_clock import SystemClock
from jobtable.core import JobContext
from jobtable.core.enqueue_options import EnqueueOptions
from jobtable.entrypoints.config import QueueServing, parse_queues
from jobtable.entrypoints.runner_group import RunnerGroup, RunnerPlan, describe, plan_runners
from tests.support.observed import ObservedStore
from tests.support.stores import open_store


@pytest.mark.parametrize(
    ("value", "serving"),
    [
        (None, QueueServing()),
        ("", QueueServing()),
        ("mail,reports", QueueServing(shared=frozenset({"mail", "reports"}))),
        ("mail=4, reports=1", QueueServing(shared=frozenset(),
                                           dedicated=(("mail", 4), ("reports", 1)))),
        ("bulk,mail=2,digest", QueueServing(shared=frozenset({"bulk", "digest"}),
                                            dedicated=(("mail", 2),))),
    ],
)  # fmt: skip
def test_queues_are_read_as_shared_names_and_names_with_their_own_workers(value, serving):
    assert parse_queues(value) == serving


def plan(queues: set[str] | None, workers: int) -> RunnerPlan:
    return RunnerPlan(queues=None if queues is None else frozenset(queues), workers=workers)


@pytest.mark.parametrize(
    ("value", "serves_api", "plans", "described"),
    [
        (None, False, [plan(None, 3)], "all"),
        ("mail,reports", False, [plan({"mail", "reports"}, 3)], "mail+reports:3"),
        ("mail=4,reports=1", False, [plan({"mail"}, 4), plan({"reports"}, 1)],
         "mail:4,reports:1"),
        ("bulk,mail=2", False, [plan({"bulk"}, 3), plan({"mail"}, 2)], "bulk:3,mail:2"),
        # serve with dedicated queues only: an insert-only runner in front takes the API's jobs.
        ("mail=4", True, [plan(None, 0), plan({"mail"}, 4)], "mail:4"),
        ("bulk,mail=2", True, [plan({"bulk"}, 3), plan({"mail"}, 2)], "bulk:3,mail:2"),
    ],
)  # fmt: skip
def test_each_dedicated_queue_gets_a_runner_and_plain_names_share_one(
    value, serves_api, plans, described
):
    made = plan_runners(parse_queues(value), 3, serves_api=serves_api)
    assert made == plans
    assert describe(made) == described


def test_serve_with_no_workers_claims_nothing():
    made = plan_runners(parse_queues(None), 0, serves_api=True)
    assert (made, describe(made)) == ([plan(None, 0)], "none")


@attrs.frozen
class Nothing:
    pass


@attrs.frozen
class Where:
    queue: str

    def public(self):
        return {"queue": self.queue}


def register(kinds):
    def note(ctx: JobContext, payload: Nothing) -> Where:
        return Where(queue="?")

    def hold(ctx: JobContext, payload: Nothing) -> Where:
        ctx.publish(Where(queue="holding"))  # its handler runs (a claim alone may be given back)
        while not ctx.wait(60):
            pass
        return Where(queue="told")  # returns once told to stop: recorded as a result

    kinds.register("note", note, payload=Nothing)
    kinds.register("hold", hold, payload=Nothing)


@pytest.fixture(params=["sqlite", "postgres"])
def store(request, tmp_path) -> Iterator[ObservedStore]:
    with ExitStack() as stack:
        opened = ObservedStore(open_store(request.param, tmp_path, stack))
        yield opened
        opened.close()


@pytest.fixture
def group(store) -> Iterator[RunnerGroup]:
    made = RunnerGroup(store, SystemClock(), plan_runners(
        parse_queues("mail=1,reports=2"), 2, serves_api=True))  # fmt: skip
    for runner in made.runners:
        register(runner.kinds)
    made.start()
    yield made
    made.stop_now()
    assert made.join(timeout=15)


def claimed_by(store, job_id: str) -> str:
    store.wait_until(lambda: store.get(job_id).status.value == "succeeded", within=15)
    return store.detail(job_id).attempts[-1].runner_id


def test_jobs_stored_through_the_api_runner_run_on_the_runner_of_their_queue(store, group):
    api, mail, reports = group.runners
    assert [record.info.id for record in store.runners()] == [mail.id, reports.id]
    for _ in range(3):
        from_mail = api.enqueue("note", {}, EnqueueOptions(queue="mail"))
        from_reports = api.enqueue("note", {}, EnqueueOptions(queue="reports"))
        assert claimed_by(store, from_mail) == mail.id
        assert claimed_by(store, from_reports) == reports.id


def test_a_queue_no_runner_of_the_process_serves_waits(store, group):
    api = group.first
    waiting = api.enqueue("note", {}, EnqueueOptions(queue="elsewhere"))
    served = api.enqueue("note", {}, EnqueueOptions(queue="mail"))
    claimed_by(store, served)
    assert store.get(waiting).status.value == "queued"
    assert "no live runner of kind note serves queue elsewhere" in api.detail(waiting).waiting


def test_a_scheduled_job_wakes_the_runner_of_its_queue_when_due(store, group):
    api, _, reports = group.runners
    due = SystemClock().now() + datetime.timedelta(seconds=0.3)
    job_id = api.enqueue("note", {}, EnqueueOptions(queue="reports", run_at=due))
    assert claimed_by(store, job_id) == reports.id


def test_resuming_a_queue_wakes_the_runner_that_serves_it(store, group):
    api, mail, _ = group.runners
    api.pause_queue("mail")
    job_id = api.enqueue("note", {}, EnqueueOptions(queue="mail"))
    assert "queue mail is paused" in api.detail(job_id).waiting
    api.resume_queue("mail")
    assert claimed_by(store, job_id) == mail.id


def test_a_retry_through_the_api_runner_wakes_the_runner_of_its_queue(store, group):
    api, mail, _ = group.runners
    api.pause_queue("mail")
    job_id = api.enqueue("note", {}, EnqueueOptions(queue="mail"))
    api.cancel(job_id)  # failed "cancelled" before anything could run it
    api.resume_queue("mail")
    assert store.get(job_id).error == "cancelled"
    api.retry(job_id)
    assert claimed_by(store, job_id) == mail.id


def test_a_group_stops_and_joins_every_runner_and_lets_go_of_their_rows(store):
    made = RunnerGroup(store, SystemClock(), plan_runners(
        parse_queues("a,b=1,c=1"), 1, serves_api=False))  # fmt: skip
    made.start()
    assert len(store.runners()) == 3
    made.stop()
    assert made.join(timeout=15)
    assert store.runners() == []


def test_a_group_stops_in_two_phases_across_all_its_runners(store, group):
    api = group.first
    held = [api.enqueue("hold", {}, EnqueueOptions(queue=queue)) for queue in ("mail", "reports")]
    store.wait_until(
        lambda: all(store.get(job_id).result == {"queue": "holding"} for job_id in held),
        within=15,
    )
    group.stop()  # the first phase: no new claims, running handlers go on
    assert not group.join(timeout=0.2)
    assert [store.get(job_id).status.value for job_id in held] == ["running", "running"]
    group.stop_now()  # the second: every runner's handlers are told
    assert group.join(timeout=15)
    assert [store.get(job_id).result for job_id in held] == [{"queue": "told"}] * 2
    assert store.runners() == []


def test_a_runner_that_cannot_start_stops_those_that_did(store):
    made = RunnerGroup(store, SystemClock(), plan_runners(
        parse_queues("a=1,b=1"), 1, serves_api=False))  # fmt: skip
    made.runners[1].start()  # a second start of it will be refused
    with pytest.raises(Exception, match="already started"):
        made.start()
    first = made.runners[0]
    assert first.live_workers == 0
    made.runners[1].stop()
    assert made.runners[1].join(timeout=15)
    store.wait_until(lambda: store.runners() == [], within=15)
