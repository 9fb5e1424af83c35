"""A runner's writes of its per-minute counts (core/minutes.py): every ``FLUSH_EVERY`` seconds
of real time, nothing when nothing ran, and once more at stop."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from jobtable.core.clock import Clock
from jobtable.core.looper import start_loop
from jobtable.core.minutes import FLUSH_EVERY, MinuteCounts, MinuteTally


class MinutesLoop:
    """Writes a runner's tally to the store every ``FLUSH_EVERY`` seconds, and at stop."""

    def __init__(
        self,
        tally: MinuteTally,
        write: Callable[[list[MinuteCounts]], None],
        clock: Clock,
        log: logging.Logger,
        *,
        every: float = FLUSH_EVERY,
    ) -> None:
        self._tally = tally
        self._write = write
        self._clock = clock
        self._log = log
        self._every = every
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = start_loop(
            "jobtable-minutes",
            self._loop,
            clock=self._clock,
            log=self._log,
            ended=self._stopped.is_set,
        )

    def stop(self, timeout: float | None = None) -> None:
        """No more rounds; the last counts written (best effort) before this returns."""
        self._stopped.set()
        if self._thread is not None and self._thread.is_alive():
            self._thread.join(timeout)
        self.flush()

    def _loop(self) -> None:
        while not self._stopped.wait(self._every):
            self.flush()

    def flush(self) -> None:
        rows = self._tally.take()
        if not rows:
            return
        try:
            self._write(rows)
        except Exception as error:  # the database is away: try again next round
            self._tally.give_back(rows)
            self._log.warning(
                "could not write the dashboard's minute counts (%s); trying again",
                type(error).__name__,
            )
