"""The jobs a runner's workers hold right now, and the stop signal each handler sees.

A handler is told to stop for one of several reasons: the runner's second
phase of stopping, its liveness running out, or its job settled elsewhere
(found no longer held when a lost lock was taken again). Each running job
has its own signal, so one job can be stopped without the others.
"""

from __future__ import annotations

import threading

from jobtable.core.jobs import Claim


class Attempt:
    """One job a worker is running: its claim, and whether its handler was told to stop."""

    __slots__ = ("claim", "stop_reason")

    def __init__(self, claim: Claim) -> None:
        self.claim = claim
        self.stop_reason: str | None = None

    @property
    def stopping(self) -> bool:
        return self.stop_reason is not None


class Attempts:
    """One slot per worker, each written by its own worker only (no lock on the hot path).

    Readers (the liveness keeper) take a snapshot. ``changed`` is notified
    whenever a handler is told to stop, which ends its ``ctx.wait``.
    """

    def __init__(self, workers: int) -> None:
        self._slots: list[Attempt | None] = [None] * workers
        self.changed = threading.Condition()
        self._stop_all: str | None = None

    def begin(self, worker: int, claim: Claim) -> Attempt:
        attempt = Attempt(claim)
        with self.changed:  # with stop_all: a job begun as everything stops is told too
            attempt.stop_reason = self._stop_all
            self._slots[worker] = attempt
        return attempt

    def end(self, worker: int) -> None:
        self._slots[worker] = None

    def snapshot(self) -> list[Attempt]:
        return [attempt for attempt in list(self._slots) if attempt is not None]

    def busy(self) -> int:
        return sum(attempt is not None for attempt in list(self._slots))

    def stop(self, attempts: list[Attempt], reason: str) -> None:
        """Tell these handlers to stop; ``ctx.wait`` returns True in each at once."""
        with self.changed:
            for attempt in attempts:
                if attempt.stop_reason is None:
                    attempt.stop_reason = reason
            self.changed.notify_all()

    def stop_all(self, reason: str) -> None:
        """Tell every handler to stop, and every job begun from now on."""
        with self.changed:
            self._stop_all = reason
        self.stop(self.snapshot(), reason)
