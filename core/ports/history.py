"""The dashboard's history: each runner's per-minute counts (core/minutes.py), and how long
each queue's oldest waiting job has been due.

Part of the store port (core/ports/__init__.py).
"""

from __future__ import annotations

import datetime
from collections.abc import Collection, Sequence
from typing import Protocol

from jobtable.core.minutes import MinuteCounts


class JobHistory(Protocol):
    def add_minutes(self, rows: Sequence[MinuteCounts], *, now: datetime.datetime) -> None:
        """Add each row's counts to what is kept for its minute, queue and kind (another
        runner's counts for them too), and forget minutes older than ``KEEP_MINUTES``."""
        ...

    def minutes(self, since: datetime.datetime) -> list[MinuteCounts]:
        """The kept counts of every minute from ``since`` on."""
        ...

    def oldest_waiting(self, queues: Collection[str]) -> dict[str, datetime.datetime]:
        """For each of ``queues`` holding a job due now: when the one that has waited longest
        fell due (a store may look at the first 1,000 created of them only, for a bounded
        cost: a backlog's first-created jobs are its longest-waiting but for late ones)."""
        ...
