"""Periodic schedules' ticks: which tick each schedule still owes, and enqueuing it.

The scheduler (core/scheduler.py) calls ``enqueue_due`` on every look; the
rules for one tick per schedule across runners are in core/schedules.py.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable

import attrs

from jobtable.core.clock import Clock
from jobtable.core.enqueue_options import EnqueueOptions
from jobtable.core.jobs import NewJob
from jobtable.core.kind_spec import EncodedJob
from jobtable.core.kinds import KindRegistry
from jobtable.core.ports import JobQueue
from jobtable.core.recording import loggable_category
from jobtable.core.schedules import Schedule

TICK_RETRY = 1.0
"""Seconds until a tick whose enqueue failed is tried again."""

_NO_OPTIONS = EnqueueOptions()


@attrs.define
class _ScheduleTicks:
    """A schedule's tick still to enqueue (after a store error, or missed) and its next one."""

    schedule: Schedule
    first_seen: datetime.datetime
    pending: datetime.datetime | None
    next: datetime.datetime


class Ticks:
    """The ticks of every schedule registered with ``kinds``, enqueued through ``store``.

    ``new_job`` makes a kind's job as an enqueue would (the runner's ids and
    defaults); ``enqueued`` is told of each tick's new job, to wake a worker.
    """

    def __init__(
        self,
        store: JobQueue,
        clock: Clock,
        log: logging.Logger,
        *,
        kinds: KindRegistry,
        new_job: Callable[[EncodedJob, datetime.datetime], NewJob],
        enqueued: Callable[[], None],
    ) -> None:
        self._store = store
        self._clock = clock
        self._log = log
        self._kinds = kinds
        self._new_job = new_job
        self._enqueued = enqueued
        self._ticks: dict[str, _ScheduleTicks] = {}  # schedule name -> its pending and next tick
        self.recorded = False
        """Whether ``record_schedules`` has run."""

    def record_schedules(self) -> None:
        """Learn when each schedule was first seen; queue its latest missed tick after that."""
        now = self._clock.now()
        for schedule in self._kinds.schedules():
            spec = self._kinds.get(schedule.kind)
            assert spec is not None  # a schedule is registered with its kind
            stored = schedule.stored(spec.queue)
            first_seen = self._store.record_schedule(stored, now=now)
            self._log.info(
                "schedule name=%s kind=%s expression=%r timezone=%s queue=%s next_run=%s",
                stored.name,
                stored.kind,
                stored.expression,
                stored.timezone,
                stored.queue,
                schedule.next_tick(now).isoformat(),
                extra={"kind": stored.kind},
            )
            latest = schedule.latest_tick(now)
            pending = latest if latest >= first_seen else None
            self._ticks[schedule.name] = _ScheduleTicks(
                schedule=schedule,
                first_seen=first_seen,
                pending=pending,
                next=schedule.next_tick(now),
            )
        self.recorded = True

    def enqueue_due(self) -> float | None:
        """Enqueue each schedule's pending tick; when the next tick is, on the monotonic clock
        (None: none)."""
        # The monotonic reading first: should the clock move between the two, the wait
        # comes out short (one more look), never long (a tick late).
        read_at = self._clock.monotonic()
        now = self._clock.now()
        soonest: float | None = None
        for ticks in self._ticks.values():
            schedule = ticks.schedule
            if now >= ticks.next:
                latest = schedule.latest_tick(now)  # only the latest one missed
                # Never one from before the schedule was first seen (a first deploy runs
                # nothing from the past) nor one already handled.
                if latest >= max(ticks.first_seen, ticks.next):
                    ticks.pending = latest
                ticks.next = schedule.next_tick(now)  # always after now: the wait is never 0
            if ticks.pending is not None:
                try:
                    self._enqueue_tick(schedule, ticks.pending, now)
                except Exception as error:
                    self._log.warning(
                        "enqueue a scheduled tick failed; retrying schedule=%s category=%s",
                        schedule.name,
                        loggable_category(error),
                    )
                    soonest = TICK_RETRY if soonest is None else min(soonest, TICK_RETRY)
                else:
                    ticks.pending = None
            until = max(0.0, (ticks.next - now).total_seconds())
            soonest = until if soonest is None else min(soonest, until)
        return None if soonest is None else read_at + soonest

    def _enqueue_tick(
        self, schedule: Schedule, tick: datetime.datetime, now: datetime.datetime
    ) -> None:
        spec = self._kinds.get(schedule.kind)
        assert spec is not None  # a schedule is registered with its kind
        job = attrs.evolve(
            self._new_job(
                EncodedJob(
                    spec=spec,
                    payload=schedule.payload,
                    options=_NO_OPTIONS,
                    limit_key=schedule.limit_key,
                    rate_key=schedule.rate_key,
                    fair_key=schedule.fair_key,
                ),
                now,
            ),
            run_at=tick,
            unique_key=schedule.unique_key(tick),
            unique_while_active=False,  # one job per tick, whatever becomes of it
            key_until=schedule.next_tick(tick),  # after that, no runner makes this tick again
        )
        enqueued = self._store.create(job, now=now)
        if not enqueued.duplicate:
            self._log.info(
                "enqueued a scheduled job schedule=%s tick=%s job_id=%s",
                schedule.name,
                tick.isoformat(),
                enqueued,
                extra={"job_id": str(enqueued), "kind": schedule.kind},
            )
            self._enqueued()
