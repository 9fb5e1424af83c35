"""A JobStore wrapper that makes a chosen fraction of calls raise a database error.

For tests only: it proves the runner survives a sick database (no worker
thread dies, claims back off, every outcome is recorded in the end). By
default a fault is raised before the call reaches the store, as a dropped
connection or a lock timeout would be, so nothing was written by a call that
failed. With ``lose_replies`` the call reaches the store and commits, and
then the fault is raised, as when a connection drops after COMMIT was sent:
the caller cannot tell, and must cope with a write it was told failed.
"""

from __future__ import annotations

import datetime
import random
import threading
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any, TypeVar

from jobtable.core.errors import StoreError, StoreUnavailableError
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
from jobtable.core.outcome import Outcome, Succeed
from jobtable.core.ports import JobStore

T = TypeVar("T")

OPERATIONS = frozenset({"create", "claim", "publish", "succeed", "fail", "get", "sweep"})
"""What can be made to fail; outcomes recorded with claims count as succeed or fail."""

_ERRORS = (
    lambda: StoreUnavailableError("database locked"),
    lambda: StoreUnavailableError("database unavailable"),
    lambda: StoreError("database error"),
)


def _operation_of(outcomes: Sequence[tuple[Claim, Outcome]]) -> str:
    """A batch counts as its first outcome's operation; one with none is a claim."""
    if not outcomes:
        return "claim"
    return "succeed" if isinstance(outcomes[0][1], Succeed) else "fail"


class FaultyStore:
    def __init__(
        self,
        inner: JobStore,
        *,
        rate: float,
        operations: Iterable[str] = ("claim", "publish", "succeed", "fail"),
        seed: int = 0,
        lose_replies: bool = False,
    ) -> None:
        chosen = frozenset(operations)
        if not chosen <= OPERATIONS:
            raise ValueError(f"unknown operations {sorted(chosen - OPERATIONS)}")
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"rate must be within 0..1, got {rate}")
        self.inner = inner
        self.rate = rate
        self.lose_replies = lose_replies
        self._operations = chosen
        self._random = random.Random(seed)  # noqa: S311 -- chooses faults, not secrets
        self._lock = threading.Lock()
        self.calls: Counter[str] = Counter()
        """Calls seen per operation, faulted or not."""
        self.faults: Counter[str] = Counter()
        """Faults raised per operation."""

    def _fault(self, operation: str) -> StoreError | None:
        with self._lock:
            self.calls[operation] += 1
            if operation not in self._operations or self._random.random() >= self.rate:
                return None
            self.faults[operation] += 1
            error: StoreError = self._random.choice(_ERRORS)()
            return error

    def _call(self, operation: str, call: Callable[[], T]) -> T:
        fault = self._fault(operation)
        if fault is None:
            return call()
        if self.lose_replies:
            call()
        raise fault

    def create(
        self, job: NewJob, *, now: datetime.datetime, keep: KeepAnswer | None = None
    ) -> Enqueued:
        return self._call("create", lambda: self.inner.create(job, now=now, keep=keep))

    def create_many(
        self, jobs: Collection[NewJob], *, now: datetime.datetime, keep: KeepAnswer | None = None
    ) -> list[Enqueued]:
        return self._call("create", lambda: self.inner.create_many(jobs, now=now, keep=keep))

    def create_in(self, connection: Any, job: NewJob, *, now: datetime.datetime) -> Enqueued:
        return self._call("create", lambda: self.inner.create_in(connection, job, now=now))

    def claim_next(
        self,
        *,
        runner_id: str,
        now: datetime.datetime,
        kinds: Collection[str] | None = None,
        queues: Collection[str] | None = None,
    ) -> ClaimedJob | None:
        return self._call(
            "claim",
            lambda: self.inner.claim_next(runner_id=runner_id, now=now, kinds=kinds, queues=queues),
        )

    def promote_due(self, *, now: datetime.datetime) -> int:
        return self._call("claim", lambda: self.inner.promote_due(now=now))

    def next_due(self) -> datetime.datetime | None:
        return self._call("claim", self.inner.next_due)

    def publish(self, claim: Claim, *, result: str, now: datetime.datetime) -> bool:
        return self._call("publish", lambda: self.inner.publish(claim, result=result, now=now))

    def record(self, claim: Claim, outcome: Outcome, *, now: datetime.datetime) -> bool:
        return self._call(
            _operation_of([(claim, outcome)]), lambda: self.inner.record(claim, outcome, now=now)
        )

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
        return self._call(
            _operation_of(outcomes),
            lambda: self.inner.record_and_claim(
                outcomes, limit=limit, runner_id=runner_id, now=now, kinds=kinds, queues=queues
            ),
        )

    def release_claims(self, claims: Collection[Claim], *, now: datetime.datetime) -> int:
        return self._call("sweep", lambda: self.inner.release_claims(claims, now=now))

    def running_jobs(self, owner: str | None) -> list[HeldJob]:
        return self._call("sweep", lambda: self.inner.running_jobs(owner))

    @property
    def liveness_terms(self) -> LivenessTerms:
        return self.inner.liveness_terms

    def register_runner(self, info: RunnerInfo, *, now: datetime.datetime) -> None:
        self.inner.register_runner(info, now=now)

    def confirm_liveness(self, runner_id: str, *, timeout: float) -> bool:
        return self.inner.confirm_liveness(runner_id, timeout=timeout)

    def beat(self, runner_id: str, *, busy: int, now: datetime.datetime) -> bool:
        return self._call("sweep", lambda: self.inner.beat(runner_id, busy=busy, now=now))

    def sight_runners(self) -> list[RunnerSighting]:
        return self._call("sweep", self.inner.sight_runners)

    def settle_dead(
        self, settlements: Collection[Settlement], *, now: datetime.datetime
    ) -> Recovered:
        return self._call("sweep", lambda: self.inner.settle_dead(settlements, now=now))

    def unregister_runner(self, runner_id: str) -> None:
        self.inner.unregister_runner(runner_id)

    def runners(self) -> list[RunnerRecord]:
        return self.inner.runners()

    def get(self, job_id: str) -> Job | None:
        return self._call("get", lambda: self.inner.get(job_id))

    def cancel(self, job_id: str, *, now: datetime.datetime) -> CancelOutcome | None:
        return self._call("fail", lambda: self.inner.cancel(job_id, now=now))

    def cancel_requests(self, runner_id: str) -> list[Claim]:
        return self._call("sweep", lambda: self.inner.cancel_requests(runner_id))

    def set_queue_paused(self, name: str, *, paused: bool, now: datetime.datetime) -> None:
        self.inner.set_queue_paused(name, paused=paused, now=now)

    def queues(self) -> list[QueueState]:
        return self.inner.queues()

    def paused_queues(self) -> frozenset[str]:
        return self.inner.paused_queues()

    def job_counts(self) -> list[JobCount]:
        return self._call("get", self.inner.job_counts)

    def list_jobs(self, which: JobFilter, *, limit: int, after: str | None) -> list[Job]:
        return self._call("get", lambda: self.inner.list_jobs(which, limit=limit, after=after))

    def events(self, job_id: str, *, after: int | None) -> JobEvents | None:
        return self._call("get", lambda: self.inner.events(job_id, after=after))

    def retry(self, job_id: str, *, now: datetime.datetime) -> RetryOutcome | None:
        return self._call("fail", lambda: self.inner.retry(job_id, now=now))

    def begin_idempotent(
        self, key: str, request_hash: str, *, now: datetime.datetime
    ) -> KeptAnswer | None:
        return self._call("create", lambda: self.inner.begin_idempotent(key, request_hash, now=now))

    def finish_idempotent(self, key: str, *, status: int, body: str) -> None:
        self._call("create", lambda: self.inner.finish_idempotent(key, status=status, body=body))

    def drop_idempotent(self, key: str) -> None:
        self.inner.drop_idempotent(key)

    def record_schedule(self, name: str, *, now: datetime.datetime) -> datetime.datetime:
        return self._call("create", lambda: self.inner.record_schedule(name, now=now))

    def detail(self, job_id: str) -> JobDetail | None:
        return self._call("get", lambda: self.inner.detail(job_id))

    def jobs_ahead(self, detail: JobDetail) -> int:
        return self.inner.jobs_ahead(detail)

    def close(self) -> None:
        self.inner.close()
