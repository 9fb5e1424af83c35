"""How many jobs a runner holds ahead of its workers, decided from its handlers' times.

A runner whose handlers are short holds a few due jobs ahead (queued still, under its
id), so that one transaction starts many; one whose handlers are long holds none and
claims only for free workers, so jobs spread over every runner's workers.
"""

from __future__ import annotations

import threading

AHEAD_WAIT = 0.02
"""Seconds a job held ahead should wait, by the measured handler times, before it starts."""

AHEAD_LIMIT = 0.05
"""Seconds a job held ahead waits at most: one held longer is given back, whatever the
estimate said. The deployment guide's bound: no process holds a job another process's idle worker
could run for longer than this (and the few milliseconds of the batch that gives it back)."""

MAX_AHEAD = 64
"""Jobs held ahead at most, however short the handlers."""

SMOOTHING = 0.2
"""Weight of the newest handler time in the running mean."""


class AheadPolicy:
    """A running mean of handler times, and what it allows to hold ahead.

    Nothing is held until a handler has been timed: a runner starts as one of long
    jobs. With a mean of ``t`` seconds and ``workers`` workers, a job behind ``n``
    held ones starts after about ``n * t / workers``: ``n`` is chosen so that this
    stays under AHEAD_WAIT.
    """

    def __init__(self, workers: int) -> None:
        self._workers = max(1, workers)
        self._mean: float | None = None
        self._lock = threading.Lock()

    def ran(self, seconds: float) -> None:
        """A handler took ``seconds``."""
        with self._lock:
            if self._mean is None:
                self._mean = seconds
            else:
                self._mean += SMOOTHING * (seconds - self._mean)

    def target(self) -> int:
        """How many jobs to hold ahead now (0: claim only for free workers)."""
        mean = self._mean
        if mean is None or mean >= AHEAD_WAIT:
            return 0
        fits = AHEAD_WAIT * self._workers / max(mean, 1e-5)
        return int(min(MAX_AHEAD, fits))
