"""A job's history as readers follow it: its public state after each change, numbered by
version, and what a reader who saw some version gets next (``events_after``)."""

from __future__ import annotations

import attrs

from jobtable.core.jobs import Job
from jobtable.core.status import Status


@attrs.frozen(kw_only=True)
class JobEvent:
    """A job's public state right after one of its changes, numbered by ``version``."""

    version: int
    job: Job


@attrs.frozen(kw_only=True)
class JobEvents:
    """What a job's history holds after a version a reader saw.

    ``reset`` is the job's current state, given instead when the changes after
    that version are no longer all kept: a reader starts again from it, and
    ``events`` are then the changes after it (none).
    """

    events: tuple[JobEvent, ...]
    reset: JobEvent | None = None

    @property
    def last(self) -> JobEvent | None:
        """The newest state these tell of."""
        if self.events:
            return self.events[-1]
        return self.reset


def events_after(current: Job, kept: tuple[JobEvent, ...], *, after: int | None) -> JobEvents:
    """The changes of ``current`` after version ``after`` (None: from its creation).

    ``kept`` holds the stored changes with a version above ``after`` (or above
    0), oldest first, read in one snapshot with ``current``. When their
    numbers do not start right after ``after``, some were trimmed: the reader
    gets ``current`` as a reset, as it does for a version the job never had
    (a reader that confused two jobs, or a client's made-up Last-Event-ID).
    """
    start = 0 if after is None else after
    if start > current.version:  # a version this job never had: start again from now
        return JobEvents(events=(), reset=JobEvent(version=current.version, job=current))
    if start == current.version:
        if after is None:  # never changed: its creation is its one state
            return JobEvents(events=(JobEvent(version=0, job=current),))
        return JobEvents(events=())
    if not kept or kept[0].version != start + 1:
        return JobEvents(events=(), reset=JobEvent(version=current.version, job=current))
    if after is None:
        created = Job(
            id=current.id, kind=current.kind, status=Status.QUEUED, result=None, error=None
        )
        return JobEvents(events=(JobEvent(version=0, job=created), *kept))
    return JobEvents(events=kept)
