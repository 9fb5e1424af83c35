"""Why a job is not running: the reasons a job's detail gives, worked out purely."""

from __future__ import annotations

import datetime

from jobtable.core import Job, RunnerInfo, RunnerRecord, Status
from jobtable.core.jobs import JobDetail
from jobtable.core.waiting import why_waiting

NOW = datetime.datetime(2026, 5, 1, 12, 0, tzinfo=datetime.UTC)


def detail(status: Status = Status.QUEUED, **fields) -> JobDetail:
    values = {
        "job": Job(id="j", kind="mail", status=status, result=None, error=None),
        "queue": "default",
        "priority": 0,
        "run_at": NOW,
        "attempt": 0,
        "max_attempts": 1,
        "created_at": NOW,
        "started_at": None,
        "finished_at": None,
        "timeout": None,
        "unique_key": None,
        "cancel_requested": False,
        "claimed_by": None,
        "attempts": (),
        "last_code": None,
    }
    values.update(fields)
    return JobDetail(**values)


def runner(kinds=("mail",), queues=None, workers=2, busy=0) -> RunnerRecord:
    info = RunnerInfo(
        id="r", host="h", pid=1, started_at=NOW, kinds=kinds, queues=queues, workers=workers
    )
    return RunnerRecord(info=info, busy=busy, last_seen=NOW)


def why(job: JobDetail, *, paused=(), runners=None, ahead=0) -> list[str]:
    serving = (runner(),) if runners is None else runners
    return why_waiting(job, now=NOW, paused=paused, runners=serving, ahead=lambda: ahead)


def test_a_running_or_finished_job_waits_for_nothing():
    for status in (Status.RUNNING, Status.SUCCEEDED, Status.FAILED):
        assert why(detail(status)) == []


def test_a_job_due_later_says_when():
    later = NOW + datetime.timedelta(minutes=5)
    assert why(detail(run_at=later)) == ["due at 2026-05-01T12:05:00+00:00"]


def test_a_retrying_job_says_which_attempt_ended_how():
    reasons = why(detail(attempt=1, max_attempts=3, last_code="timed_out", run_at=NOW))
    assert reasons[0] == "retrying: attempt 1 of 3 ended with timed_out"


def test_a_paused_queue_and_a_kind_nobody_runs_are_named():
    assert why(detail(), paused={"default"}) == ["queue default is paused"]
    assert why(detail(), runners=()) == ["no live runner serves kind mail"]
    assert why(detail(), runners=(runner(queues=("reports",)),)) == [
        "no live runner of kind mail serves queue default"
    ]


def test_a_due_job_counts_those_ahead_or_says_it_is_next():
    assert why(detail(), ahead=4) == ["4 jobs ahead of it"]
    assert why(detail(), ahead=0) == ["next in line: about to run"]
    assert why(detail(), runners=(runner(busy=2),)) == ["every worker that serves it is busy"]
