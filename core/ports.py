"""The JobStore port: what the runner needs from a database.

Every method that writes takes ``now`` from the runner's clock: a store never
reads the time itself, so every engine's tests control it. Every method may
raise ``StoreError`` (``StoreUnavailableError`` when the database cannot be
reached); nothing else escapes a store.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Protocol

from jobtable.core.idempotency import KeepAnswer, KeptAnswer
from jobtable.core.jobs import (
    CancelOutcome,
    Claim,
    ClaimedJob,
    Enqueued,
    HeldJob,
    Job,
    JobCount,
    JobDetail,
    JobEvents,
    JobFilter,
    NewJob,
    Pruned,
    QueueState,
    Recovered,
    RetryOutcome,
)
from jobtable.core.liveness import (
    LivenessTerms,
    RunnerInfo,
    RunnerRecord,
    RunnerSighting,
    Settlement,
)
from jobtable.core.outcome import Outcome


class Watcher(Protocol):
    """What ``watch`` returns: a thread telling of other connections' commits until stopped."""

    def stop(self) -> None: ...


class JobStore(Protocol):
    def create(
        self, job: NewJob, *, now: datetime.datetime, keep: KeepAnswer | None = None
    ) -> Enqueued:
        """Store ``job`` queued (scheduled when due later), durably: once this returns, the
        job survives a crash. With ``keep``, its answer is kept for the idempotency key in
        the same transaction.

        Its retry policy is stored with it, so any runner can settle it,
        whether or not it registered the job's kind. When another job of its
        kind holds its ``unique_key``, nothing is stored and that job's id is
        returned with ``duplicate`` set; race-free (a unique index).
        """
        ...

    def create_many(
        self,
        jobs: Collection[NewJob],
        *,
        now: datetime.datetime,
        keep: KeepAnswer | None = None,
    ) -> list[Enqueued]:
        """``create`` for each job, in one transaction: all are stored, or none (``keep``'s
        answer with them)."""
        ...

    def create_in(self, connection: Any, job: NewJob, *, now: datetime.datetime) -> Enqueued:
        """``create`` on the application's own connection, inside its open transaction.

        The job exists once the application commits and never if it rolls
        back. TypeError when the connection is not one of this engine's.
        """
        ...

    def claim_next(
        self,
        *,
        runner_id: str,
        now: datetime.datetime,
        kinds: Collection[str] | None = None,
        queues: Collection[str] | None = None,
    ) -> ClaimedJob | None:
        """Atomically mark the first due job in claim order running under ``runner_id``.

        Claim order is priority (0 first), then due time, then id. Only a job
        of one of ``kinds`` (None: any kind) in one of ``queues`` (None: every
        queue), never one in a paused queue: a job of a kind nobody
        registered waits. The job's attempt number goes up by one and is part
        of the returned claim. Returns None when no such job is due. Two
        callers, in any threads or processes, never claim the same job. A row
        it cannot read (written by a tool or an older version) is failed
        ``internal_error``, logged once, and the next job claimed instead.
        """
        ...

    def promote_due(self, *, now: datetime.datetime) -> int:
        """Make every scheduled job due by ``now`` claimable; returns how many."""
        ...

    def next_due(self) -> datetime.datetime | None:
        """When the earliest scheduled job falls due; None when none is scheduled."""
        ...

    def publish(self, claim: Claim, *, result: str, now: datetime.datetime) -> bool:
        """Store ``result`` (JSON text) as the partial result of a job running under ``claim``.

        Returns False, changing nothing, when the job is not running under
        exactly that claim (a stale worker).
        """
        ...

    def record(self, claim: Claim, outcome: Outcome, *, now: datetime.datetime) -> bool:
        """Record the decided ``outcome`` of the attempt running under ``claim``.

        ``Succeed``: succeeded with its result. ``Fail``: failed with its code.
        ``RunAgain``: queued again, due at ``run_at`` (scheduled when later; due
        at once it keeps its place in line), its attempt given back unless it
        counts; a job someone asked to cancel meanwhile fails ``cancelled``
        instead. Each keeps the last partial result. A job that ends for good
        lets go of a unique key held while it is active. False and no change
        unless the job is running under exactly ``claim`` (a stale worker).
        """
        ...

    def record_and_claim(
        self,
        outcomes: Sequence[tuple[Claim, Outcome]],
        *,
        limit: int,
        runner_id: str,
        now: datetime.datetime,
        kinds: Collection[str] | None = None,
        queues: Collection[str] | None = None,
    ) -> tuple[list[bool], list[ClaimedJob]]:
        """Record each outcome as ``record`` would, then claim up to
        ``limit`` due jobs as ``claim_next`` would, all in one transaction.

        A runner's workers hand in their outcomes and take their next jobs
        together: one commit (one fsync) for the whole batch instead of two
        per job. Returns whether each outcome was recorded, in order (False
        when its claim is stale), and the jobs claimed, in claim order. When
        it raises, none of it happened.
        """
        ...

    def release_claims(self, claims: Collection[Claim], *, now: datetime.datetime) -> int:
        """Give back jobs claimed under exactly these claims whose handlers never ran.

        Each goes back to queued with its attempt number and start time given
        back, as if it had never been claimed: a claim that returned after the
        runner began to stop, or whose reply was lost (the database committed
        it, the answer never came). Fenced like every write; returns how many
        moved.
        """
        ...

    def running_jobs(self, owner: str | None) -> list[HeldJob]:
        """Every job running under ``owner``'s claims (None: running rows that record no
        owner), with its kind and stored retry policy; a row whose policy or attempt cannot
        be read comes with none (``HeldJob.unreadable`` names the column)."""
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
        self, settlements: Collection[Settlement], *, now: datetime.datetime
    ) -> Recovered:
        """Record each dead runner's decided outcomes and delete its row, if its evidence holds.

        In one transaction per runner: its beat must be the one judged (or its
        row still absent) and, when the verdict rests on it, its lock still
        absent; otherwise it is left alone. Each outcome is recorded as
        ``record`` would, fenced by its job's claim under the verdict's runner (a
        job that ended meanwhile is left as it is); one found running with no
        attempt counts one. Returns how many failed and how many were queued again.
        """
        ...

    def unregister_runner(self, runner_id: str) -> None:
        """Delete the runner's row and release its lock. Idempotent."""
        ...

    def runners(self) -> list[RunnerRecord]:
        """Every registered runner, oldest first."""
        ...

    # -- cancellation, queues, detail ----------------------------------------

    def cancel(self, job_id: str, *, now: datetime.datetime) -> CancelOutcome | None:
        """Fail a queued or scheduled job ``cancelled`` at once; flag a running one.

        A running job's runner sees the flag on its next sweep (or at once in
        the process that cancels) and tells the handler to stop. None when
        there is no such job.
        """
        ...

    def cancel_requests(self, runner_id: str) -> list[Claim]:
        """The claims of jobs running under ``runner_id`` that someone asked to cancel."""
        ...

    def set_queue_paused(self, name: str, *, paused: bool, now: datetime.datetime) -> None:
        """Pause (claims pass its jobs by) or resume a queue, for every process."""
        ...

    def queues(self) -> list[QueueState]:
        """Every queue that holds jobs or is paused, with counts by public status (a queue
        without either is not listed: resuming one forgets it)."""
        ...

    def paused_queues(self) -> frozenset[str]: ...

    def begin_idempotent(
        self, key: str, request_hash: str, *, now: datetime.datetime
    ) -> KeptAnswer | None:
        """Take ``key`` for a request (None), or return what is kept for it already.

        Atomic: of concurrent callers with one key, exactly one gets None. A
        key kept past ``core.idempotency.KEEP_FOR``, or left unanswered past
        ``IN_FLIGHT_FOR``, is taken afresh.
        """
        ...

    def finish_idempotent(self, key: str, *, status: int, body: str) -> None:
        """Keep the answer to the request that took ``key``."""
        ...

    def drop_idempotent(self, key: str) -> None:
        """Let ``key`` go (its request failed in a way a retry may fix), unless an answer is
        kept for it: then its jobs were stored after all (a reply lost after the commit)."""
        ...

    def record_schedule(self, name: str, *, now: datetime.datetime) -> datetime.datetime:
        """When the schedule ``name`` was first recorded (now, the first time it is seen)."""
        ...

    def detail(self, job_id: str) -> JobDetail | None:
        """Everything about the job that may be shown, or None when there is none."""
        ...

    def jobs_ahead(self, detail: JobDetail) -> int:
        """Due jobs of the same kind and queue before this one in claim order."""
        ...

    def get(self, job_id: str) -> Job | None:
        """The job with ``job_id``, or None when there is none; with its ``version``."""
        ...

    # -- observing and operating ----------------------------------------------

    def list_jobs(self, which: JobFilter, *, limit: int, after: str | None) -> list[Job]:
        """Up to ``limit`` jobs that match ``which``, newest first (by id), ids below ``after``.

        Each comes from an index range, so a page costs the same at any depth.
        """
        ...

    def events(self, job_id: str, *, after: int | None) -> JobEvents | None:
        """The job's kept changes after version ``after`` (``core.jobs.events_after``), read in
        one snapshot with the job; None when there is no such job."""
        ...

    def retry(self, job_id: str, *, now: datetime.datetime) -> RetryOutcome | None:
        """Queue a failed job again, due now, with one more attempt allowed.

        Its ended attempts stay in its detail. REFUSED, changing nothing, when it
        has not failed; None when there is no such job.
        """
        ...

    def take_lease(
        self, name: str, *, holder: str, until: datetime.datetime, now: datetime.datetime
    ) -> bool:
        """Hold the chore ``name`` until ``until``: True when free (or expired, or ours)."""
        ...

    def prune(
        self, cutoffs: Mapping[str, datetime.datetime], *, now: datetime.datetime, limit: int
    ) -> Pruned:
        """Delete up to ``limit`` finished jobs that ended before their status's cutoff, in one
        short transaction, with their history; and up to ``limit`` idempotency keys past
        their keeping time. Returns how many of each.

        A status without a cutoff is kept. A row holding a unique key that an
        enqueue could still make (``key_until`` not passed, or kept for good)
        stays, so retention never lets a second job in.
        """
        ...

    def job_counts(self) -> list[JobCount]:
        """Jobs queued, scheduled and running, by queue and kind (read from partial indexes)."""
        ...

    def close(self) -> None:
        """Release the store's connections. Idempotent."""
        ...
