"""The queue's hot path: store jobs, claim them, record what became of them.

Part of the store port (core/ports/__init__.py): every write takes ``now`` from the
caller's clock; every method may raise ``StoreError``, nothing else.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Protocol

from jobtable.core.batch import Batch, BatchDone
from jobtable.core.idempotency import KeepAnswer
from jobtable.core.jobs import (
    Claim,
    ClaimedJob,
    Enqueued,
    HeldJob,
    NewJob,
)
from jobtable.core.outcome import Outcome
from jobtable.core.schedules import StoredSchedule


class JobQueue(Protocol):
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
        queue), never one in a paused queue, nor one in a limited queue past
        its limits (it learns which queues are limited as ``run_batch`` does,
        and claims again): a job of a kind nobody registered waits. The job's
        attempt number goes up by one and is part
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

    def run_batch(
        self,
        batch: Batch,
        *,
        runner_id: str,
        now: datetime.datetime,
        kinds: Collection[str] | None = None,
        queues: Collection[str] | None = None,
    ) -> BatchDone:
        """Run ``batch`` in one transaction, in its order: record its outcomes, give back
        and start the jobs held ahead it names, claim running and hold ahead as many due
        jobs as it asks (as ``claim_next`` would pick them, never a job another runner
        holds). A job held ahead stays ``queued`` under ``held_by`` = ``runner_id``: shown
        queued, cancelled at once by ``cancel``, and started only by this runner while it
        still holds it. With ``durable`` False the commit need not reach the disk before
        this returns. When it raises, none of it happened.
        """
        ...

    def give_back_held(self, runner_id: str) -> int:
        """Free every job ``runner_id`` holds ahead (its stop, its lost liveness); how many."""
        ...

    def put_back(
        self,
        claims: Collection[Claim],
        *,
        now: datetime.datetime,
        started: Mapping[Claim, object] | None = None,
    ) -> int:
        """Give back jobs claimed under exactly these claims whose handlers never ran.

        With ``started`` (``HeldJob.started`` by claim, as ``running_jobs`` read them),
        each is also fenced on its start: a later run of the job under an equal claim
        (its attempt was given back, then the same runner took it again) is left alone.

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

    def cancel_requests(self, runner_id: str) -> list[Claim]:
        """The claims of jobs running under ``runner_id`` that someone asked to cancel."""
        ...

    def record_schedule(
        self, schedule: StoredSchedule, *, now: datetime.datetime
    ) -> datetime.datetime:
        """Record ``schedule`` as this runner runs it (its kind, expression, zone and queue,
        for any process to list); when a schedule of its name was first recorded (now, the
        first time it is seen)."""
        ...
