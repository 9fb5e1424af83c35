"""A store wrapper that tells waiting tests when anything changed, and can inject faults.

Tests wait on its condition with a deadline instead of polling or sleeping.
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Callable
from typing import Any

from jobtable.core.errors import StoreUnavailableError
from jobtable.core.jobs import Claim, ClaimedJob, NewJob
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
        """Exceptions the next outcome writes (succeed, fail, a batch of outcomes) raise, one each."""

    def _notify(self) -> None:
        with self.changed:
            self.changed.notify_all()

    def _after(self, call: Callable[[], Any]) -> Any:
        try:
            return call()
        finally:
            self._notify()

    def create(self, job: NewJob, *, now: datetime.datetime, keep=None):
        return self._after(lambda: self.inner.create(job, now=now, keep=keep))

    def create_many(self, jobs, *, now: datetime.datetime, keep=None):
        return self._after(lambda: self.inner.create_many(jobs, now=now, keep=keep))

    def claim_next(
        self, *, runner_id: str, now: datetime.datetime, kinds=None, queues=None
    ) -> ClaimedJob | None:
        return self._claim(  # type: ignore[no-any-return]
            lambda: self.inner.claim_next(runner_id=runner_id, now=now, kinds=kinds, queues=queues)
        )

    def _claim(self, call: Callable[[], Any]) -> Any:
        """A claim (alone, or a batch with no outcome): counted, faulted, its reply lost."""
        with self.changed:
            self.claims += 1
            fault = self.claim_faults.pop(0) if self.claim_faults else None
        if fault is not None:
            self._notify()
            raise fault
        claimed = self._after(call)
        with self.changed:
            took = bool(claimed[1]) if isinstance(claimed, tuple) else claimed is not None
            lose = took and self.lost_claims > 0
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

    def record(self, claim, outcome, *, now):
        self._finish_fault()
        return bool(self._after(lambda: self.inner.record(claim, outcome, now=now)))

    def record_and_claim(self, outcomes, **arguments):
        if not outcomes:
            return self._claim(lambda: self.inner.record_and_claim(outcomes, **arguments))
        self._finish_fault()
        return self._after(lambda: self.inner.record_and_claim(outcomes, **arguments))

    def promote_due(self, *, now):
        return self._after(lambda: self.inner.promote_due(now=now))

    def cancel(self, job_id, *, now):
        return self._after(lambda: self.inner.cancel(job_id, now=now))

    def set_queue_paused(self, name, *, paused, now):
        self._after(lambda: self.inner.set_queue_paused(name, paused=paused, now=now))

    def release_claims(self, claims, *, now):
        return self._after(lambda: self.inner.release_claims(claims, now=now))

    def register_runner(self, info, *, now):
        self._after(lambda: self.inner.register_runner(info, now=now))

    def beat(self, runner_id, *, busy, now):
        return self._after(lambda: self.inner.beat(runner_id, busy=busy, now=now))

    def settle_dead(self, settlements, *, now):
        return self._after(lambda: self.inner.settle_dead(settlements, now=now))

    def retry(self, job_id, *, now):
        return self._after(lambda: self.inner.retry(job_id, now=now))

    def prune(self, cutoffs, *, now, limit):
        return self._after(lambda: self.inner.prune(cutoffs, now=now, limit=limit))

    def unregister_runner(self, runner_id):
        self._after(lambda: self.inner.unregister_runner(runner_id))

    def confirm_liveness(self, runner_id, *, timeout):
        return self._after(lambda: self.inner.confirm_liveness(runner_id, timeout=timeout))

    def __getattr__(self, name: str) -> Any:
        """Reads (get, row, running_jobs, sight_runners, runners, ...) go to the store as is."""
        return getattr(self.inner, name)

    def wait_until(self, predicate: Callable[[], bool], *, within: float = 10.0) -> None:
        """Wait for ``predicate()`` to hold after some store change; AssertionError at the deadline."""
        with self.changed:
            if not self.changed.wait_for(predicate, within):
                raise AssertionError(f"condition not met within {within}s")
