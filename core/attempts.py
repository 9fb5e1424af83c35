"""The jobs a runner's workers hold right now, the stop signal each handler sees, and who
records each attempt's outcome: its worker, or the runner when the handler is left behind.
"""

from __future__ import annotations

import threading
from typing import Any

from jobtable.core.jobs import Claim


class Attempt:
    """One job a worker is running: its claim, and whether its handler was told to stop.

    A handler is told to stop for one of several reasons: the runner's second
    phase of stopping, its liveness running out, its job settled elsewhere, a
    cancel, or its timeout; each running job has its own signal. Exactly one
    party records its outcome, decided once by ``Attempts.take_settling``.
    """

    __slots__ = ("claim", "job", "settled_by", "started", "stop_reason", "worker")

    def __init__(self, claim: Claim, worker: int = 0, job: Any = None) -> None:
        self.claim = claim
        self.worker = worker
        self.job = job
        """The ClaimedJob (its stored retry policy settles it if the runner must)."""
        self.stop_reason: str | None = None
        self.settled_by: str | None = None
        """"worker" or "runner": who took the right to record the outcome."""
        self.started = 0.0
        """When its handler began, on the runner's monotonic clock."""

    @property
    def stopping(self) -> bool:
        return self.stop_reason is not None


class Attempts:
    """One slot per worker, each written by its own worker only (no lock on the hot path).

    Readers (the registration's sweep) take a snapshot. ``changed`` is notified
    whenever a handler is told to stop, which ends its ``ctx.wait``.
    """

    def __init__(self, workers: int) -> None:
        self._slots: list[Attempt | None] = [None] * max(1, workers)  # drain uses slot 0
        self._settling: set[Attempt] = set()  # left behind, the runner recording their jobs
        self.changed = threading.Condition()
        self._settle_lock = threading.Lock()  # a plain lock: taken once per job
        self._stop_all: str | None = None

    def begin(self, worker: int, claim: Claim, job: Any = None) -> Attempt:
        attempt = Attempt(claim, worker, job)
        with self.changed:  # with stop_all: a job begun as everything stops is told too
            attempt.stop_reason = self._stop_all
            self._slots[worker] = attempt
        return attempt

    def end(self, worker: int) -> None:
        """Free the worker's slot; never called by a worker whose attempt the runner settled
        (the slot is its replacement's by then)."""
        self._slots[worker] = None

    def abandon(self, attempt: Attempt) -> None:
        """The runner settles ``attempt`` for its worker: free the slot for a replacement.

        The attempt stays in snapshots until ``settled``: its job is still held in
        this runner's name, and must not look like a lost claim to the sweep.
        """
        with self.changed:
            self._settling.add(attempt)
            if self._slots[attempt.worker] is attempt:
                self._slots[attempt.worker] = None

    def settled(self, attempt: Attempt) -> None:
        """The runner's write for an abandoned attempt is done (or given up)."""
        with self.changed:
            self._settling.discard(attempt)

    def take_settling(self, attempt: Attempt, party: str) -> bool:
        """Claim the right to record ``attempt``'s outcome; False when the other party has it."""
        with self._settle_lock:
            if attempt.settled_by is not None:
                return attempt.settled_by == party
            attempt.settled_by = party
            return True

    def find(self, claims: set[Claim]) -> list[Attempt]:
        return [attempt for attempt in self.snapshot() if attempt.claim in claims]

    def snapshot(self) -> list[Attempt]:
        held = [attempt for attempt in list(self._slots) if attempt is not None]
        if self._settling:
            with self.changed:
                held += list(self._settling)
        return held

    def busy(self) -> int:
        return sum(attempt is not None for attempt in list(self._slots))

    def stop(self, attempts: list[Attempt], reason: str) -> None:
        """Tell these handlers to stop; ``ctx.wait`` returns True in each at once."""
        with self.changed:
            for attempt in attempts:
                if attempt.stop_reason is None:
                    attempt.stop_reason = reason
            self.changed.notify_all()

    def all_told_to_stop(self) -> bool:
        """Whether ``stop_all`` was called: the runner's second phase of stopping."""
        return self._stop_all is not None

    def stop_all(self, reason: str) -> None:
        """Tell every handler to stop, and every job begun from now on."""
        with self.changed:
            self._stop_all = reason
        self.stop(self.snapshot(), reason)
