"""What every JobStore keeps for watching and operating (issue 11): each job's history of
changes and its version, lists by status/kind/queue with keyset pages, an operator's
retry, retention that deletes in batches and keeps what exactly-once needs, leases, and
the cheap counts metrics read."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from jobtable.core import NewJob, Status
from jobtable.core.codes import CANCELLED
from jobtable.core.jobs import EVENTS_KEPT, JobFilter, RetryOutcome
from jobtable.core.outcome import Fail, RunAgain, Succeed
from jobtable.core.retry import RetryPolicy
from tests.contract.test_lifecycle_contract import RUNNER, T0, add, claim, later


def shown(events) -> list[tuple[int, str, Any, str | None]]:
    return [(e.version, e.job.status.value, e.job.result, e.job.error) for e in events]


# -- history and versions ------------------------------------------------------


def test_every_visible_change_is_numbered_in_order(store):
    job_id = add(store)
    assert store.get(job_id).version == 0
    running = claim(store)
    store.publish(running.claim, result='{"done": 1}', now=later(1))
    store.publish(running.claim, result='{"done": 1}', now=later(2))  # no change: no event
    store.publish(running.claim, result='{"done": 2}', now=later(3))
    store.record(running.claim, Succeed(result='{"done": 3}'), now=later(4))
    history = store.events(job_id, after=None)
    assert history.reset is None
    assert shown(history.events) == [
        (0, "queued", None, None),
        (1, "running", None, None),
        (2, "running", {"done": 1}, None),
        (3, "running", {"done": 2}, None),
        (4, "succeeded", {"done": 3}, None),
    ]
    assert store.get(job_id).version == 4
    assert shown(store.events(job_id, after=2).events) == [
        (3, "running", {"done": 2}, None),
        (4, "succeeded", {"done": 3}, None),
    ]
    assert store.events(job_id, after=4).events == ()
    ahead = store.events(job_id, after=9)  # a version it never had
    assert (ahead.events, ahead.reset.version, ahead.reset.job.status) == ((), 4, Status.SUCCEEDED)
    assert store.events("no-such-job", after=None) is None


def test_a_scheduled_job_falling_due_is_no_change_but_a_retry_is(store):
    job_id = add(store, run_at=later(10), max_attempts=2)
    store.promote_due(now=later(11))
    assert store.get(job_id).version == 0  # scheduled and queued both show as queued
    running = claim(store, now=later(11))
    store.record(running.claim, RunAgain(run_at=later(20), code="flaky"), now=later(12))
    assert [e.job.status for e in store.events(job_id, after=None).events] == [
        Status.QUEUED, Status.RUNNING, Status.QUEUED,
    ]  # fmt: skip


def test_history_keeps_the_last_changes_and_a_reader_behind_it_gets_a_reset(store):
    job_id = add(store)
    running = claim(store)
    for step in range(EVENTS_KEPT + 5):
        store.publish(running.claim, result=str(step), now=later(1))
    version = EVENTS_KEPT + 6  # the claim, then each publish
    assert store.get(job_id).version == version
    behind = store.events(job_id, after=3)
    assert behind.events == ()
    assert behind.reset.version == version
    assert behind.reset.job.result == EVENTS_KEPT + 4
    from_start = store.events(job_id, after=None)
    assert from_start.reset is not None and from_start.events == ()
    kept = store.events(job_id, after=version - EVENTS_KEPT)
    assert kept.reset is None
    assert len(kept.events) == EVENTS_KEPT
    assert kept.events[-1].version == version


def test_a_cancel_and_a_failure_are_changes(store):
    queued = add(store)
    store.cancel(queued, now=later(1))
    assert shown(store.events(queued, after=0).events) == [(1, "failed", None, CANCELLED)]


# -- lists -------------------------------------------------------------------------


def test_lists_are_newest_first_filtered_and_paged(store):
    ids = {}
    for number in range(6):
        kind = "mail" if number % 2 else "count"
        queue = "bulk" if number >= 3 else "default"
        ids[number] = add(store, kind, queue=queue, now=later(number))
    scheduled = add(store, "count", run_at=later(100), now=later(7))
    running = claim(store, now=later(8))  # the oldest due: number 0
    assert running.id == ids[0]
    every = store.list_jobs(JobFilter(), limit=50, after=None)
    assert [job.id for job in every] == [scheduled, *(ids[n] for n in range(5, -1, -1))]
    assert every[0].status is Status.QUEUED  # scheduled shows as queued
    queued = store.list_jobs(JobFilter(status=Status.QUEUED), limit=50, after=None)
    assert [job.id for job in queued] == [scheduled, *(ids[n] for n in range(5, 0, -1))]
    mail = store.list_jobs(JobFilter(kind="mail"), limit=50, after=None)
    assert [job.id for job in mail] == [ids[5], ids[3], ids[1]]
    bulk_count = store.list_jobs(JobFilter(kind="count", queue="bulk"), limit=50, after=None)
    assert [job.id for job in bulk_count] == [ids[4]]
    running_only = store.list_jobs(JobFilter(status=Status.RUNNING), limit=50, after=None)
    assert [(job.id, job.version) for job in running_only] == [(ids[0], 1)]
    first = store.list_jobs(JobFilter(status=Status.QUEUED), limit=2, after=None)
    second = store.list_jobs(JobFilter(status=Status.QUEUED), limit=2, after=first[-1].id)
    third = store.list_jobs(JobFilter(status=Status.QUEUED), limit=2, after=second[-1].id)
    paged = [job.id for job in (*first, *second, *third)]
    assert paged == [job.id for job in queued]
    assert store.list_jobs(JobFilter(queue="nowhere"), limit=5, after=None) == []


# -- an operator's retry ------------------------------------------------------------


def test_a_failed_job_is_retried_with_one_more_attempt_and_its_history_kept(store):
    job_id = add(store, max_attempts=1)
    running = claim(store)
    store.publish(running.claim, result='{"half": true}', now=later(1))
    store.record(running.claim, Fail(code="card_declined"), now=later(2))
    assert store.retry(job_id, now=later(3)) is RetryOutcome.RETRIED
    job = store.get(job_id)
    assert (job.status, job.error, job.result) == (Status.QUEUED, None, {"half": True})
    again = claim(store, now=later(4))
    assert again.id == job_id and again.claim.attempt == 2
    assert again.checkpoint == '{"half": true}'
    store.record(again.claim, Fail(code="card_declined"), now=later(5))
    detail = store.detail(job_id)
    assert [(a.attempt, a.outcome) for a in detail.attempts] == [
        (1, "card_declined"), (2, "card_declined"),
    ]  # fmt: skip
    assert detail.max_attempts == 2


def test_retry_keeps_a_budget_that_was_left_and_takes_cancelled_jobs(store):
    job_id = add(store, retry=RetryPolicy(max_attempts=3), max_attempts=3)
    store.cancel(job_id, now=later(1))
    assert store.retry(job_id, now=later(2)) is RetryOutcome.RETRIED
    assert store.detail(job_id).max_attempts == 3
    assert store.detail(job_id).attempts == ()  # it never ran
    assert claim(store, now=later(3)).id == job_id


def test_only_a_failed_job_is_retried(store):
    queued = add(store)
    assert store.retry(queued, now=later(1)) is RetryOutcome.REFUSED
    running = claim(store)
    assert store.retry(queued, now=later(1)) is RetryOutcome.REFUSED
    store.record(running.claim, Succeed(result="1"), now=later(2))
    assert store.retry(queued, now=later(3)) is RetryOutcome.REFUSED
    assert store.get(queued).status is Status.SUCCEEDED
    assert store.retry("no-such-job", now=later(3)) is None


# -- retention -------------------------------------------------------------------


def finish(store, job_id: str, *, at: datetime.datetime, fail: bool = False) -> None:
    running = store.claim_next(runner_id=RUNNER, now=at, kinds={"count"})
    assert running.id == job_id
    if fail:
        store.record(running.claim, Fail(code="boom"), now=at)
    else:
        store.record(running.claim, Succeed(result="1"), now=at)


def test_prune_deletes_finished_jobs_past_their_status_cutoff_in_batches(store):
    old = [add(store, now=later(n)) for n in range(3)]
    for job_id in old:
        finish(store, job_id, at=later(10))
    old_failed = add(store, now=later(11))
    finish(store, old_failed, at=later(12), fail=True)
    recent = add(store, now=later(20))
    finish(store, recent, at=later(100))
    waiting = add(store, now=later(21))
    cutoffs = {"succeeded": later(50), "failed": later(50)}
    assert store.prune(cutoffs, now=later(200), limit=2).jobs == 2
    assert store.prune(cutoffs, now=later(200), limit=2).jobs == 2
    assert store.prune(cutoffs, now=later(200), limit=2).jobs == 0
    assert [store.get(job_id) for job_id in (*old, old_failed)] == [None] * 4
    assert store.events(old[0], after=None) is None
    assert store.get(recent).status is Status.SUCCEEDED
    assert store.get(waiting).status is Status.QUEUED


def test_prune_keeps_a_status_without_a_cutoff(store):
    failed = add(store)
    finish(store, failed, at=later(1), fail=True)
    assert store.prune({"succeeded": later(100)}, now=later(200), limit=10).jobs == 0
    assert store.get(failed).status is Status.FAILED


@pytest.mark.parametrize("ending", ["succeeded", "failed"])
def test_prune_keeps_a_row_whose_unique_key_an_enqueue_could_make_again(store, ending):
    tick = add(store, unique_key="schedule:x@1", unique_while_active=False, key_until=later(60))
    forever = add(store, unique_key="old-tick", unique_while_active=False)
    finish(store, tick, at=later(1), fail=ending == "failed")
    finish(store, forever, at=later(2), fail=ending == "failed")
    assert store.get(tick).status is Status(ending)
    cutoffs = {ending: later(30)}
    assert store.prune(cutoffs, now=later(40), limit=10).jobs == 0  # the tick's key still counts
    again = store.create(
        NewJob(id="dup", kind="count", payload="{}", unique_key="schedule:x@1"), now=later(41)
    )
    assert again.duplicate and again == tick
    assert store.prune(cutoffs, now=later(61), limit=10).jobs == 1
    assert store.get(tick) is None
    assert store.get(forever) is not None


def test_idempotency_keys_past_their_time_are_pruned(store):
    assert store.begin_idempotent("key-1", "hash", now=T0) is None
    store.finish_idempotent("key-1", status=202, body="{}")
    store.prune({"succeeded": T0}, now=T0 + datetime.timedelta(days=2), limit=10)
    # Taken afresh: the old answer is gone (it would be stale anyway, but it was deleted).
    assert store.begin_idempotent("key-1", "other", now=T0 + datetime.timedelta(days=2)) is None


def test_prunable_says_whether_a_prune_would_delete_anything_as_prune_decides(store):
    assert not store.prunable({"succeeded": later(50)}, now=later(60))  # an empty table
    done = add(store)
    finish(store, done, at=later(10))
    forever = add(store, unique_key="kept-for-good", unique_while_active=False)
    finish(store, forever, at=later(11), fail=True)
    assert not store.prunable({"succeeded": later(5)}, now=later(60))  # not old enough
    assert not store.prunable({"failed": later(50)}, now=later(60))  # its key still counts
    assert not store.prunable({}, now=later(60))  # everything kept
    assert store.prunable({"succeeded": later(50)}, now=later(60))
    store.prune({"succeeded": later(50)}, now=later(60), limit=10)
    assert not store.prunable({"succeeded": later(50)}, now=later(60))  # done: nothing left


def test_prunable_sees_idempotency_keys_past_their_time(store):
    assert store.begin_idempotent("key-1", "hash", now=T0) is None
    store.finish_idempotent("key-1", status=202, body="{}")
    assert not store.prunable({}, now=T0 + datetime.timedelta(minutes=1))
    assert store.prunable({}, now=T0 + datetime.timedelta(days=2))


def test_a_lease_is_one_holders_until_it_runs_out(store):
    assert store.take_lease("retention", holder="a", until=later(60), now=T0)
    assert not store.take_lease("retention", holder="b", until=later(70), now=later(10))
    assert store.take_lease("retention", holder="a", until=later(90), now=later(20))
    assert not store.take_lease("retention", holder="b", until=later(100), now=later(80))
    assert store.take_lease("retention", holder="b", until=later(150), now=later(90))


# -- counts ------------------------------------------------------------------------


def test_job_counts_tell_waiting_and_running_jobs_by_queue_and_kind(store):
    done = add(store, "count", queue="other")
    finish(store, done, at=T0)
    first = add(store, "count")
    add(store, "count")
    add(store, "mail", queue="bulk")
    add(store, "mail", queue="bulk", run_at=later(100))
    assert claim(store, kinds={"count"}).id == first
    counts = {(c.queue, c.kind, c.status): c.count for c in store.job_counts()}
    assert counts == {
        ("default", "count", "queued"): 1,
        ("default", "count", "running"): 1,
        ("bulk", "mail", "queued"): 1,
        ("bulk", "mail", "scheduled"): 1,
    }


def test_retry_keeps_the_failing_attempt_when_a_snooze_gave_its_number_back(store):
    job_id = add(store)
    first = claim(store, now=later(1))
    store.record(
        first.claim, RunAgain(run_at=later(1), code="snoozed", counts_attempt=False), now=later(2)
    )
    again = claim(store, now=later(3))
    assert again.claim.attempt == 1  # the snooze gave the number back
    store.record(again.claim, Fail(code="boom"), now=later(4))
    assert [(a.attempt, a.outcome) for a in store.detail(job_id).attempts] == [
        (1, "snoozed"), (1, "boom"),
    ]  # fmt: skip
    assert store.retry(job_id, now=later(5)) is RetryOutcome.RETRIED
    assert [(a.attempt, a.outcome) for a in store.detail(job_id).attempts] == [
        (1, "snoozed"), (1, "boom"),
    ]  # fmt: skip
