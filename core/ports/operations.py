"""Operator actions: cancel, retry, pause, prune, and the keys of idempotent requests.

Part of the store port (core/ports/__init__.py): every write takes ``now`` from the
caller's clock; every method may raise ``StoreError``, nothing else.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Protocol

from jobtable.core.bulk import BulkBatch
from jobtable.core.idempotency import KeptAnswer
from jobtable.core.jobs import (
    CancelOutcome,
    JobFilter,
    Pruned,
    RetryOutcome,
)
from jobtable.core.limits import QueueLimit


class JobOperations(Protocol):
    def cancel(self, job_id: str, *, now: datetime.datetime) -> CancelOutcome | None:
        """Fail a queued or scheduled job ``cancelled`` at once; flag a running one.

        A running job's runner sees the flag on its next sweep (or at once in
        the process that cancels) and tells the handler to stop. None when
        there is no such job.
        """
        ...

    def retry(self, job_id: str, *, now: datetime.datetime) -> RetryOutcome | None:
        """Queue a failed job again, due now, with one more attempt allowed.

        Its ended attempts stay in its detail. REFUSED, changing nothing, when it
        has not failed; None when there is no such job.
        """
        ...

    def cancel_jobs(
        self, which: JobFilter, *, after: str | None, limit: int, now: datetime.datetime
    ) -> BulkBatch:
        """``cancel`` each of the next ``limit`` jobs ``which`` matches whose id is older than
        ``after`` (None: from the newest), newest first, in one transaction."""
        ...

    def retry_jobs(
        self, which: JobFilter, *, after: str | None, limit: int, now: datetime.datetime
    ) -> BulkBatch:
        """``retry`` each of the next ``limit`` jobs ``which`` matches whose id is older than
        ``after`` (None: from the newest), newest first, in one transaction."""
        ...

    def set_queue_paused(self, name: str, *, paused: bool, now: datetime.datetime) -> None:
        """Pause (claims pass its jobs by) or resume a queue, for every process."""
        ...

    def set_queue_limit(self, name: str, limit: QueueLimit, *, now: datetime.datetime) -> None:
        """Limit a queue's running jobs and starts across every runner (``QueueLimit()``
        removes them); its pause stays as it was. Runners claim its jobs apart from their
        next claim on."""
        ...

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

    def take_lease(
        self, name: str, *, holder: str, until: datetime.datetime, now: datetime.datetime
    ) -> bool:
        """Hold the chore ``name`` until ``until``: True when free (or expired, or ours)."""
        ...

    def prunable(self, cutoffs: Mapping[str, datetime.datetime], *, now: datetime.datetime) -> bool:
        """Whether ``prune`` with these cutoffs would delete anything now: a read, no write, so
        that a round with nothing to do costs no lease (an idle runner writes nothing)."""
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
