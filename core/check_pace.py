"""How often a runner checks its own liveness lock: CHECK_INTERVAL while it runs jobs or a
worker waits to claim, IDLE_CHECK_INTERVAL while idle; a job that starts ends an idle wait
at the busy pace (the next check comes CHECK_INTERVAL after the last, not at once)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from jobtable.core.clock import Clock
from jobtable.core.liveness import IDLE_CHECK_INTERVAL

THREADS = ("check", "deadline")
"""The threads paced: the lock's check and, where a check can block, the deadline's."""

IDLE_SHARE = 0.8
"""The idle pace is at most this share of the freshness a check allows claims for, so an
idle runner's confirmation never goes stale while its next check is on its way."""


class CheckPace:
    """The waits of the threads that check (or keep the deadline of) a runner's lock.

    ``busy`` says whether a job runs or a worker waits to claim. Each thread is named; a job
    starting speeds up the ones waiting at the idle pace. Flags are set under ``changed``
    and read without it where a stale read only costs one more wait of the busy pace.
    """

    def __init__(
        self,
        clock: Clock,
        changed: threading.Condition,
        *,
        interval: float,
        freshness: float,
        busy: Callable[[], bool],
    ) -> None:
        self._clock = clock
        self._changed = changed
        self._interval = interval
        self._idle_interval = max(interval, min(IDLE_CHECK_INTERVAL, IDLE_SHARE * freshness))
        self._busy = busy
        # One key per thread from the start: ``job_started`` reads these without the lock,
        # so they must never change size.
        self._idle = dict.fromkeys(THREADS, False)
        self._sped_up = dict.fromkeys(THREADS, False)

    def job_started(self) -> None:
        """A job starts: every thread waiting at the idle pace moves to the busy one."""
        if any(self._idle.values()):  # one dict read per job otherwise
            with self._changed:
                for name, idle in self._idle.items():
                    self._sped_up[name] = self._sped_up[name] or idle
                self._changed.notify_all()

    def wait(self, name: str, woken: Callable[[], bool]) -> None:
        """Sleep until thread ``name``'s next check is due, or ``woken()``: call with
        ``changed`` not held; ``woken`` is read under it."""
        started = self._clock.monotonic()
        with self._changed:
            self._idle[name] = True  # before ``busy`` is read: a job starting now is seen
        idle = not self._busy()
        if not idle:
            with self._changed:
                self._idle[name] = False

        def done() -> bool:
            return woken() or self._sped_up[name]

        self._clock.wait_for(self._changed, done, self._idle_interval if idle else self._interval)
        with self._changed:
            self._idle[name] = False
            sped_up, self._sped_up[name] = self._sped_up[name], False
        if sped_up:
            rest = self._interval - (self._clock.monotonic() - started)
            if rest > 0:
                self._clock.wait_for(self._changed, woken, rest)
