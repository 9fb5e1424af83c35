"""What a runner tells its observer, and logs, about each job: on the in-memory store and a
fake clock, so every duration and wait is exact."""

from __future__ import annotations

import logging
import threading

import pytest

from jobtable.adapters.memory import MemoryStore
from jobtable.core import Failure, JobContext, Snooze
from jobtable.core.errors import StoreError
from jobtable.core.jobs import Recovered
from jobtable.core.liveness import SWEEP_INTERVAL
from jobtable.core.observer import NoObserver
from tests.support.harness import JobSystem
from tests.unit.kinds_for_tests import (
    SENTINEL_SECRET,
    CountPayload,
    CountResult,
    count,
    register_outcomes,
)
from tests.unit.test_liveness import a_dead_runner_holding, sweep


class RecordingObserver:
    """Keeps every event in order; thread-safe, as workers report from their threads."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._events: list[tuple] = []
        self.changed = threading.Condition(self._guard)

    def _add(self, event: tuple) -> None:
        with self.changed:
            self._events.append(event)
            self.changed.notify_all()

    def job_started(self, kind: str, *, waited: float | None) -> None:
        self._add(("started", kind, waited))

    def job_ended(self, kind: str, *, code: str, final: bool, seconds: float) -> None:
        self._add(("ended", kind, code, final, seconds))

    def claim_failed(self) -> None:
        self._add(("claim_failed",))

    def jobs_recovered(self, recovered: Recovered) -> None:
        self._add(("recovered", recovered))

    @property
    def events(self) -> list[tuple]:
        with self._guard:
            return list(self._events)

    def wait_for(self, predicate, within: float = 10.0) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: predicate(self._events), within), self._events


class RecordCapture(logging.Handler):
    """The log records themselves, with the fields a JSON line would carry."""

    def __init__(self, logger: logging.Logger) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def about(self, job_id: str) -> list[tuple[str, str, str | None, str | None]]:
        return [
            (r.levelname, r.getMessage().split(" job_id=")[0], getattr(r, "kind", None),
             getattr(r, "code", None))
            for r in self.records
            if getattr(r, "job_id", None) == job_id
        ]  # fmt: skip


@pytest.fixture
def observer() -> RecordingObserver:
    return RecordingObserver()


@pytest.fixture
def system(observer):
    made = JobSystem(MemoryStore(), observer=observer)
    yield made
    made.stop()


def ended(observer: RecordingObserver) -> list[tuple]:
    return [event[1:4] for event in observer.events if event[0] == "ended"]


def test_a_runner_reports_to_no_one_unless_given_an_observer():
    assert isinstance(JobSystem(MemoryStore()).runner.observer, NoObserver)


def test_each_attempt_is_reported_started_then_ended_with_its_code(system, observer):
    ok, quota, crash = register_outcomes(system.kinds)
    for handle in (ok, quota, crash):
        handle.enqueue(CountPayload(steps=1))
    system.runner.drain()
    assert [event[:2] for event in observer.events] == [
        ("started", "count"), ("ended", "count"),
        ("started", "quota"), ("ended", "quota"),
        ("started", "crash"), ("ended", "crash"),
    ]  # fmt: skip
    assert ended(observer) == [
        ("count", "succeeded", True),
        ("quota", "over_quota", True),
        ("crash", "internal_error", True),
    ]


def test_an_attempt_that_will_run_again_is_reported_not_final(system, observer):
    runs = []

    def flaky(ctx: JobContext, payload: CountPayload) -> CountResult:
        runs.append(ctx.attempt)
        if len(runs) == 1:
            raise Failure("busy")
        if len(runs) == 2:
            raise Snooze(30)  # gives its attempt back
        return CountResult(done=ctx.attempt)

    kind = system.kinds.register(
        "flaky", flaky, payload=CountPayload, failure_codes=["busy"], retry_on=["busy"],
        max_attempts=3, backoff=(1.0, 1.0),
    )  # fmt: skip
    kind.enqueue(CountPayload())
    system.runner.drain()
    system.clock.advance(1)  # past the backoff
    system.runner.drain()
    system.clock.advance(30)  # past the snooze
    system.runner.drain()
    assert ended(observer) == [
        ("flaky", "busy", False),
        ("flaky", "snoozed", False),
        ("flaky", "succeeded", True),
    ]
    assert runs == [1, 2, 2]


def test_the_queue_wait_is_from_when_the_job_was_due_to_its_claim(system, observer):
    kind = system.kinds.register("count", count, payload=CountPayload)
    kind.enqueue(CountPayload(), delay=10)
    kind.enqueue(CountPayload())  # due at once
    system.clock.advance(25)
    system.runner.drain()
    waits = sorted(event[2] for event in observer.events if event[0] == "started")
    assert waits == [15.0, 25.0]


def test_the_run_time_is_the_handlers_time_on_the_runners_clock(system, observer):
    def slow(ctx: JobContext, payload: CountPayload) -> CountResult:
        system.clock.advance(3.5)
        return CountResult(done=1)

    system.kinds.register("slow", slow, payload=CountPayload).enqueue(CountPayload())
    system.runner.drain()
    ((_, kind, code, final, seconds),) = [e for e in observer.events if e[0] == "ended"]
    assert (kind, code, final, seconds) == ("slow", "succeeded", True, 3.5)


def test_a_claim_that_fails_is_reported_once_per_failure(system, observer):
    system.store.claim_faults += [StoreError("database locked")] * 2
    system.start()
    for delay in (0.05, 0.1):
        system.clock.wait_for_sleepers(1)
        system.clock.advance(delay)
    observer.wait_for(lambda events: events.count(("claim_failed",)) == 2)
    system.store.wait_until(lambda: system.store.claims >= 3)  # the good, empty claim
    assert observer.events == [("claim_failed",), ("claim_failed",)]


def test_a_dead_runners_jobs_settled_by_a_sweep_are_reported(make_system):
    observer = RecordingObserver()
    survivor = make_system(sweep_interval=SWEEP_INTERVAL, observer=observer)
    kind = survivor.kinds.register("slow", count, payload=CountPayload)
    kind.enqueue(CountPayload())
    claim = a_dead_runner_holding(
        survivor.store, survivor.clock
    )  # before the survivor can claim it
    survivor.start()
    survivor.runner.stop()  # no claims of its own: only its sweeps act
    for _ in range(2):  # its first look at start, then two sweeps' worth
        sweep(survivor)
    survivor.wait_for(claim.job_id)
    observer.wait_for(lambda events: ("recovered", Recovered(failed=1)) in events)
    assert [e for e in observer.events if e[0] == "recovered"] == [
        ("recovered", Recovered(failed=1, requeued=0))
    ]


def test_a_jobs_start_and_success_are_logged_at_debug_with_its_id_and_kind(system):
    records = RecordCapture(system.logs.logger)
    job_id = system.kinds.register("count", count, payload=CountPayload).enqueue(CountPayload())
    system.runner.drain()
    assert records.about(job_id) == [
        ("DEBUG", "job started", "count", None),
        ("DEBUG", "job succeeded", "count", "succeeded"),
    ]


def test_failures_are_logged_at_their_codes_level_with_the_code_and_no_exception_text(system):
    records = RecordCapture(system.logs.logger)
    _, quota, crash = register_outcomes(system.kinds)
    declared = quota.enqueue(CountPayload())
    internal = crash.enqueue(CountPayload())
    system.runner.drain()
    assert records.about(declared) == [
        ("DEBUG", "job started", "quota", None),
        ("INFO", "job failed", "quota", "over_quota"),
    ]
    assert records.about(internal) == [
        ("DEBUG", "job started", "crash", None),
        ("ERROR", "job failed", "crash", "internal_error"),
    ]
    assert "exception_type=ConnectionError" in system.logs.text
    assert SENTINEL_SECRET not in system.logs.text


def test_a_retry_is_logged_at_info_with_the_code_it_failed_with(system):
    records = RecordCapture(system.logs.logger)

    def busy(ctx: JobContext, payload: CountPayload) -> CountResult:
        raise Failure("busy")

    kind = system.kinds.register(
        "busy", busy, payload=CountPayload, failure_codes=["busy"], retry_on=["busy"],
        max_attempts=2,
    )  # fmt: skip
    job_id = kind.enqueue(CountPayload())
    system.runner.drain()
    assert records.about(job_id)[-1] == ("INFO", "job attempt failed; retrying", "busy", "busy")


def test_no_debug_line_is_built_when_debug_is_off(system):
    system.logs.logger.setLevel(logging.INFO)
    records = RecordCapture(system.logs.logger)
    job_id = system.kinds.register("count", count, payload=CountPayload).enqueue(CountPayload())
    system.runner.drain()
    assert records.about(job_id) == []
