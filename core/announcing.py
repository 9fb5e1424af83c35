"""The runner's view of its store: every write that changes a job pokes that job's readers.

Wrapping the store once keeps the announcements out of the runner, the
keeper and the recorder: whichever of them writes, the readers waiting in
``JobChanges`` hear of it. Reads pass straight through.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from jobtable.core.changes import JobChanges
from jobtable.core.jobs import (
    CancelOutcome,
    Claim,
    ClaimedJob,
    Pruned,
    Recovered,
    RetryOutcome,
)
from jobtable.core.liveness import Settlement
from jobtable.core.outcome import Outcome
from jobtable.core.ports import JobStore


class AnnouncingStore:
    """A JobStore that tells ``changes`` about each job it changes."""

    def __init__(self, store: JobStore, changes: JobChanges) -> None:
        self._store = store
        self._changes = changes

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def _claimed(self, claimed: ClaimedJob | None) -> ClaimedJob | None:
        if claimed is not None:
            self._changes.changed(claimed.id)
        return claimed

    def claim_next(self, **arguments: Any) -> ClaimedJob | None:
        return self._claimed(self._store.claim_next(**arguments))

    def publish(self, claim: Claim, *, result: str, now: datetime.datetime) -> bool:
        held = self._store.publish(claim, result=result, now=now)
        self._changes.changed(claim.job_id)
        return held

    def record(self, claim: Claim, outcome: Outcome, *, now: datetime.datetime) -> bool:
        held = self._store.record(claim, outcome, now=now)
        self._changes.changed(claim.job_id)
        return held

    def record_and_claim(
        self, outcomes: Sequence[tuple[Claim, Outcome]], **arguments: Any
    ) -> tuple[list[bool], list[ClaimedJob]]:
        held, claimed = self._store.record_and_claim(outcomes, **arguments)
        for claim, _ in outcomes:
            self._changes.changed(claim.job_id)
        for job in claimed:
            self._changes.changed(job.id)
        return held, claimed

    def release_claims(self, claims: Collection[Claim], *, now: datetime.datetime) -> int:
        moved = self._store.release_claims(claims, now=now)
        for claim in claims:
            self._changes.changed(claim.job_id)
        return moved

    def settle_dead(
        self, settlements: Collection[Settlement], *, now: datetime.datetime
    ) -> Recovered:
        recovered = self._store.settle_dead(settlements, now=now)
        if recovered.failed or recovered.requeued:
            self._changes.changed_somewhere()
        return recovered

    def cancel(self, job_id: str, *, now: datetime.datetime) -> CancelOutcome | None:
        outcome = self._store.cancel(job_id, now=now)
        self._changes.changed(job_id)
        return outcome

    def retry(self, job_id: str, *, now: datetime.datetime) -> RetryOutcome | None:
        outcome = self._store.retry(job_id, now=now)
        self._changes.changed(job_id)
        return outcome

    def prune(
        self, cutoffs: Mapping[str, datetime.datetime], *, now: datetime.datetime, limit: int
    ) -> Pruned:
        pruned = self._store.prune(cutoffs, now=now, limit=limit)
        if pruned.jobs:
            self._changes.changed_somewhere()  # a stream of a job that is gone ends
        return pruned
