"""Reads: jobs, their details, history, lists and counts, and the queues.

Part of the store port (core/ports/__init__.py): every write takes ``now`` from the
caller's clock; every method may raise ``StoreError``, nothing else.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Protocol

from jobtable.core.held_back import HeldBack, QueueUse
from jobtable.core.job_history import JobEvents
from jobtable.core.jobs import Job, JobCount, JobDetail, JobFilter, QueueState
from jobtable.core.limits import RateLimit, RunningLimit
from jobtable.core.schedules import StoredSchedule


class JobReads(Protocol):
    def get(self, job_id: str) -> Job | None:
        """The job with ``job_id``, or None when there is none; with its ``version``."""
        ...

    def detail(self, job_id: str) -> JobDetail | None:
        """Everything about the job that may be shown, or None when there is none."""
        ...

    def schedules(self) -> list[StoredSchedule]:
        """Every schedule a runner recorded, by name, with its queue's pause and its last
        tick (``next_run`` left None: the core works it out)."""
        ...

    def jobs_ahead(self, detail: JobDetail) -> int:
        """Due jobs of the same kind and queue before this one in claim order."""
        ...

    def running_alike(self, job_id: str) -> tuple[int, int]:
        """Jobs running now of this job's kind, and of its kind with its limit key."""
        ...

    def starts_alike(
        self, job_id: str, *, since: datetime.datetime
    ) -> tuple[list[datetime.datetime], list[datetime.datetime]]:
        """Starts after ``since`` of this job's kind, and of its kind with its rate key, oldest
        first (a rate-limited kind's, as its claims recorded them)."""
        ...

    def queue_use(self, name: str, *, now: datetime.datetime) -> QueueUse | None:
        """The queue's limits and their use now (running jobs, starts in its rate's window);
        None when an operator set none."""
        ...

    def held_back(
        self,
        limits: Mapping[str, RunningLimit],
        rates: Mapping[str, RateLimit],
        *,
        now: datetime.datetime,
    ) -> list[HeldBack]:
        """Due jobs that limits hold back now, by kind, queue and limit type, each counted
        once (core/held_back.py): the limited queues' own, and those of ``limits`` (lowered
        to the smallest any live runner registered) and ``rates``."""
        ...

    def list_jobs(
        self, which: JobFilter, *, limit: int, after: str | None, before: str | None = None
    ) -> list[Job]:
        """Up to ``limit`` jobs that match ``which``, newest first (by id), ids below ``after``;
        with ``before``, the ``limit`` jobs just above it, oldest first (a previous page).

        Each comes from an index range, so a page costs the same at any depth.
        """
        ...

    def count_jobs(self, which: JobFilter) -> int:
        """How many jobs match ``which`` (a bulk action's dry run)."""
        ...

    def events(self, job_id: str, *, after: int | None) -> JobEvents | None:
        """The job's kept changes after version ``after`` (``core.job_history.events_after``), read in
        one snapshot with the job; None when there is no such job."""
        ...

    def job_counts(self) -> list[JobCount]:
        """Jobs queued, scheduled and running, by queue and kind (read from partial indexes)."""
        ...

    def queues(self) -> list[QueueState]:
        """Every queue that holds jobs or is paused, with counts by public status (a queue
        without either is not listed: resuming one forgets it)."""
        ...

    def paused_queues(self) -> frozenset[str]: ...
