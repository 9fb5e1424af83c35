"""A runner's background loops besides its workers: the scheduler (due jobs, periodic ticks,
handlers' deadlines), retention's pruning, the dashboard's minute counts, and the watch for jobs other connections commit;
started, stopped and joined together by the runner (core/runner.py)."""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable

from jobtable.core.clock import Clock
from jobtable.core.deadlines import Deadlines
from jobtable.core.jobs import NewJob
from jobtable.core.kind_spec import EncodedJob
from jobtable.core.kinds import KindRegistry
from jobtable.core.minutes import MinuteTally
from jobtable.core.minutes_loop import MinutesLoop
from jobtable.core.ports import JobStore
from jobtable.core.retention import PruneLoop, Pruner
from jobtable.core.scheduler import Scheduler
from jobtable.core.ticks import Ticks
from jobtable.core.wakes import SchedulerWakes, WorkerWakes
from jobtable.core.watching import StoreWatch


class BackgroundLoops:
    """Each loop on a thread of its own once started."""

    def __init__(
        self,
        store: JobStore,
        clock: Clock,
        log: logging.Logger,
        *,
        kinds: KindRegistry,
        new_job: Callable[[EncodedJob, datetime.datetime], NewJob],
        workers: WorkerWakes,
        wakes: SchedulerWakes,
        deadlines: Deadlines,
        act_on_deadlines: Callable[[], None],
        workers_gone: Callable[[], bool],
        pruner: Pruner,
        notice: Callable[[], None],
        watch: bool,
        tally: MinuteTally,
    ) -> None:
        """``notice`` hears of jobs other connections committed (when ``watch`` and the store
        can be watched); ``tally`` is written for the dashboard's charts; the rest is what
        the scheduler and pruning need."""
        self._ticks = Ticks(
            store, clock, log, kinds=kinds, new_job=new_job, enqueued=workers.wake_one
        )
        self._scheduler = Scheduler(
            store,
            clock,
            log,
            wakes=wakes,
            ticks=self._ticks,
            deadlines=deadlines,
            act_on_deadlines=act_on_deadlines,
            workers=workers,
            workers_gone=workers_gone,
        )
        self._pruning = PruneLoop(pruner, clock, log)
        self._minutes = MinutesLoop(
            tally, lambda rows: store.add_minutes(rows, now=clock.now()), clock, log
        )
        self._watching = StoreWatch(store, notice, enabled=watch)

    def prepare(self) -> None:
        """Before registering: the schedules recorded (a failure leaves nothing registered),
        then the watch started, so a job committed before the workers' first claims is seen."""
        self._ticks.record_schedules()
        self._watching.start()

    def tick_in_this_thread(self) -> float | None:
        """For a runner never started (the JobTestKit): enqueue each schedule's tick due by
        now in the calling thread, the schedules recorded on the first call; when the next
        tick is due, on the clock's monotonic time (None: no schedule)."""
        if not self._ticks.recorded:
            self._ticks.record_schedules()
        return self._ticks.enqueue_due()

    def start(self, *, prunes: bool) -> None:
        self._scheduler.start()
        self._minutes.start()
        if prunes:
            self._pruning.start()

    def stop_watching(self) -> None:
        self._watching.stop()

    def stop_pruning(self) -> None:
        self._pruning.stop()

    def finish(self, timeout: float | None) -> None:
        """Once the workers are done: the last minute counts written, and a prune under way
        ended, before the store closes."""
        self._minutes.stop(timeout)
        self._pruning.join(timeout)
