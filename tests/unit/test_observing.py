"""The runner's side of watching and operating (issue 11): readers hear of every change a
runner makes, lists page and clamp, an operator's retry runs the job again, retention
prunes through the runner. All on the in-memory store and a fake clock."""

from __future__ import annotations

import datetime
import threading

import pytest

from jobtable.core import JobContext, Status
from jobtable.core.changes import JobChanges
from jobtable.core.enqueue_options import InvalidOptionError
from jobtable.core.errors import Failure
from jobtable.core.jobs import MAX_PAGE, Retention, RetryOutcome
from tests.unit.kinds_for_tests import CountPayload, CountResult, count


def test_a_subscriber_hears_a_poke_made_between_its_read_and_its_wait():
    changes = JobChanges()
    with changes.subscribe("job-1") as subscription:
        changes.changed("job-2")
        assert not subscription.wait(0)  # another job's change
        changes.changed("job-1")
        assert subscription.wait(0)
        assert not subscription.wait(0)  # each poke is heard once
        changes.changed_somewhere()
        assert subscription.wait(0)
        assert changes.watched() == 1
    assert changes.watched() == 0


def test_closing_ends_every_wait_now_and_later():
    changes = JobChanges()
    subscription = changes.subscribe("job-1")
    woke = threading.Event()

    def reader() -> None:
        if subscription.wait(30):
            woke.set()

    thread = threading.Thread(target=reader)
    thread.start()
    changes.close()
    thread.join(10)
    assert woke.is_set()
    assert changes.subscribe("job-2").wait(0)  # subscribed after close: ends at once


def test_every_change_a_runner_makes_pokes_the_jobs_readers(make_system):
    system = make_system()
    gate = threading.Event()
    steps: list[int] = []

    def stepping(ctx: JobContext, payload: CountPayload) -> CountResult:
        for step in range(1, payload.steps + 1):
            ctx.publish(CountResult(done=step))
            steps.append(step)
            gate.wait(10)
            gate.clear()
        return CountResult(done=payload.steps)

    kind = system.kinds.register("stepping", stepping, payload=CountPayload)
    job_id = kind.enqueue(CountPayload(steps=2))
    with system.runner.changes.subscribe(job_id) as subscription:
        system.start()
        seen = []
        deadline = 10.0
        while True:
            assert subscription.wait(deadline), f"no change heard; saw {seen}"
            job = system.runner.get(job_id)
            if not seen or seen[-1] != (job.version, job.result):
                seen.append((job.version, job.result))
                gate.set()
            if job.status is Status.SUCCEEDED:
                break
    versions = [version for version, _ in seen]
    assert versions == sorted(versions)
    history = system.runner.events(job_id)
    assert [event.job.status for event in history.events][-1] is Status.SUCCEEDED
    assert [event.version for event in history.events] == list(range(len(history.events)))
    assert history.events[-1].version == seen[-1][0]


def test_lists_clamp_their_limit_and_refuse_an_unknown_status(make_system):
    system = make_system(workers=0)
    kind = system.kinds.register("count", count, payload=CountPayload)
    ids = [kind.enqueue(CountPayload()) for _ in range(3)]
    page = system.runner.list_jobs(limit=2)
    assert [job.id for job in page.jobs] == [ids[2], ids[1]]
    rest = system.runner.list_jobs(limit=2, after=page.next_after)
    assert [job.id for job in rest.jobs] == [ids[0]] and rest.next_after is None
    assert len(system.runner.list_jobs(limit=0).jobs) == 1
    assert system.runner.list_jobs(limit=10_000).next_after is None
    with pytest.raises(InvalidOptionError, match="status"):
        system.runner.list_jobs(status="scheduled")  # internal: not a public status
    assert MAX_PAGE == 500


def test_a_retried_job_runs_again_in_the_runner(make_system):
    system = make_system()
    attempts: list[int] = []

    def once_failing(ctx: JobContext, payload: CountPayload) -> CountResult:
        attempts.append(ctx.attempt)
        if ctx.attempt == 1:
            raise Failure("upstream_down")
        return CountResult(done=ctx.attempt)

    kind = system.kinds.register(
        "once_failing", once_failing, payload=CountPayload, failure_codes=["upstream_down"]
    )
    system.start()
    job_id = kind.enqueue(CountPayload())
    assert system.wait_for(job_id).error == "upstream_down"
    outcome, job = system.runner.retry(job_id)
    assert outcome is RetryOutcome.RETRIED and job.status in (Status.QUEUED, Status.RUNNING)
    assert system.wait_for(job_id).status is Status.SUCCEEDED
    assert attempts == [1, 2]
    refused, _ = system.runner.retry(job_id)
    assert refused is RetryOutcome.REFUSED
    assert system.runner.retry("no-such-job") is None


def test_the_runner_prunes_what_its_retention_no_longer_keeps(make_system):
    system = make_system(retention=Retention(succeeded=datetime.timedelta(hours=1), failed=None))
    kind = system.kinds.register("count", count, payload=CountPayload)
    job_id = kind.enqueue(CountPayload())
    system.runner.drain()
    assert system.runner.prune() == 0
    system.clock.advance(3601)
    assert system.runner.prune() == 1
    assert system.runner.get(job_id) is None
    keep_all = Retention(succeeded=None, failed=None)
    assert system.runner.prune(keep_all) == 0


def test_a_retention_given_for_one_round_is_not_kept_for_the_next(make_system):
    system = make_system()  # its own retention: the defaults (succeeded kept 7 days)
    kind = system.kinds.register("count", count, payload=CountPayload)
    job_id = kind.enqueue(CountPayload())
    system.runner.drain()
    system.clock.advance(3600)
    assert system.runner.prune() == 0
    assert system.runner.prune(Retention(succeeded=datetime.timedelta(days=30))) == 0
    assert system.runner.prune() == 0  # still 7 days
    assert system.runner.get(job_id) is not None
    assert system.runner.prune(Retention(succeeded=datetime.timedelta(minutes=1))) == 1


def test_idempotency_keys_go_even_when_every_job_is_kept_for_good(make_system):
    keep_all = Retention(succeeded=None, failed=None)
    system = make_system(retention=keep_all)
    assert system.runner.begin_idempotent("key-1", "hash") is None
    system.runner.keep_answer("key-1", 202, "{}")
    system.clock.advance(3 * 86400)
    assert "key-1" in system.store.inner._idempotency
    assert system.runner.prune() == 0
    assert "key-1" not in system.store.inner._idempotency  # deleted, not only stale
