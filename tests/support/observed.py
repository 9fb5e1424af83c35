"""A store wrapper that tells waiting tests when anything changed, and can inject faults.

Tests wait on its condition with a deadline instead of polling or sleeping.
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Callable
from typing import Any

from jobtable.core.errors import StoreUnavailableError
from jobtable.core.jobs import Claim, ClaimedJob, Job, NewJob
from jobtable.core.ports import JobStore


class ObservedStore:
    def __init__(self, inner: JobStore) -> None:
        self.inner = inner
        self.changed = threading.Condition()
        self.claim_faults: list[Exception] = []
        """Exceptions the next claims raise, one each, before reaching the store."""
        self.claims = 0
        self.lost_claims = 0
        """How many next claims reach the store and then raise, as a lost reply would."""
        self.finish_faults: list[Exception] = []
        """Exceptions the next outcome writes (succeed, fail, finish) raise, one each."""

    def _notify(self) -> None:
        with self.changed:
            self.changed.notify_all()

    def _after(self, call: Callable[[], Any]) -> Any:
        try:
            return call()
        finally:
            self._notify()

    def create(self, job: NewJob, *, now: datetime.datetime) -> None:
        self._after(lambda: self.inner.create(job, now=now))

    def claim_next(self, *, runner_id: str, now: datetime.datetime) -> ClaimedJob | None:
        with self.changed:
            self.claims += 1
            fault = self.claim_faults.pop(0) if self.claim_faults else None
        if fault is not None:
            self._notify()
            raise fault
        claimed: ClaimedJob | None = self._after(
            lambda: self.inner.claim_next(runner_id=runner_id, now=now)
        )
        with self.changed:
            lose = claimed is not None and self.lost_claims > 0
            self.lost_claims -= lose
        if lose:
            raise StoreUnavailableError("database unavailable")  # committed, but no reply
        return claimed

    def publish(self, claim: Claim, *, result: str, now: datetime.datetime) -> bool:
        return bool(self._after(lambda: self.inner.publish(claim, result=result, now=now)))

    def _finish_fault(self) -> None:
        with self.changed:
            fault = self.finish_faults.pop(0) if self.finish_faults else None
        if fault is not None:
            self._notify()
            raise fault

    def succeed(self, claim: Claim, *, result: str, now: datetime.datetime) -> bool:
        self._finish_fault()
        return bool(self._after(lambda: self.inner.succeed(claim, result=result, now=now)))

    def fail(self, claim: Claim, *, code: str, now: datetime.datetime) -> bool:
        self._finish_fault()
        return bool(self._after(lambda: self.inner.fail(claim, code=code, now=now)))

    def finish_and_claim_next(self, claim, outcome, *, runner_id, now):
        self._finish_fault()
        return self._after(
            lambda: self.inner.finish_and_claim_next(claim, outcome, runner_id=runner_id, now=now)
        )

    def hold_liveness(self, runner_id: str) -> None:
        self.inner.hold_liveness(runner_id)

    def release_liveness(self, runner_id: str) -> None:
        self._after(lambda: self.inner.release_liveness(runner_id))

    def recover_orphans(self, *, code, max_attempts, now):
        return self._after(
            lambda: self.inner.recover_orphans(code=code, max_attempts=max_attempts, now=now)
        )

    def running_claims(self, runner_id: str) -> list[Claim]:
        return self.inner.running_claims(runner_id)

    def requeue_claims(self, claims, *, now):
        return self._after(lambda: self.inner.requeue_claims(claims, now=now))

    def get(self, job_id: str) -> Job | None:
        return self.inner.get(job_id)

    def row(self, job_id: str) -> dict[str, Any] | None:
        row: dict[str, Any] | None = self.inner.row(job_id)  # type: ignore[attr-defined]
        return row

    def close(self) -> None:
        self.inner.close()

    def wait_until(self, predicate: Callable[[], bool], *, within: float = 10.0) -> None:
        """Wait for ``predicate()`` to hold after some store change; AssertionError at the deadline."""
        with self.changed:
            if not self.changed.wait_for(predicate, within):
                raise AssertionError(f"condition not met within {within}s")
