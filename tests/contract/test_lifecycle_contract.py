"""The job lifecycle every JobStore keeps (issue 10): claim order, schedules, queues and
pauses, retries by the stored policy, cancellation, unique keys, bulk enqueue, detail."""

from __future__ import annotations

import datetime
import threading

import pytest

from jobtable.core import DeadRunner, NewJob, RunnerInfo, Status
from jobtable.core.codes import CANCELLED, INTERRUPTED
from jobtable.core.ids import JobIdGenerator
from jobtable.core.jobs import CancelOutcome
from jobtable.core.outcome import RunAgain, Succeed
from jobtable.core.retry import RetryPolicy
from tests.support.harness import as_datetime
from tests.support.settling import interrupt, settle_dead
from tests.support.threads import run_in_threads

T0 = datetime.datetime(2026, 3, 1, 12, 0, tzinfo=datetime.UTC)
RUNNER = "runner-a"
KINDS = frozenset({"count", "mail"})
_ids = JobIdGenerator()


def later(seconds: float) -> datetime.datetime:
    return T0 + datetime.timedelta(seconds=seconds)


def add(store, kind: str = "count", *, now: datetime.datetime = T0, **fields) -> str:
    job_id = fields.pop("job_id", None) or _ids.next_id(int(now.timestamp() * 1000))
    created = store.create(NewJob(id=job_id, kind=kind, payload="{}", **fields), now=now)
    assert not created.duplicate
    assert created == job_id
    return job_id


def claim(store, *, now: datetime.datetime = T0, kinds=KINDS, queues=None):
    return store.claim_next(runner_id=RUNNER, now=now, kinds=kinds, queues=queues)


def claimed_ids(store, **how) -> list[str]:
    ids = []
    while (job := claim(store, **how)) is not None:
        ids.append(job.id)
    return ids


# -- claim order -------------------------------------------------------------


def test_claims_go_by_priority_then_due_time_then_id(store):
    late_urgent = add(store, priority=0, run_at=later(-10))
    early_low = add(store, priority=5, run_at=later(-100))
    early_urgent = add(store, priority=0, run_at=later(-20))
    same_time_second = add(store, priority=5, run_at=later(-100))  # a higher id
    other_kind_low = add(store, "mail", priority=9, run_at=later(-500))
    assert claimed_ids(store) == [
        early_urgent, late_urgent, early_low, same_time_second, other_kind_low,
    ]  # fmt: skip


def test_a_runner_claims_only_its_kinds_and_queues(store):
    count_default = add(store, "count")
    mail_default = add(store, "mail")
    count_reports = add(store, "count", queue="reports")
    add(store, "unserved")
    assert claimed_ids(store, kinds={"count"}, queues={"reports"}) == [count_reports]
    assert claimed_ids(store, kinds={"mail"}) == [mail_default]
    assert claimed_ids(store, kinds=KINDS) == [count_default]
    assert store.get(count_default).status is Status.RUNNING


def test_a_paused_queue_is_passed_by_until_it_is_resumed(store):
    paused_job = add(store, "count", queue="mail")
    running_job = add(store, "count", priority=9)
    store.set_queue_paused("mail", paused=True, now=T0)
    assert "mail" in store.paused_queues()
    assert claimed_ids(store) == [running_job]
    store.set_queue_paused("mail", paused=False, now=T0)
    assert "mail" not in store.paused_queues()
    assert claimed_ids(store) == [paused_job]


# -- schedules -----------------------------------------------------------------


def test_a_scheduled_job_shows_queued_and_is_claimed_only_once_due_and_promoted(store):
    job_id = add(store, run_at=later(60))
    assert store.get(job_id).status is Status.QUEUED
    assert as_datetime(store.next_due()) == later(60)
    assert store.promote_due(now=later(59)) == 0
    assert claim(store, now=later(59)) is None
    assert store.promote_due(now=later(60)) == 1
    assert store.next_due() is None
    assert claim(store, now=later(60)).id == job_id


def test_next_due_names_the_earliest_scheduled_job(store):
    add(store, run_at=later(300))
    add(store, run_at=later(30))
    add(store)  # due now: not scheduled
    assert as_datetime(store.next_due()) == later(30)


def test_promotion_moves_every_due_job_and_keeps_claim_order(store):
    second = add(store, run_at=later(20), priority=1)
    first = add(store, run_at=later(10), priority=1)
    urgent = add(store, run_at=later(30), priority=0)
    not_yet = add(store, run_at=later(99))
    assert store.promote_due(now=later(30)) == 3
    assert claimed_ids(store, now=later(30)) == [urgent, first, second]
    assert store.get(not_yet).status is Status.QUEUED


# -- retries by the stored policy ------------------------------------------------


def test_a_requeued_job_waits_for_its_time_keeps_its_partial_result_and_hands_it_on(store):
    job_id = add(store, max_attempts=3)
    first = claim(store)
    assert store.publish(first.claim, result='{"done":4}', now=T0)
    retry = RunAgain(run_at=later(30), code="internal_error")
    assert store.record(first.claim, retry, now=later(1))
    assert not store.record(first.claim, retry, now=later(1))  # fenced: once only
    job = store.get(job_id)
    assert (job.status, job.result, job.error) == (Status.QUEUED, {"done": 4}, None)
    assert claim(store, now=later(29)) is None
    store.promote_due(now=later(30))
    second = claim(store, now=later(30))
    assert (second.id, second.claim.attempt, second.checkpoint) == (job_id, 2, '{"done":4}')
    assert second.policy.max_attempts == 3


def test_a_snooze_gives_its_attempt_back(store):
    add(store, max_attempts=1)
    first = claim(store)
    assert store.record(
        first.claim, RunAgain(run_at=T0, code="snoozed", counts_attempt=False), now=T0
    )
    again = claim(store)
    assert again.claim.attempt == 1


def test_an_interrupted_job_settles_by_the_policy_stored_on_it(store):
    keeps = add(store, max_attempts=2)
    ends = add(store, max_attempts=1)
    running = [claim(store), claim(store)]
    for job in running:
        assert interrupt(store, job.claim, code=INTERRUPTED, now=later(1))
    assert store.get(keeps).status is Status.QUEUED  # at once: a restart is not the job's fault
    assert (store.get(ends).status, store.get(ends).error) == (Status.FAILED, INTERRUPTED)
    assert claim(store, now=later(1)).id == keeps


def test_a_dead_runners_jobs_retry_by_their_stored_codes(store):
    info = RunnerInfo(
        id=RUNNER, host="h", pid=1, started_at=T0, kinds=("count",), queues=None, workers=1
    )
    store.register_runner(info, now=T0)
    policy = RetryPolicy(max_attempts=3, retry_on=frozenset({"flaky"}))
    job_id = add(store, retry=policy, max_attempts=3)
    claim(store)
    store.unregister_runner(RUNNER)
    verdict = DeadRunner(runner_id=RUNNER, registered=False, beat=None, lock_absent=True)
    recovered = settle_dead(store, [verdict], code=INTERRUPTED, now=later(5))
    assert (recovered.requeued, recovered.failed) == (1, 0)
    again = claim(store, now=later(5))
    assert again.id == job_id
    assert again.policy.retry_on == frozenset({"flaky"})


# -- cancellation ------------------------------------------------------------------


def test_cancelling_a_queued_or_scheduled_job_fails_it_cancelled_at_once(store):
    queued, scheduled = add(store), add(store, run_at=later(60))
    for job_id in (queued, scheduled):
        assert store.cancel(job_id, now=T0) is CancelOutcome.CANCELLED
        job = store.get(job_id)
        assert (job.status, job.error) == (Status.FAILED, CANCELLED)
        assert store.cancel(job_id, now=T0) is CancelOutcome.CANCELLED  # already: same answer
    store.promote_due(now=later(60))
    assert claim(store, now=later(60)) is None
    assert store.cancel("no-such-job", now=T0) is None


def test_cancelling_a_running_job_flags_it_for_its_runner_and_no_retry_undoes_it(store):
    job_id = add(store, max_attempts=5)
    running = claim(store)
    assert store.cancel(job_id, now=T0) is CancelOutcome.REQUESTED
    assert store.get(job_id).status is Status.RUNNING
    assert store.cancel_requests(RUNNER) == [running.claim]
    assert store.cancel_requests("someone-else") == []
    assert store.record(running.claim, RunAgain(run_at=T0, code="internal_error"), now=T0)
    job = store.get(job_id)
    assert (job.status, job.error) == (Status.FAILED, CANCELLED)


def test_a_finished_job_cannot_be_cancelled(store):
    job_id = add(store)
    running = claim(store)
    assert store.record(running.claim, Succeed(result="{}"), now=T0)
    assert store.cancel(job_id, now=T0) is CancelOutcome.REFUSED
    assert store.get(job_id).status is Status.SUCCEEDED


def test_a_job_that_returned_while_cancel_was_asked_succeeds(store):
    job_id = add(store)
    running = claim(store)
    store.cancel(job_id, now=T0)
    assert store.record(running.claim, Succeed(result='{"n":1}'), now=T0)
    assert store.get(job_id).status is Status.SUCCEEDED
    assert store.cancel_requests(RUNNER) == []


# -- unique keys ---------------------------------------------------------------------


def test_a_unique_key_held_returns_the_holder_and_is_let_go_when_it_finishes(store):
    first = add(store, unique_key="user-7")
    again = store.create(
        NewJob(id=_ids.next_id(1), kind="count", payload="{}", unique_key="user-7"), now=T0
    )
    assert (again, again.duplicate) == (first, True)
    other_kind = add(store, "mail", unique_key="user-7")
    assert other_kind != first
    running = claim(store, kinds={"count"})
    store.record(running.claim, Succeed(result="{}"), now=T0)
    after = add(store, unique_key="user-7")
    assert after != first


# Every other ending, and a key kept for good: test_unique_keys_contract.py.


def test_concurrent_enqueues_with_one_key_store_one_job(store):
    answers: list[str] = []
    guard = threading.Lock()

    def enqueue(number: int) -> None:
        job = NewJob(id=_ids.next_id(10_000 + number), kind="count", payload="{}", unique_key="k")
        created = store.create(job, now=T0)
        with guard:
            answers.append(created)

    run_in_threads([lambda n=n: enqueue(n) for n in range(20)])
    assert len(set(answers)) == 1
    assert claimed_ids(store) == [answers[0]]


# -- bulk, detail, queues ----------------------------------------------------------------


def test_create_many_stores_all_or_none(store):
    ids = [_ids.next_id(20_000 + n) for n in range(3)]
    created = store.create_many(
        [NewJob(id=job_id, kind="count", payload="{}") for job_id in ids], now=T0
    )
    assert created == ids
    clash = [NewJob(id=_ids.next_id(30_000), kind="count", payload="{}"),
             NewJob(id=ids[0], kind="count", payload="{}")]  # fmt: skip
    with pytest.raises(Exception):  # noqa: PT011 -- each engine raises its own
        store.create_many(clash, now=T0)
    assert store.get(clash[0].id) is None


def test_the_detail_tells_the_whole_story(store):
    job_id = add(store, queue="mail", priority=3, timeout=30.0, max_attempts=2)
    first = claim(store)
    store.record(first.claim, RunAgain(run_at=later(10), code="timed_out"), now=later(5))
    store.promote_due(now=later(10))
    second = claim(store, now=later(10))
    store.record(second.claim, Succeed(result='{"n":2}'), now=later(12))
    detail = store.detail(job_id)
    assert detail.job.to_public()["result"] == {"n": 2}
    assert (detail.queue, detail.priority, detail.timeout) == ("mail", 3, 30.0)
    assert (detail.attempt, detail.max_attempts) == (2, 2)
    assert as_datetime(detail.run_at) == later(10)
    assert [(a.attempt, a.runner_id, a.outcome) for a in detail.attempts] == [
        (1, RUNNER, "timed_out"),
        (2, RUNNER, "succeeded"),
    ]
    assert as_datetime(detail.attempts[0].ended_at) == later(5)
    assert as_datetime(detail.finished_at) == later(12)
    assert store.detail("missing") is None


def test_the_details_job_is_the_job_get_gives_with_its_version(store):
    job_id = add(store)
    running = claim(store)
    for done in (1, 2, 3):
        assert store.publish(running.claim, result=f'{{"done":{done}}}', now=later(done))
    assert store.record(running.claim, Succeed(result='{"done":4}'), now=later(4))
    job = store.get(job_id)
    assert (job.version, job.result) == (5, {"done": 4})  # claimed, three publishes, succeeded
    detail = store.detail(job_id)
    assert detail.job == job
    assert detail.job.version == job.version  # equality leaves the version out: ask for it
    assert detail.waiting == ()  # the core says why a job waits, not the store


def test_jobs_ahead_counts_due_jobs_before_it_in_claim_order(store):
    ahead = [add(store, priority=0), add(store, priority=1)]
    behind = add(store, priority=2)
    add(store, priority=9)  # after it
    add(store, "mail", priority=0)  # another kind
    assert store.jobs_ahead(store.detail(behind)) == len(ahead)


def test_queues_count_jobs_by_public_status_and_say_which_are_paused(store):
    add(store, queue="mail")
    add(store, queue="mail", run_at=later(60))  # scheduled: counted queued
    done = add(store)
    running = claim(store, queues={"default"})
    assert running.id == done
    store.record(running.claim, Succeed(result="{}"), now=T0)
    store.set_queue_paused("idle", paused=True, now=T0)
    states = {state.name: state for state in store.queues()}
    assert states["mail"].counts["queued"] == 2
    assert states["default"].counts["succeeded"] == 1
    assert (states["idle"].paused, sum(states["idle"].counts.values())) == (True, 0)
    assert not states["mail"].paused


def test_a_queue_with_no_jobs_and_no_pause_drops_out_of_the_list(store):
    """Names clients choose never pile up: a queue is listed while it holds a job or a pause."""
    store.set_queue_paused("idle", paused=True, now=T0)
    store.set_queue_paused("idle", paused=False, now=T0)  # resumed, and never held a job
    store.set_queue_paused("held", paused=True, now=T0)  # a pause is kept: a setting
    store.set_queue_paused("busy", paused=True, now=T0)
    store.set_queue_paused("busy", paused=False, now=T0)
    busy = add(store, queue="busy")
    pruned = claim(store, queues={"busy"})
    assert pruned.id == busy
    store.record(pruned.claim, Succeed(result="{}"), now=T0)
    assert [state.name for state in store.queues()] == ["busy", "held"]

    assert store.prune({"succeeded": later(1)}, now=later(2), limit=10).jobs == 1
    assert [(state.name, state.paused) for state in store.queues()] == [("held", True)]
    store.set_queue_paused("held", paused=False, now=T0)
    assert store.queues() == []
    assert store.paused_queues() == frozenset()


def test_record_and_claim_records_a_requeue_too(store):
    first, second = add(store, max_attempts=2), add(store)
    running = claim(store)
    (held,), (following,) = store.record_and_claim(
        [(running.claim, RunAgain(run_at=later(5), code="internal_error"))], limit=1,
        runner_id=RUNNER, now=T0, kinds=KINDS,
    )  # fmt: skip
    assert held and following.id == second
    store.record_and_claim(
        [(following.claim, Succeed(result="{}"))], limit=0, runner_id=RUNNER, now=T0
    )
    assert store.get(first).status is Status.QUEUED


# -- idempotency keys ----------------------------------------------------------------


def test_an_idempotency_key_is_taken_once_then_answers_with_what_is_kept(store):
    from jobtable.core.idempotency import InFlight, Replay, Reused, judge_repeat

    assert store.begin_idempotent("key-1", "hash-a", now=T0) is None
    kept = store.begin_idempotent("key-1", "hash-a", now=later(1))
    assert judge_repeat(kept, "hash-a") == InFlight()
    store.finish_idempotent("key-1", status=202, body='{"id":"j1"}')
    kept = store.begin_idempotent("key-1", "hash-a", now=later(2))
    assert judge_repeat(kept, "hash-a") == Replay(202, '{"id":"j1"}')
    assert judge_repeat(kept, "hash-b") == Reused()
    assert as_datetime(kept.created_at) == T0


def test_an_idempotency_key_is_forgotten_after_a_day_and_an_abandoned_one_after_a_minute(store):
    store.begin_idempotent("answered", "h", now=T0)
    store.finish_idempotent("answered", status=202, body="{}")
    store.begin_idempotent("abandoned", "h", now=T0)
    assert store.begin_idempotent("answered", "h", now=later(3600)) is not None
    assert store.begin_idempotent("abandoned", "other", now=later(61)) is None  # taken afresh
    assert store.begin_idempotent("answered", "other", now=later(24 * 3600 + 1)) is None
    store.drop_idempotent("answered")
    assert store.begin_idempotent("answered", "h", now=later(24 * 3600 + 2)) is None


def test_of_concurrent_requests_with_one_key_exactly_one_takes_it(store):
    taken: list[bool] = []
    guard = threading.Lock()

    def begin() -> None:
        result = store.begin_idempotent("shared", "h", now=T0)
        with guard:
            taken.append(result is None)

    run_in_threads([begin] * 30)
    assert taken.count(True) == 1


def test_a_job_given_back_after_a_cancel_was_asked_is_cancelled(store):
    job_id = add(store)
    running = claim(store)
    store.cancel(job_id, now=T0)
    assert store.put_back([running.claim], now=T0) == 1
    job = store.get(job_id)
    assert (job.status, job.error) == (Status.FAILED, CANCELLED)
    assert store.detail(job_id).attempt == 0


def test_a_snooze_after_a_cancel_was_asked_cancels_and_keeps_the_attempt(store):
    job_id = add(store)
    running = claim(store)
    store.cancel(job_id, now=T0)
    snooze = RunAgain(run_at=later(60), code="snoozed", counts_attempt=False)
    assert store.record(running.claim, snooze, now=T0)
    detail = store.detail(job_id)
    assert (detail.job.status, detail.job.error, detail.attempt) == (
        Status.FAILED, CANCELLED, 1,
    )  # fmt: skip


def test_a_job_retried_at_once_keeps_its_place_in_line(store):
    first = add(store, max_attempts=2, now=later(-60))
    second = add(store, now=later(-30))
    running = claim(store)
    assert running.id == first
    assert interrupt(store, running.claim, code=INTERRUPTED, now=T0)  # queued again at once
    assert claimed_ids(store) == [first, second]
