"""One helper that builds the whole job system around a store, with a fake clock."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterator
from typing import Any

from jobtable.adapters.fake_clock import FakeClock
from jobtable.core import Job, Runner
from jobtable.core.ports import JobStore
from tests.support.logs import LogCapture
from tests.support.observed import ObservedStore


def as_datetime(value: object) -> datetime.datetime:
    """A stored time: SQLite and memory keep ISO text, PostgreSQL a timestamptz."""
    if isinstance(value, datetime.datetime):
        return value
    return datetime.datetime.fromisoformat(str(value))


def finished(job: Job | None) -> bool:
    return job is not None and job.status.finished


class JobSystem:
    """A runner over an observed store and a fake clock, stopped when the test ends."""

    def __init__(
        self,
        store: JobStore,
        *,
        workers: int = 1,
        clock: FakeClock | None = None,
        sweep_interval: float | None = None,
        check_interval: float | None = None,
        jitter: Callable[[], float] = lambda: 1.0,
        **runner_options: Any,
    ):
        self.store = store if isinstance(store, ObservedStore) else ObservedStore(store)
        self.clock = clock or FakeClock()
        self.logs = LogCapture()
        # No periodic sweep or liveness check unless a test asks: their sleeps on
        # the fake clock would show among the sleepers other tests count.
        self.runner = Runner(
            self.store,
            self.clock,
            workers=workers,
            logger=self.logs.logger,
            sweep_interval=sweep_interval,
            check_interval=check_interval,
            jitter=jitter,  # the backoff's full ceiling unless a test says otherwise
            **runner_options,
        )
        self.kinds = self.runner.kinds
        self._started = False

    @property
    def sweeps(self) -> int:
        """How many sweeps the runner's sweep thread has done."""
        return self.runner._registration.sweeps

    def start(self) -> JobSystem:
        self.runner.start()
        self._started = True
        return self

    def stop(self) -> None:
        """Both phases at once: handlers are told to stop, and the runner is joined."""
        if self._started:
            self.runner.stop_now()
            assert self.runner.join(timeout=None)
            self._started = False

    def wait_for(
        self, job_id: str, accept: Callable[[Job | None], bool] = finished, *, within: float = 10.0
    ) -> Job:
        """The job once ``accept`` takes it, waiting on store changes with a deadline."""
        seen: list[Job | None] = []

        def check() -> bool:
            job = self.store.get(job_id)
            seen[:] = [job]
            return accept(job)

        try:
            self.store.wait_until(check, within=within)
        except AssertionError:
            raise AssertionError(f"job {job_id} never reached the state; last {seen}") from None
        job = seen[0]
        assert job is not None
        return job


def system_factory(store: JobStore) -> Iterator[Callable[..., JobSystem]]:
    """A pytest fixture body: makes runners over one shared store and stops them all after."""
    systems: list[JobSystem] = []

    def make(
        workers: int = 1,
        sweep_interval: float | None = None,
        check_interval: float | None = None,
        **options: Any,
    ) -> JobSystem:
        system = JobSystem(
            store,
            workers=workers,
            sweep_interval=sweep_interval,
            check_interval=check_interval,
            **options,
        )
        systems.append(system)
        return system

    yield make
    for system in systems:
        system.stop()
