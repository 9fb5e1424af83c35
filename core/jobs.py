"""Value objects for jobs, as stored and as shown."""

from __future__ import annotations

import json
from typing import Any

import attrs

from jobtable.core.status import Status


@attrs.frozen(kw_only=True)
class Job:
    """A job as shown to anyone: exactly what GET /api/v1/jobs/{id} serves.

    ``result`` is the JSON text of the latest partial or final result (None
    until one is published); ``error`` is a failure code, set only on a
    failed job.
    """

    id: str
    kind: str
    status: Status
    result: str | None
    error: str | None

    def to_public(self) -> dict[str, Any]:
        """The job as a JSON object with exactly the keys id, kind, status, result, error."""
        return {
            "id": self.id,
            "kind": self.kind,
            "status": self.status.value,
            "result": None if self.result is None else json.loads(self.result),
            "error": self.error,
        }


@attrs.frozen(kw_only=True)
class NewJob:
    """A job about to be stored queued; ``payload`` is JSON text."""

    id: str
    kind: str
    payload: str
    max_attempts: int = 1
    """How many times it may be claimed: stored with it, so any runner can settle it."""


@attrs.frozen(kw_only=True)
class Claim:
    """Who holds a running job. Every write about the job is fenced by all three fields."""

    job_id: str
    runner_id: str
    attempt: int


@attrs.frozen(kw_only=True)
class ClaimedJob:
    """A job a runner has just marked running."""

    claim: Claim
    kind: str
    payload: str

    @property
    def id(self) -> str:
        return self.claim.job_id


@attrs.frozen(kw_only=True)
class Recovered:
    """What a sweep for orphaned jobs did: how many it failed and how many it queued again."""

    failed: int = 0
    requeued: int = 0
