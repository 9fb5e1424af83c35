"""The JobStore port: what the runner needs from a database.

Every method that writes takes ``now`` from the runner's clock: a store never
reads the time itself, so every engine's tests control it. Every method may
raise ``StoreError`` (``StoreUnavailableError`` when the database cannot be
reached); nothing else escapes a store.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection
from typing import Protocol

from jobtable.core.jobs import Claim, ClaimedJob, Job, NewJob, Recovered
from jobtable.core.liveness import (
    DeadRunner,
    LivenessTerms,
    RunnerInfo,
    RunnerRecord,
    RunnerSighting,
)
from jobtable.core.outcome import Fail, Succeed


class JobStore(Protocol):
    def create(self, job: NewJob, *, now: datetime.datetime) -> None:
        """Store ``job`` queued, durably: once this returns, the job survives a crash.

        Its attempt budget (``job.max_attempts``) is stored with it, so any
        runner can settle it, whether or not it registered the job's kind.
        """
        ...

    def claim_next(
        self, *, runner_id: str, now: datetime.datetime, kinds: Collection[str] | None = None
    ) -> ClaimedJob | None:
        """Atomically mark the oldest queued job running under ``runner_id`` and return it.

        Only a job of one of ``kinds`` (None: any kind): a runner claims only
        what it can run, and a job of a kind nobody registered waits. The
        job's attempt number goes up by one and is part of the returned
        claim. Returns None when no such job is queued. Two callers, in any
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
        self,
        claim: Claim,
        outcome: Succeed | Fail,
        *,
        runner_id: str,
        now: datetime.datetime,
        kinds: Collection[str] | None = None,
    ) -> tuple[bool, ClaimedJob | None]:
        """Record ``outcome`` as ``succeed`` or ``fail`` would, then claim the next job, atomically.

        One transaction (one commit, one fsync) per job instead of two: the
        worker that finishes a job takes the next without a second round
        trip. Returns whether the outcome was recorded (False when the claim
        is stale) and the next job, or None when none is queued. When it
        raises, neither happened.
        """
        ...

    def interrupt(self, claim: Claim, *, code: str, now: datetime.datetime) -> bool:
        """Settle a job whose handler was stopped: queued again while its attempts last, else failed.

        A job whose attempt number is below the ``max_attempts`` stored on it
        goes back to queued; any other fails with ``code``. Both keep the last
        partial result. False and no change unless running under ``claim``.
        """
        ...

    def release_claims(self, claims: Collection[Claim], *, now: datetime.datetime) -> int:
        """Give back jobs claimed under exactly these claims whose handlers never ran.

        Each goes back to queued with its attempt number given back, as if it
        had never been claimed: a claim that returned after the runner began
        to stop, or whose reply was lost (the database committed it, the
        answer never came). Fenced like every write; returns how many moved.
        """
        ...

    def running_claims(self, runner_id: str) -> list[Claim]:
        """The claims of every job running under ``runner_id``."""
        ...

    # -- liveness and the runners table ----------------------------------

    liveness_terms: LivenessTerms
    """How this store's liveness can run out (core/liveness.py)."""

    def register_runner(self, info: RunnerInfo, *, now: datetime.datetime) -> None:
        """Take ``info.id``'s liveness lock and write its row in the runners table.

        The lock dies with the process (an OS file lock, a database session),
        so a crash shows. Raises StoreError when either cannot be done; then
        neither is held.
        """
        ...

    def confirm_liveness(self, runner_id: str, *, timeout: float) -> bool:
        """Check that ``runner_id``'s lock is still held, within ``timeout`` seconds.

        True when it was held all along. False when it had been lost (a
        database session ended, a lock file removed) and was taken again just
        now: jobs held in the runner's name may have been settled meanwhile.
        Raises LivenessLockLostError when the lock is certainly absent and
        cannot be taken again, StoreError when it cannot be confirmed
        (unreachable, too slow). ``timeout`` bounds the whole call.
        """
        ...

    def beat(self, runner_id: str, *, busy: int, now: datetime.datetime) -> bool:
        """Raise the runner's beat and record ``busy`` workers and ``now`` as last seen.

        False when the runner has no row: another runner judged it dead and
        settled its jobs.
        """
        ...

    def sight_runners(self) -> list[RunnerSighting]:
        """Every registered runner, and every owner of a running job that has no row.

        Each with its beat (None without a row) and the state of its lock.
        """
        ...

    def settle_dead(
        self, verdicts: Collection[DeadRunner], *, code: str, now: datetime.datetime
    ) -> Recovered:
        """Settle each dead runner's running jobs and delete its row, if its evidence still holds.

        In one transaction per runner: its beat must be the one judged (or its
        row still absent) and, when the verdict rests on it, its lock still
        absent; otherwise it is left alone. Each running job goes back to
        queued while its stored attempts last, else fails with ``code``; both
        keep the last partial result.
        """
        ...

    def unregister_runner(self, runner_id: str) -> None:
        """Delete the runner's row and release its lock. Idempotent."""
        ...

    def runners(self) -> list[RunnerRecord]:
        """Every registered runner, oldest first."""
        ...

    def get(self, job_id: str) -> Job | None:
        """The job with ``job_id``, or None when there is none."""
        ...

    def close(self) -> None:
        """Release the store's connections. Idempotent."""
        ...
