"""What every store does with rows it did not write itself, or writes many times (issue 18):
a row it cannot read is set aside, a row found running has had an attempt, snoozes are
counted in a bounded log, and a claim given back leaves the job as it was."""

from __future__ import annotations

import datetime
import json
import logging

import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.core import DeadRunner, NewJob, Runner, Status
from jobtable.core.codes import INTERNAL_ERROR, INTERRUPTED
from jobtable.core.ids import JobIdGenerator
from jobtable.core.jobs import ATTEMPTS_KEPT, JobFilter
from jobtable.core.outcome import Fail, RunAgain
from tests.support.rows import write_row
from tests.support.settling import settle_dead
from tests.unit.kinds_for_tests import CountPayload, CountResult, count

T0 = datetime.datetime(2026, 3, 1, 12, 0, tzinfo=datetime.UTC)
RUNNER = "runner-a"
_ids = JobIdGenerator()

UNREADABLE = {
    # Values a tool could write that jobtable cannot read, by engine. PostgreSQL's columns
    # are typed: only times Python cannot hold, JSON text that does not parse and a
    # timeout that is no number can be there.
    "time": {"sqlite": ("run_at", "c"), "postgres": ("run_at", "-infinity")},
    "far time": {"sqlite": ("run_at", "2026-02-31T00:00:00"), "postgres": ("run_at", "infinity")},
    "policy": {"sqlite": ("retry", "{"), "postgres": ("retry", '["not", "a", "policy"]')},
    "checkpoint": {"sqlite": ("result", "not json"), "postgres": ("result", "{")},
    "timeout": {"sqlite": ("timeout", "soon"), "postgres": ("timeout", "NaN")},
    "budget": {"sqlite": ("max_attempts", "three")},
}


def later(seconds: float) -> datetime.datetime:
    return T0 + datetime.timedelta(seconds=seconds)


def add(store, *, now: datetime.datetime = T0, **fields) -> str:
    job_id = _ids.next_id(int(now.timestamp() * 1000))
    store.create(NewJob(id=job_id, kind="count", payload="{}", **fields), now=now)
    return job_id


def claim(store, *, now: datetime.datetime = T0):
    return store.claim_next(runner_id=RUNNER, now=now, kinds={"count"})


def unreadable(engine: str, case: str) -> tuple[str, object]:
    if engine == "memory":
        pytest.skip("the memory store holds typed values that only it writes: none is unreadable")
    found = UNREADABLE[case].get(engine)
    if found is None:
        pytest.skip(f"{engine} types this column: it cannot hold an unreadable {case}")
    return found


@pytest.fixture
def store_log(caplog) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.ERROR, logger="jobtable.store")
    return caplog


def set_aside(log: pytest.LogCaptureFixture, job_id: str) -> list[str]:
    """The lines the store wrote about ``job_id``."""
    return [
        record.getMessage()
        for record in log.records
        if record.name == "jobtable.store" and job_id in record.getMessage()
    ]


# -- a row that cannot be read is set aside (item 5) ----------------------------------


@pytest.mark.parametrize("case", list(UNREADABLE))
def test_a_row_that_cannot_be_read_is_failed_once_and_the_jobs_behind_it_are_claimed(
    store, engine, case, store_log
):
    column, value = unreadable(engine, case)
    bad = add(store, priority=0)  # first in claim order
    good = add(store, priority=5)
    write_row(store, bad, **{column: value})

    claimed = claim(store)

    assert claimed is not None and claimed.id == good
    job = store.get(bad)
    assert (job.status, job.error) == (Status.FAILED, INTERNAL_ERROR)
    assert claim(store) is None  # nothing left: the bad row is not claimed again
    # Told once, by id, column and reason; the value itself is never logged.
    assert set_aside(store_log, bad) == [
        f"job failed job_id={bad} kind=count code={INTERNAL_ERROR} reason=unreadable row"
        f" column={column}"
    ]


def test_a_runner_runs_every_job_behind_a_row_it_cannot_read(store, engine):
    column, value = unreadable(engine, "time")
    runner = Runner(store, FakeClock(), workers=1, check_interval=None)
    handle = runner.kinds.register("count", count, payload=CountPayload, result=CountResult)
    bad = handle.enqueue(CountPayload(steps=1), priority=0)  # first in claim order
    good = [handle.enqueue(CountPayload(steps=n), priority=5) for n in (2, 3)]
    write_row(store, bad, **{column: value})  # as a tool, or the reference, left it

    finished = runner.drain()

    assert [(job.id, job.status) for job in finished] == [
        (job_id, Status.SUCCEEDED) for job_id in good
    ]
    assert (store.get(bad).status, store.get(bad).error) == (Status.FAILED, INTERNAL_ERROR)


def test_a_batch_claim_fails_an_unreadable_row_and_claims_another_in_its_place(
    store, engine, store_log
):
    column, value = unreadable(engine, "time")
    bad = add(store, priority=0)
    good = [add(store, priority=5), add(store, priority=6)]
    write_row(store, bad, **{column: value})

    held, claimed = store.record_and_claim([], limit=2, runner_id=RUNNER, now=T0, kinds={"count"})

    assert (held, [job.id for job in claimed]) == ([], good)
    assert store.get(bad).error == INTERNAL_ERROR
    assert len(set_aside(store_log, bad)) == 1


def test_a_running_row_whose_policy_cannot_be_read_is_settled_failed(store, engine, store_log):
    column, value = unreadable(engine, "policy")
    job_id = add(store, max_attempts=3)
    claim(store)
    write_row(store, job_id, **{column: value})
    verdict = DeadRunner(runner_id=RUNNER, registered=False, beat=None, lock_absent=True)

    recovered = settle_dead(store, [verdict], code=INTERRUPTED, now=later(5))

    assert (recovered.failed, recovered.requeued) == (1, 0)
    assert store.get(job_id).error == INTERNAL_ERROR
    assert len(set_aside(store_log, job_id)) == 1


def test_a_result_that_is_not_json_reads_as_none_wherever_the_job_is_shown(store, engine):
    column, value = unreadable(engine, "checkpoint")
    job_id = add(store)
    write_row(store, job_id, **{column: value})

    assert store.get(job_id).result is None
    assert store.detail(job_id).job.result is None
    (listed,) = store.list_jobs(JobFilter(), limit=1, after=None)
    assert (listed.id, listed.result) == (job_id, None)
    assert store.events(job_id, after=None).last.job.result is None


def test_a_scheduled_time_that_cannot_be_read_hides_no_job_due_after_it(store, engine):
    bad_time = {"sqlite": "1", "postgres": "-infinity"}.get(engine)  # first in time order
    if bad_time is None:
        pytest.skip("the memory store holds typed values that only it writes: none is unreadable")
    bad = add(store, run_at=later(60))
    add(store, run_at=later(120))
    write_row(store, bad, run_at=bad_time)
    assert store.next_due() == later(120)


# -- a row found running has had an attempt (item 6) ---------------------------------


def test_a_running_row_with_no_owner_and_no_attempt_counts_as_one_attempt(store):
    """As a tool, or an earlier version, writes one: settled by its budget, not run again."""
    once = add(store, max_attempts=1)
    twice = add(store, max_attempts=2)
    for job_id in (once, twice):
        write_row(store, job_id, status="running", claimed_by=None, attempt=0)
    verdict = DeadRunner(runner_id=None, registered=False, beat=None, lock_absent=True)

    recovered = settle_dead(store, [verdict], code=INTERRUPTED, now=later(5))

    assert (recovered.failed, recovered.requeued) == (1, 1)
    job = store.get(once)
    assert (job.status, job.error) == (Status.FAILED, INTERRUPTED)
    assert store.detail(once).attempt == 1
    again = claim(store, now=later(5))
    assert (again.id, again.claim.attempt) == (twice, 2)  # its second attempt: the last one


# -- snoozes are counted; the log keeps the last 20 (item 13) ------------------------


def logged(store, job_id: str) -> list[dict]:
    stored = store.row(job_id)["attempts_log"]
    return json.loads(stored) if isinstance(stored, str) else list(stored)


def test_snoozes_are_counted_and_the_log_keeps_the_last_20_attempts(store):
    job_id = add(store, max_attempts=2)
    snoozes = ATTEMPTS_KEPT + 15
    for number in range(snoozes):
        running = claim(store, now=later(number))
        assert running.claim.attempt == 1  # a snooze gives its attempt back
        snooze = RunAgain(run_at=later(number), code="snoozed", counts_attempt=False)
        assert store.record(running.claim, snooze, now=later(number))
    last = claim(store, now=later(snoozes))
    assert store.record(
        last.claim, RunAgain(run_at=later(snoozes), code="boom"), now=later(snoozes)
    )

    log = logged(store, job_id)
    assert len(log) == ATTEMPTS_KEPT
    assert [entry["outcome"] for entry in log] == ["snoozed"] * (ATTEMPTS_KEPT - 1) + ["boom"]
    detail = store.detail(job_id)
    assert (detail.snoozes, detail.attempt) == (snoozes, 1)
    newest = detail.attempts[-2:]
    assert [(a.outcome, a.started_at) for a in newest] == [
        ("snoozed", later(snoozes - 1)), ("boom", later(snoozes)),
    ]  # fmt: skip


def test_an_operators_retry_keeps_the_log_at_20_too(store):
    job_id = add(store, max_attempts=1)
    for number in range(ATTEMPTS_KEPT):
        running = claim(store, now=later(number))
        store.record(
            running.claim, RunAgain(run_at=T0, code="snoozed", counts_attempt=False), now=T0
        )
    last = claim(store, now=later(ATTEMPTS_KEPT))
    store.record(last.claim, Fail(code="boom"), now=later(ATTEMPTS_KEPT))
    store.retry(job_id, now=later(ATTEMPTS_KEPT + 1))
    log = logged(store, job_id)
    assert len(log) == ATTEMPTS_KEPT
    assert log[-1]["outcome"] == "boom"
    assert store.detail(job_id).snoozes == ATTEMPTS_KEPT


# -- a claim given back leaves the job as it was (item 18) ---------------------------


def test_a_first_claim_given_back_leaves_the_job_never_started(store):
    job_id = add(store)
    running = claim(store, now=later(1))
    assert store.put_back([running.claim], now=later(2)) == 1
    detail = store.detail(job_id)
    assert (detail.job.status, detail.attempt, detail.started_at, detail.attempts) == (
        Status.QUEUED, 0, None, (),
    )  # fmt: skip


def test_a_later_claim_given_back_leaves_the_start_of_the_attempt_before(store):
    job_id = add(store, max_attempts=3)
    first = claim(store, now=later(1))
    store.record(first.claim, RunAgain(run_at=later(2), code=INTERRUPTED), now=later(2))
    second = claim(store, now=later(3))
    assert store.put_back([second.claim], now=later(4)) == 1
    detail = store.detail(job_id)
    assert (detail.job.status, detail.attempt, detail.started_at) == (Status.QUEUED, 1, later(1))
    assert [(a.attempt, a.started_at, a.outcome) for a in detail.attempts] == [
        (1, later(1), INTERRUPTED),
    ]  # fmt: skip


def test_a_claim_given_back_after_a_cancel_was_asked_never_started(store):
    job_id = add(store)
    running = claim(store, now=later(1))
    store.cancel(job_id, now=later(2))
    store.put_back([running.claim], now=later(3))
    detail = store.detail(job_id)
    assert (detail.job.error, detail.attempt, detail.started_at) == ("cancelled", 0, None)
