"""A runner never started, driven from the calling thread: ``drain`` runs every due job to
completion and ``run_schedules`` enqueues the ticks due, for tests (the JobTestKit) that
drive a fake clock. The ``Runner`` (core/runner.py) mixes it in and holds what it reads.
"""

from __future__ import annotations

import threading

from jobtable.core.background import BackgroundLoops
from jobtable.core.batch import Batch
from jobtable.core.clock import Clock
from jobtable.core.errors import RunnerStateError
from jobtable.core.executor import Executor
from jobtable.core.jobs import Job
from jobtable.core.ports import JobStore
from jobtable.core.worker import drain


class InThisThread:
    """``drain`` and ``run_schedules``, refused once the runner has started."""

    id: str
    _lifecycle: threading.Lock
    _started: bool
    _executor: Executor
    _store: JobStore
    _clock: Clock
    _kinds: frozenset[str]
    _queues: frozenset[str] | None
    _rules: Batch
    _loops: BackgroundLoops

    def _freeze_kinds(self) -> None:
        raise NotImplementedError  # the Runner's

    def run_schedules(self) -> float | None:
        """Enqueue each periodic schedule's tick due by now, in the calling thread; when the
        next is due, on the clock's monotonic time (None: no schedule). For tests that drive
        a fake clock (``JobTestKit.advance``); a started runner's scheduler does this itself.
        The schedules are recorded on the first call."""
        with self._lifecycle:
            if self._started:
                raise RunnerStateError("a started runner's scheduler enqueues the ticks")
        self._freeze_kinds()
        return self._loops.tick_in_this_thread()

    def drain(self) -> list[Job]:
        """Run every due job to completion in the calling thread; return them as finished.

        Jobs the handlers enqueue run too, when they are due. For tests:
        deterministic, no worker threads; a test advances its clock to make
        scheduled and retrying jobs due, then drains again. Refused once the
        runner has started; no kind may be registered after the first drain, as
        after start.
        """
        with self._lifecycle:
            if self._started:
                raise RunnerStateError("drain runs jobs without workers; the runner has started")
        self._freeze_kinds()
        return drain(
            self._executor,
            self._store,
            self._clock,
            runner_id=self.id,
            kinds=self._kinds,
            queues=self._queues,
            rules=self._rules,
        )
