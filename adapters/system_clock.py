"""The real clock: wall time in UTC, the monotonic clock, and real waiting."""

from __future__ import annotations

import datetime
import threading
import time
from collections.abc import Callable

_LONGEST_TIMEOUT = 86400.0
"""Seconds one wait on a lock takes at most: a longer timeout would overflow (past
``threading.TIMEOUT_MAX``, about 292 years), so a longer wait is made of such steps."""


class SystemClock:
    real_time = True
    """Waits take real time: an async handler's ``await_stop`` may sleep on the event loop."""

    def now(self) -> datetime.datetime:
        return datetime.datetime.now(datetime.UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    def wait_for(
        self,
        condition: threading.Condition,
        predicate: Callable[[], bool],
        timeout: float | None,
    ) -> bool:
        if timeout is not None and timeout > _LONGEST_TIMEOUT:
            deadline = time.monotonic() + timeout
            with condition:
                while not predicate():
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    condition.wait(min(left, _LONGEST_TIMEOUT))
                return True
        with condition:
            return condition.wait_for(predicate, timeout)
