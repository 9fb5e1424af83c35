"""A store that makes a chosen fraction of calls raise a database error, for tests only.

It proves the runner survives a sick database. By default a fault is raised before the
call reaches the store (a dropped connection, a lock timeout); with ``lose_replies`` the
call commits and then the fault is raised, as when a connection drops after COMMIT.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

from jobtable.core.around import AroundStore, Call, StoreHook
from jobtable.core.errors import StoreError, StoreUnavailableError
from jobtable.core.outcome import Succeed
from jobtable.core.ports import JobStore

T = TypeVar("T")

OPERATIONS = frozenset({"create", "claim", "publish", "succeed", "fail", "get", "sweep"})
"""What can be made to fail; outcomes recorded with claims count as succeed or fail."""

_ERRORS = (
    lambda: StoreUnavailableError("database locked"),
    lambda: StoreUnavailableError("database unavailable"),
    lambda: StoreError("database error"),
)


def _outcomes(call: Call) -> str:
    """A batch counts as its first outcome's operation; one with none is a claim."""
    if call.method == "run_batch":
        outcomes = call.argument(0, "batch").outcomes
    else:
        outcomes = call.argument(0, "outcomes")
    if not outcomes:
        return "claim"
    return "succeed" if isinstance(outcomes[0][1], Succeed) else "fail"


def _recorded(call: Call) -> str:
    return "succeed" if isinstance(call.argument(1, "outcome"), Succeed) else "fail"


_OPERATION_OF: Mapping[str, str | Callable[[Call], str]] = {
    "create": "create",
    "create_many": "create",
    "create_in": "create",
    "begin_idempotent": "create",
    "finish_idempotent": "create",
    "record_schedule": "create",
    "claim_next": "claim",
    "promote_due": "claim",
    "next_due": "claim",
    "record_and_claim": _outcomes,
    "run_batch": _outcomes,
    "give_back_held": "sweep",
    "publish": "publish",
    "record": _recorded,
    "cancel": "fail",
    "retry": "fail",
    "put_back": "sweep",
    "running_jobs": "sweep",
    "beat": "sweep",
    "sight_runners": "sweep",
    "settle_dead": "sweep",
    "cancel_requests": "sweep",
    "get": "get",
    "detail": "get",
    "events": "get",
    "list_jobs": "get",
    "job_counts": "get",
}
"""The operation each store method counts as; the others (registering, pausing, ...)
never fail."""


class FaultyStore(AroundStore, StoreHook):
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
        super().__init__(inner, self)
        self.rate = rate
        self.lose_replies = lose_replies
        self._operations = chosen
        self._random = random.Random(seed)  # noqa: S311 -- chooses faults, not secrets
        self._lock = threading.Lock()
        self.calls: Counter[str] = Counter()
        """Calls seen per operation, faulted or not."""
        self.faults: Counter[str] = Counter()
        """Faults raised per operation."""

    def hooks(self, method: str) -> bool:
        return method in _OPERATION_OF

    def around(self, call: Call, proceed: Callable[[], T]) -> T:
        operation = _OPERATION_OF[call.method]
        fault = self._fault(operation if isinstance(operation, str) else operation(call))
        if fault is None:
            return proceed()
        if self.lose_replies:
            proceed()
        raise fault

    def _fault(self, operation: str) -> StoreError | None:
        with self._lock:
            self.calls[operation] += 1
            if operation not in self._operations or self._random.random() >= self.rate:
                return None
            self.faults[operation] += 1
            error: StoreError = self._random.choice(_ERRORS)()
            return error
