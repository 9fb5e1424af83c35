"""Job counts for scrapes, so that a scrape never waits on a slow count.

Counting unfinished jobs costs what the unfinished jobs cost: a
millisecond or two for a queue that keeps up, a second for a backlog of a
million. While counts are quick, every scrape reads them afresh. Once a
read was slow, a scrape answers at once with the latest counts (saying how
old they are) and starts one fresh read in the background; the first quick
read brings the scrapes back to reading for themselves. Prometheus reads
values seconds old all the time; a scrape that times out it reads not at all.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

Counts = TypeVar("Counts")

SLOW_READ = 0.025
"""Seconds: a read that took longer is refreshed in the background from then on (half the
50 ms a scrape is meant to take at most)."""


class CountsReader(Generic[Counts]):
    """Reads counts for scrapes (``read``: jobs by status, held back, ...) as the module says."""

    def __init__(
        self,
        read: Callable[[], Counts],
        *,
        slow: float = SLOW_READ,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._read = read
        self._slow = slow
        self._clock = clock
        self._lock = threading.Lock()
        self._latest: tuple[Counts, float] | None = None  # counts, when their read began
        self._last_took = 0.0
        self._refreshing = False

    def counts(self) -> tuple[Counts, float]:
        """The counts and their age in seconds (0: read for this call).

        Raises what the read raises when this call reads for itself; a
        background read that fails is forgotten, so the next call reads
        for itself and says so.
        """
        with self._lock:
            latest = self._latest if self._last_took >= self._slow else None
            if latest is not None and not self._refreshing:
                self._refreshing = True
                threading.Thread(
                    target=self._refresh, name="jobtable-metrics-counts", daemon=True
                ).start()
        if latest is not None:
            counts, read_at = latest
            return counts, max(0.0, self._clock() - read_at)
        return self._read_now(), 0.0

    def _read_now(self) -> Counts:
        started = self._clock()
        counts = self._read()
        with self._lock:
            self._latest = (counts, started)
            self._last_took = self._clock() - started
        return counts

    def _refresh(self) -> None:
        try:
            self._read_now()
        except Exception:  # the next scrape reads for itself, and answers store_up 0
            with self._lock:
                self._latest = None
                self._last_took = 0.0
        finally:
            with self._lock:
                self._refreshing = False
