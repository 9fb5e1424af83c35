"""The Clock port: the only way the core reads or waits on time.

Waiting goes through the clock too, so tests can drive every timed wait (the
claim retry, a handler's ``ctx.wait``) with a fake clock that wakes waiting
threads when it is advanced.
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Callable
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime.datetime:
        """The current wall-clock time, timezone-aware UTC."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never steps back; for measuring intervals."""
        ...

    def wait_for(
        self,
        condition: threading.Condition,
        predicate: Callable[[], bool],
        timeout: float | None,
    ) -> bool:
        """Wait on ``condition`` until ``predicate()`` is true or ``timeout`` seconds pass.

        The caller must not hold ``condition``. Whoever makes the predicate
        true must notify ``condition``. Returns the predicate's last value, so
        False means the time ran out. ``timeout=None`` waits without limit.
        """
        ...
