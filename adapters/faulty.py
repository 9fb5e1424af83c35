"""A JobStore wrapper that makes a chosen fraction of calls raise a database error.

For tests only: it proves the runner survives a sick database (no worker
thread dies, claims back off, every outcome is recorded in the end). A fault
is raised before the call reaches the store, as a dropped connection or a
lock timeout would be, so nothing was written by a call that failed.
"""

from __future__ import annotations

import datetime
import random
import threading
from collections import Counter
from collections.abc import Iterable, Mapping

from core.errors import StoreError, StoreUnavailableError
from core.jobs import Claim, ClaimedJob, Job, NewJob, Recovered
from core.outcome import Fail, Succeed
from core.ports import JobStore

OPERATIONS = frozenset({"create", "claim", "publish", "succeed", "fail", "get", "sweep"})
"""What can be made to fail; a finish that also claims the next job counts as succeed or fail."""

_ERRORS = (
    lambda: StoreUnavailableError("database locked"),
    lambda: StoreUnavailableError("database unavailable"),
    lambda: StoreError("database error"),
)


class FaultyStore:
    def __init__(
        self,
        inner: JobStore,
        *,
        rate: float,
        operations: Iterable[str] = ("claim", "publish", "succeed", "fail"),
        seed: int = 0,
    ) -> None:
        chosen = frozenset(operations)
        if not chosen <= OPERATIONS:
            raise ValueError(f"unknown operations {sorted(chosen - OPERATIONS)}")
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"rate must be within 0..1, got {rate}")
        self.inner = inner
        self.rate = rate
        self._operations = chosen
        self._random = random.Random(seed)  # noqa: S311 -- chooses faults, not secrets
        self._lock = threading.Lock()
        self.calls: Counter[str] = Counter()
        """Calls seen per operation, faulted or not."""
        self.faults: Counter[str] = Counter()
        """Faults raised per operation."""

    def _maybe_fail(self, operation: str) -> None:
        with self._lock:
            self.calls[operation] += 1
            if operation not in self._operations or self._random.random() >= self.rate:
                return
            self.faults[operation] += 1
            error = self._random.choice(_ERRORS)()
        raise error

    def create(self, job: NewJob, *, now: datetime.datetime) -> None:
        self._maybe_fail("create")
        self.inner.create(job, now=now)

    def claim_next(self, *, runner_id: str, now: datetime.datetime) -> ClaimedJob | None:
        self._maybe_fail("claim")
        return self.inner.claim_next(runner_id=runner_id, now=now)

    def publish(self, claim: Claim, *, result: str, now: datetime.datetime) -> bool:
        self._maybe_fail("publish")
        return self.inner.publish(claim, result=result, now=now)

    def succeed(self, claim: Claim, *, result: str, now: datetime.datetime) -> bool:
        self._maybe_fail("succeed")
        return self.inner.succeed(claim, result=result, now=now)

    def fail(self, claim: Claim, *, code: str, now: datetime.datetime) -> bool:
        self._maybe_fail("fail")
        return self.inner.fail(claim, code=code, now=now)

    def finish_and_claim_next(
        self, claim: Claim, outcome: Succeed | Fail, *, runner_id: str, now: datetime.datetime
    ) -> tuple[bool, ClaimedJob | None]:
        self._maybe_fail("succeed" if isinstance(outcome, Succeed) else "fail")
        return self.inner.finish_and_claim_next(claim, outcome, runner_id=runner_id, now=now)

    def hold_liveness(self, runner_id: str) -> None:
        self.inner.hold_liveness(runner_id)

    def release_liveness(self, runner_id: str) -> None:
        self.inner.release_liveness(runner_id)

    def recover_orphans(
        self, *, code: str, max_attempts: Mapping[str, int], now: datetime.datetime
    ) -> Recovered:
        self._maybe_fail("sweep")
        return self.inner.recover_orphans(code=code, max_attempts=max_attempts, now=now)

    def get(self, job_id: str) -> Job | None:
        self._maybe_fail("get")
        return self.inner.get(job_id)

    def close(self) -> None:
        self.inner.close()
