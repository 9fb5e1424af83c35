"""The runner registry: who is alive, by lock and beat, and settling the jobs of the dead.

Part of the store port (core/ports/__init__.py): every write takes ``now`` from the
caller's clock; every method may raise ``StoreError``, nothing else.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection
from typing import Protocol

from jobtable.core.jobs import (
    Recovered,
)
from jobtable.core.liveness import (
    LivenessTerms,
    RunnerInfo,
    RunnerRecord,
    RunnerSighting,
    Settlement,
)


class RunnerRegistry(Protocol):
    def register_runner(self, info: RunnerInfo, *, now: datetime.datetime) -> None:
        """Take ``info.id``'s liveness lock and write its row in the runners table.

        The lock dies with the process (an OS file lock, a database session),
        so a crash shows. Raises StoreError when either cannot be done; then
        neither is held.
        """
        ...

    def confirm_liveness(self, runner_id: str, *, timeout: float) -> bool:
        """Check that ``runner_id``'s lock is still held, within ``timeout`` seconds.

        True when it was held all along. False when it had been lost (a
        database session ended, a lock file removed) and was taken again just
        now: jobs held in the runner's name may have been settled meanwhile.
        Raises LivenessLockLostError when the lock is certainly absent and
        cannot be taken again, StoreError when it cannot be confirmed
        (unreachable, too slow). ``timeout`` bounds the whole call.
        """
        ...

    def beat(self, runner_id: str, *, busy: int, now: datetime.datetime) -> bool:
        """Raise the runner's beat and record ``busy`` workers and ``now`` as last seen.

        False when the runner has no row: another runner judged it dead and
        settled its jobs.
        """
        ...

    def sight_runners(self) -> list[RunnerSighting]:
        """Every registered runner, and every owner of a running job that has no row.

        Each with its beat (None without a row) and the state of its lock.
        """
        ...

    def settle_dead(
        self, settlements: Collection[Settlement], *, now: datetime.datetime
    ) -> Recovered:
        """Record each dead runner's decided outcomes and delete its row, if its evidence holds.

        In one transaction per runner: its beat must be the one judged (or its
        row still absent) and, when the verdict rests on it, its lock still
        absent; otherwise it is left alone. Each outcome is recorded as
        ``record`` would, fenced by its job's claim under the verdict's runner (a
        job that ended meanwhile is left as it is); one found running with no
        attempt counts one. Returns how many failed and how many were queued again.
        """
        ...

    def unregister_runner(self, runner_id: str) -> None:
        """Delete the runner's row and release its lock. Idempotent."""
        ...

    def runners(self) -> list[RunnerRecord]:
        """Every registered runner, oldest first."""
        ...

    liveness_terms: LivenessTerms
    """How this store's liveness can run out (core/liveness.py)."""
