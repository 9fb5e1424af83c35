"""A sick database: 20% of claims, publishes and outcome writes raise, over 2,000 jobs.

No worker thread may die, claims must back off as specified, and every job
must end succeeded or failed with a code the kind declared (or the runner's
own): none may stay queued or running. Runs on every store, with faults
raised before the call reaches the database and after it committed (a lost
reply: the worker is told its claim or outcome failed, yet it was written).
"""

from __future__ import annotations

import re
import threading
import time
from contextlib import ExitStack

import attrs
import pytest

from jobtable.adapters.faulty import FaultyStore
from jobtable.adapters.system_clock import SystemClock
from jobtable.core import Failure, JobContext, Runner
from jobtable.core.backoff import CLAIM_RETRY_INITIAL, CLAIM_RETRY_MAXIMUM
from jobtable.core.jobs import Status
from tests.support.logs import LogCapture
from tests.support.stores import ENGINES, open_store

JOBS = 2000
FAULT_RATE = 0.2
WORKERS = 4


class FastClock(SystemClock):
    """Real time, but every timed wait lasts a tenth as long: backoff delays keep their shape."""

    def wait_for(self, condition, predicate, timeout):
        return super().wait_for(condition, predicate, None if timeout is None else timeout / 10)


@attrs.frozen
class Work:
    n: int


@attrs.frozen
class Done:
    n: int

    def public(self) -> dict:
        return {"n": self.n}


def work(ctx: JobContext, payload: Work) -> Done:
    ctx.publish(Done(-payload.n))
    if payload.n % 5 == 0:
        raise Failure("declined")
    if payload.n % 7 == 0:
        raise RuntimeError("a handler bug")
    return Done(payload.n)


def expected(n: int) -> tuple[Status, str | None, dict[str, int] | None]:
    if n % 5 == 0:
        return Status.FAILED, "declined", None
    if n % 7 == 0:
        return Status.FAILED, "internal_error", None
    return Status.SUCCEEDED, None, {"n": n}


def wait_until_finished(store, job_ids: list[str], *, within: float) -> list:
    """Every job once none is queued or running; polls with a deadline, shrinking what it reads."""
    deadline = time.monotonic() + within
    pending = list(job_ids)
    while pending and time.monotonic() < deadline:
        pending = [job_id for job_id in pending if not store.get(job_id).status.finished]
        if pending:
            threading.Event().wait(0.05)
    assert not pending, f"{len(pending)} jobs still unfinished, e.g. {store.row(pending[0])}"
    return [store.get(job_id) for job_id in job_ids]


@pytest.mark.parametrize("lose_replies", [False, True], ids=["refused", "reply-lost"])
@pytest.mark.parametrize("engine", ENGINES)
def test_twenty_percent_of_store_calls_failing_loses_no_job_and_kills_no_worker(
    engine, lose_replies, tmp_path
):
    with ExitStack() as stack:
        inner = open_store(engine, tmp_path, stack)
        stack.callback(inner.close)
        store = FaultyStore(inner, rate=FAULT_RATE, seed=5, lose_replies=lose_replies)
        logs = LogCapture()
        runner = Runner(store, FastClock(), workers=WORKERS, logger=logs.logger)
        kind = runner.kinds.register("work", work, payload=Work, failure_codes=["declined"])
        runner.start()
        stack.callback(lambda: (runner.stop(), runner.join(timeout=10)))
        job_ids = [kind.enqueue(Work(n)) for n in range(JOBS)]

        jobs = wait_until_finished(inner, job_ids, within=180)

        print(
            f"{engine} lose_replies={lose_replies}: faults {dict(store.faults)} in {dict(store.calls)}"
        )
        assert runner.live_workers == WORKERS
        for n, job in enumerate(jobs):
            final_result = job.result if job.status is Status.SUCCEEDED else None
            assert (job.status, job.error, final_result) == expected(n), job
        for operation in ("claim", "publish", "succeed", "fail"):
            assert store.faults[operation] > 0, f"no {operation} fault was injected"
        assert (
            sum(store.faults.values()) > JOBS * FAULT_RATE
        )  # at least one call a job, a fifth failing

        allowed = {CLAIM_RETRY_INITIAL * 2**k for k in range(8)} | {CLAIM_RETRY_MAXIMUM}
        delays = [float(d) for d in re.findall(r"retry_in=([0-9.]+)s", logs.text)]
        assert delays, "no claim was retried"
        assert {min(delay, CLAIM_RETRY_MAXIMUM) for delay in delays} <= {
            round(a, 3) for a in allowed
        }
        assert "left running" not in logs.text
        if lose_replies:  # claims that committed unbeknown to their worker were queued again
            assert "requeued jobs whose claim reply was lost" in logs.text
        assert "Traceback" not in logs.text


MIXED_JOBS = 600


def flaky(ctx: JobContext, payload: Work) -> Done:
    """Fails 'flaky' on its first attempt when n is odd; a retry resumes from its checkpoint."""
    if ctx.checkpoint is None:
        ctx.publish(Done(-payload.n))
    if payload.n % 2 and ctx.attempt == 1:
        raise Failure("flaky")
    return Done(payload.n)


@pytest.mark.parametrize("lose_replies", [False, True], ids=["refused", "reply-lost"])
@pytest.mark.parametrize("engine", ENGINES)
def test_faults_with_retries_schedules_and_cancels_in_the_mix_run_no_job_past_its_attempts(
    engine, lose_replies, tmp_path
):
    with ExitStack() as stack:
        inner = open_store(engine, tmp_path, stack)
        stack.callback(inner.close)
        store = FaultyStore(inner, rate=FAULT_RATE, seed=11, lose_replies=lose_replies)
        logs = LogCapture()
        runner = Runner(store, FastClock(), workers=WORKERS, logger=logs.logger)
        kind = runner.kinds.register(
            "flaky", flaky, payload=Work, failure_codes=["flaky"], retry_on=["flaky"],
            max_attempts=3, backoff=(0.05, 0.2),
        )  # fmt: skip
        runner.start()
        stack.callback(lambda: (runner.stop(), runner.join(timeout=10)))
        job_ids = []
        for n in range(MIXED_JOBS):
            delay = 0.2 if n % 3 == 0 else None  # a third scheduled a little later
            job_ids.append(inner_enqueue(kind, Work(n), delay))
        cancelled = set(job_ids[::10])
        for job_id in cancelled:
            cancel_through_faults(runner, job_id)

        jobs = wait_until_finished(inner, job_ids, within=180)

        print(f"{engine} mixed lose_replies={lose_replies}: faults {dict(store.faults)}")
        assert runner.live_workers == WORKERS
        for n, (job_id, job) in enumerate(zip(job_ids, jobs, strict=True)):
            row = inner.row(job_id)
            assert row["attempt"] <= 3, row  # never more attempts than allowed
            if job_id in cancelled and job.status is Status.FAILED:
                assert job.error == "cancelled", job
            elif job.status is Status.FAILED:
                # Only faults could fail it: three attempts, each ended by a lost outcome.
                assert job.error in {"flaky", "interrupted by restart"}, job
            else:
                assert job.result == {"n": n}, job
        assert sum(job.status is Status.SUCCEEDED for job in jobs) > MIXED_JOBS * 0.8
        assert "Traceback" not in logs.text


def inner_enqueue(kind, payload, delay):
    """Enqueue, retrying a fault: the application's own retry of a failed request."""
    for _ in range(20):
        try:
            return kind.enqueue(payload, delay=delay)
        except Exception:
            continue
    raise AssertionError("enqueue never got through")


def cancel_through_faults(runner, job_id):
    for _ in range(20):
        try:
            return runner.cancel(job_id)
        except Exception:
            continue
    raise AssertionError("cancel never got through")
