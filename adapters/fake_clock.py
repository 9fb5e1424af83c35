"""A clock that moves only when told, for tests of timed behaviour without sleeping.

freezegun cannot speed up a ``Condition.wait`` in another thread, so this
clock owns waiting too: ``advance()`` moves time and wakes every thread
waiting on it, and ``wait_for_sleepers()`` lets a test see who is waiting
and for how long (the claim-retry delays, a handler's ``ctx.wait``).
"""

from __future__ import annotations

import datetime
import itertools
import threading
from collections.abc import Callable

DEFAULT_START = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


class FakeClock:
    """``auto_advance=True`` makes every timed wait pass its time at once, for single-threaded tests."""

    def __init__(
        self, start: datetime.datetime = DEFAULT_START, *, auto_advance: bool = False
    ) -> None:
        self._auto_advance = auto_advance
        self._lock = threading.Condition()
        self._wall = start
        self._elapsed = 0.0
        self._tokens = itertools.count()
        self._sleepers: dict[int, tuple[threading.Condition, float]] = {}

    def now(self) -> datetime.datetime:
        with self._lock:
            return self._wall

    def monotonic(self) -> float:
        with self._lock:
            return self._elapsed

    def wait_for(
        self,
        condition: threading.Condition,
        predicate: Callable[[], bool],
        timeout: float | None,
    ) -> bool:
        if timeout is None:
            with condition:
                return condition.wait_for(predicate)
        if self._auto_advance:
            with condition:
                if predicate():
                    return True
            self.advance(timeout)
            with condition:
                return predicate()
        token = next(self._tokens)
        with self._lock:
            deadline = self._elapsed + timeout
            self._sleepers[token] = (condition, deadline)
            self._lock.notify_all()
        try:
            with condition:
                while not predicate():
                    if self.monotonic() >= deadline:
                        return False
                    condition.wait()
                return True
        finally:
            with self._lock:
                del self._sleepers[token]
                self._lock.notify_all()

    def advance(self, seconds: float) -> None:
        """Move time forward and wake every thread waiting on this clock."""
        with self._lock:
            self._elapsed += seconds
            self._wall += datetime.timedelta(seconds=seconds)
            conditions = [condition for condition, _ in self._sleepers.values()]
        for condition in conditions:
            with condition:
                condition.notify_all()

    def sleeping(self) -> list[float]:
        """How long each thread still waiting on the clock has left, shortest first.

        A sleeper whose deadline has passed but has not yet woken is not counted.
        """
        with self._lock:
            return self._pending()

    def _pending(self) -> list[float]:
        return sorted(
            deadline - self._elapsed
            for _, deadline in self._sleepers.values()
            if deadline > self._elapsed
        )

    def wait_for_sleepers(self, count: int = 1, *, within: float = 5.0) -> list[float]:
        """Wait (in real time, at most ``within`` seconds) until ``count`` threads sleep on the clock.

        Returns ``sleeping()``. Raises TimeoutError when fewer ever do.
        """
        with self._lock:
            if not self._lock.wait_for(lambda: len(self._pending()) >= count, within):
                raise TimeoutError(f"{count} sleeper(s) expected, {len(self._pending())} seen")
            return self._pending()

    def wait_for_sleeping(
        self, accept: Callable[[list[float]], bool], *, within: float = 5.0
    ) -> list[float]:
        """Wait (in real time, at most ``within`` seconds) until ``accept(sleeping())``.

        For a test that knows how long a thread should sleep once it has seen
        some change. Raises TimeoutError with what was seen when it never does.
        """
        with self._lock:
            if not self._lock.wait_for(lambda: accept(self._pending()), within):
                raise TimeoutError(f"sleepers never accepted; last {self._pending()}")
            return self._pending()
