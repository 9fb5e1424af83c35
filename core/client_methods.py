"""The Client's methods on a Runner: ``runner.get(id)`` is ``runner.client.get(id)``."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from typing import Any

from jobtable.core.bulk import BulkAction, BulkFilter, BulkResult
from jobtable.core.client import Client
from jobtable.core.enqueue_options import EnqueueOptions
from jobtable.core.held_back import HeldBack
from jobtable.core.history import History
from jobtable.core.idempotency import KeepAnswer, Repeat
from jobtable.core.job_history import JobEvents
from jobtable.core.jobs import (
    CancelOutcome,
    Enqueued,
    Job,
    JobCount,
    JobDetail,
    JobPage,
    QueueState,
    Retention,
    RetryOutcome,
)
from jobtable.core.kind_spec import EncodedJob
from jobtable.core.limits import QueueLimit
from jobtable.core.liveness import RunnerRecord
from jobtable.core.schedules import StoredSchedule


class ClientMethods:
    """Enqueues, reads, waits and operator actions, each its ``client``'s (core/client.py)."""

    client: Client

    def get(self, job_id: str) -> Job | None:
        return self.client.get(job_id)

    def enqueue(
        self,
        kind: str,
        payload: Any,
        options: EnqueueOptions | None = None,
        *,
        keep: KeepAnswer | None = None,
    ) -> Enqueued:
        return self.client.enqueue(kind, payload, options, keep=keep)

    def enqueue_batch(
        self, jobs: Sequence[EncodedJob], *, keep: KeepAnswer | None = None
    ) -> list[Enqueued]:
        return self.client.enqueue_batch(jobs, keep=keep)

    def encode(self, kind: str, payload: Any, options: EnqueueOptions | None = None) -> EncodedJob:
        return self.client.encode(kind, payload, options)

    def detail(self, job_id: str) -> JobDetail | None:
        return self.client.detail(job_id)

    def events(self, job_id: str, after: int | None = None) -> JobEvents | None:
        return self.client.events(job_id, after)

    def wait(self, job_id: str, timeout: float | None = None) -> Job:
        return self.client.wait(job_id, timeout)

    def follow(self, job_id: str) -> Iterator[Job]:
        return self.client.follow(job_id)

    def list_jobs(
        self,
        *,
        status: str | None = None,
        kind: str | None = None,
        queue: str | None = None,
        limit: int = 50,
        after: str | None = None,
        state: str | None = None,
        before: str | None = None,
        id_part: str | None = None,
    ) -> JobPage:
        return self.client.list_jobs(
            status=status,
            kind=kind,
            queue=queue,
            limit=limit,
            after=after,
            state=state,
            before=before,
            id_part=id_part,
        )

    def cancel(self, job_id: str) -> tuple[CancelOutcome, Job] | None:
        return self.client.cancel(job_id)

    def retry(self, job_id: str) -> tuple[RetryOutcome, Job] | None:
        return self.client.retry(job_id)

    def bulk(
        self,
        action: BulkAction,
        which: BulkFilter,
        *,
        dry_run: bool = False,
        by: str = "python",
        through: str | None = None,
    ) -> BulkResult:
        return self.client.bulk(action, which, dry_run=dry_run, by=by, through=through)

    def queues(self, held_back: list[HeldBack] | None = None) -> list[QueueState]:
        return self.client.queues(held_back)

    def pause_queue(self, name: str) -> None:
        self.client.pause_queue(name)

    def resume_queue(self, name: str) -> None:
        self.client.resume_queue(name)

    def set_queue_limit(self, name: str, limit: QueueLimit) -> None:
        self.client.set_queue_limit(name, limit)

    def history(
        self, *, queue: str | None = None, kind: str | None = None, queues: Collection[str] = ()
    ) -> History:
        return self.client.history(queue=queue, kind=kind, queues=queues)

    def oldest_waiting(self, queues: Collection[str]) -> dict[str, float]:
        return self.client.oldest_waiting(queues)

    def runners(self) -> list[RunnerRecord]:
        return self.client.runners()

    def schedules(self) -> list[StoredSchedule]:
        return self.client.schedules()

    def held_back(self) -> list[HeldBack]:
        return self.client.held_back()

    def job_counts(self) -> list[JobCount]:
        return self.client.job_counts()

    def prune(self, retention: Retention | None = None) -> int | None:
        """Delete the finished jobs ``retention`` (default: this runner's) no longer keeps;
        how many, or None when another runner is pruning now."""
        return self.client.prune(retention)

    def begin_idempotent(self, key: str, request_hash: str) -> Repeat | None:
        return self.client.begin_idempotent(key, request_hash)

    def keep_answer(self, key: str, status: int, body: str) -> None:
        self.client.keep_answer(key, status, body)

    def forget_key(self, key: str) -> None:
        self.client.forget_key(key)
