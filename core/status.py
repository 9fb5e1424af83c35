"""The life of a job: queued -> running -> succeeded | failed."""

from __future__ import annotations

import enum


class Status(enum.StrEnum):
    """A job's state, stored as its lower-case name."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"

    @property
    def finished(self) -> bool:
        return self in (Status.SUCCEEDED, Status.FAILED)
