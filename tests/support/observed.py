"""A store that tells waiting tests when anything changed, and can inject faults.

Tests wait on its condition with a deadline instead of polling or sleeping. It wakes them
after every store call (core/around.py), whatever the method.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from jobtable.core.around import AroundStore, Call, StoreHook
from jobtable.core.batch import BatchDone
from jobtable.core.errors import StoreUnavailableError
from jobtable.core.ports import JobStore

T = TypeVar("T")


class ObservedStore(AroundStore, StoreHook):
    def __init__(self, inner: JobStore) -> None:
        super().__init__(inner, self)
        self.changed = threading.Condition()
        self.claim_faults: list[Exception] = []
        """Exceptions the next claims raise, one each, before reaching the store."""
        self.claims = 0
        self.lost_claims = 0
        """How many next claims reach the store and then raise, as a lost reply would."""
        self.slow_claim: threading.Event | None = None
        """While set to an Event, the next claim that takes a job commits, then waits for it
        before replying (a reply slow to come, not lost)."""
        self.slow_claim_waiting = False
        self.finish_faults: list[Exception] = []
        """Exceptions the next outcome writes (``record``, a batch of outcomes) raise, one each."""

    def around(self, call: Call, proceed: Callable[[], T]) -> T:
        if (
            call.method == "claim_next"
            or (call.method == "record_and_claim" and not call.argument(0, "outcomes"))
            or (call.method == "run_batch" and not call.argument(0, "batch").outcomes)
        ):
            return self._claim(proceed)
        if call.method in ("record", "record_and_claim", "run_batch"):
            self._finish_fault()
        return self._after(proceed)

    def _notify(self) -> None:
        with self.changed:
            self.changed.notify_all()

    def _after(self, call: Callable[[], T]) -> T:
        try:
            return call()
        finally:
            self._notify()

    def _finish_fault(self) -> None:
        with self.changed:
            fault = self.finish_faults.pop(0) if self.finish_faults else None
        if fault is not None:
            self._notify()
            raise fault

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
            if isinstance(claimed, tuple):
                took = bool(claimed[1])
            elif isinstance(claimed, BatchDone):
                took = bool(claimed.claimed or claimed.held or any(claimed.started))
            else:
                took = claimed is not None
            lose = took and self.lost_claims > 0
            self.lost_claims -= lose
            slow, self.slow_claim = (self.slow_claim, None) if took else (None, self.slow_claim)
            self.slow_claim_waiting = slow is not None
            self.changed.notify_all()
        if slow is not None:
            slow.wait(30)
            with self.changed:
                self.slow_claim_waiting = False
        if lose:
            raise StoreUnavailableError("database unavailable")  # committed, but no reply
        return claimed

    def wait_until(self, predicate: Callable[[], bool], *, within: float = 10.0) -> None:
        """Wait for ``predicate()`` to hold after some store change; AssertionError at the deadline."""
        with self.changed:
            if not self.changed.wait_for(predicate, within):
                raise AssertionError(f"condition not met within {within}s")
