"""The JobStore port: what the runner needs from a database.

Every method that writes takes ``now`` from the runner's clock: a store never
reads the time itself, so every engine's tests control it. Every method may
raise ``StoreError`` (``StoreUnavailableError`` when the database cannot be
reached); nothing else escapes a store.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection, Mapping
from typing import Protocol

from jobtable.core.jobs import Claim, ClaimedJob, Job, NewJob, Recovered
from jobtable.core.outcome import Fail, Succeed


class JobStore(Protocol):
    def create(self, job: NewJob, *, now: datetime.datetime) -> None:
        """Store ``job`` queued, durably: once this returns, the job survives a crash."""
        ...

    def claim_next(self, *, runner_id: str, now: datetime.datetime) -> ClaimedJob | None:
        """Atomically mark the oldest queued job running under ``runner_id`` and return it.

        The job's attempt number goes up by one and is part of the returned
        claim. Returns None when no job is queued. Two callers, in any
        threads or processes, never claim the same job.
        """
        ...

    def publish(self, claim: Claim, *, result: str, now: datetime.datetime) -> bool:
        """Store ``result`` (JSON text) as the partial result of a job running under ``claim``.

        Returns False, changing nothing, when the job is not running under
        exactly that claim (a stale worker).
        """
        ...

    def succeed(self, claim: Claim, *, result: str, now: datetime.datetime) -> bool:
        """Mark the job succeeded with ``result``; False and no change unless running under ``claim``."""
        ...

    def fail(self, claim: Claim, *, code: str, now: datetime.datetime) -> bool:
        """Mark the job failed with ``code``, keeping its last partial result.

        False and no change unless the job is running under ``claim``.
        """
        ...

    def finish_and_claim_next(
        self, claim: Claim, outcome: Succeed | Fail, *, runner_id: str, now: datetime.datetime
    ) -> tuple[bool, ClaimedJob | None]:
        """Record ``outcome`` as ``succeed`` or ``fail`` would, then claim the next job, atomically.

        One transaction (one commit, one fsync) per job instead of two: the
        worker that finishes a job takes the next without a second round
        trip. Returns whether the outcome was recorded (False when the claim
        is stale) and the next job, or None when none is queued. When it
        raises, neither happened.
        """
        ...

    def hold_liveness(self, runner_id: str) -> None:
        """Take ``runner_id``'s liveness lock and hold it until released or the process ends.

        While it is held, no store in any process treats the runner's
        running jobs as orphaned. The lock dies with the process (an OS file
        lock, a database session), so a crash releases it. Idempotent: called
        again, it confirms the lock is still held and takes it again if it
        was lost (a database session ended by a server restart).
        """
        ...

    def release_liveness(self, runner_id: str) -> None:
        """Let go of ``runner_id``'s liveness lock. Idempotent."""
        ...

    def recover_orphans(
        self, *, code: str, max_attempts: Mapping[str, int], now: datetime.datetime
    ) -> Recovered:
        """Settle every running job whose owner holds no liveness lock; touch no other job.

        A job whose attempt number is below its kind's ``max_attempts``
        (default 1) goes back to queued; any other fails with ``code``. Both
        keep the last partial result.
        """
        ...

    def running_claims(self, runner_id: str) -> list[Claim]:
        """The claims of every job running under ``runner_id``."""
        ...

    def requeue_claims(self, claims: Collection[Claim], *, now: datetime.datetime) -> int:
        """Put the jobs running under exactly these claims back in the queue; how many moved.

        For a claim whose answer was lost (the database committed it, the
        reply never came): no worker runs the job, yet its owner is alive.
        Fenced like every write, so a job finished meanwhile is left alone.
        """
        ...

    def get(self, job_id: str) -> Job | None:
        """The job with ``job_id``, or None when there is none."""
        ...

    def close(self) -> None:
        """Release the store's connections. Idempotent."""
        ...
