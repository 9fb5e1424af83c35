"""The real clock: wall time in UTC, the monotonic clock, and real waiting."""

from __future__ import annotations

import datetime
import threading
import time
from collections.abc import Callable


class SystemClock:
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
        with condition:
            return condition.wait_for(predicate, timeout)
