"""Retention: finished jobs are deleted once they are old enough, a small batch at a time.

One runner at a time prunes (a lease in the database names it), a round a
minute on its own thread (``PruneLoop``) or when asked (``Pruner.prune``). A
round first reads whether anything is old enough: with nothing to prune it
takes no lease and writes nothing.
"""

from __future__ import annotations

import datetime
import logging
import threading
from collections.abc import Callable

from jobtable.core.clock import Clock
from jobtable.core.jobs import Retention
from jobtable.core.looper import start_loop
from jobtable.core.ports import JobOperations
from jobtable.core.recording import loggable_category

PRUNE_BATCH = 500
"""Rows one transaction deletes at most."""

PRUNE_EVERY = 60.0
"""Seconds between a runner's rounds of pruning."""

LEASE = datetime.timedelta(minutes=2)
"""How long a round's lease lasts without renewal (each batch renews it)."""

LEASE_NAME = "retention"


class Pruner:
    """Deletes the finished jobs a retention no longer keeps, for the runner ``holder``.

    Each batch is one short transaction, and a batch that deletes fewer rows
    than it may ends the round: the table is never locked for long, and a
    backlog of a million old jobs drains in a few thousand quick steps rather
    than one statement that holds everyone up.
    """

    def __init__(
        self,
        store: JobOperations,
        clock: Clock,
        log: logging.Logger,
        *,
        holder: str,
        retention: Retention,
        batch: int = PRUNE_BATCH,
    ) -> None:
        if batch < 1:
            raise ValueError("a pruning batch holds at least one job")
        self._store = store
        self._clock = clock
        self._log = log
        self._holder = holder
        self.retention = retention
        self._batch = batch

    def prune(
        self,
        retention: Retention | None = None,
        *,
        should_stop: Callable[[], bool] | None = None,
    ) -> int | None:
        """One round, by ``retention`` (default: the runner's): batches until none is full.

        Returns the finished jobs deleted (0 when nothing was old enough: then
        no lease is taken), or None when another runner holds the lease. Idempotency keys past their time go too, even when every
        job is kept for good.
        """
        keep = self.retention if retention is None else retention
        now = self._clock.now()
        if not self._store.prunable(keep.cutoffs(now), now=now):
            return 0  # nothing to prune: no lease taken, nothing written
        total = 0
        while True:
            now = self._clock.now()
            if not self._store.take_lease(
                LEASE_NAME, holder=self._holder, until=now + LEASE, now=now
            ):
                return None if total == 0 else total
            pruned = self._store.prune(keep.cutoffs(now), now=now, limit=self._batch)
            total += pruned.jobs
            full = pruned.jobs >= self._batch or pruned.keys >= self._batch
            if not full or (should_stop is not None and should_stop()):
                # Let go at once: the next round may be anyone's (a CLI prune, another runner).
                self._store.take_lease(LEASE_NAME, holder=self._holder, until=now, now=now)
                return total

    def prune_quietly(self, *, should_stop: Callable[[], bool] | None = None) -> None:
        """A round from the runner's own thread: failures are logged and tried next round."""
        try:
            pruned = self.prune(should_stop=should_stop)
        except Exception as error:
            self._log.warning(
                "pruning finished jobs failed; trying again in %.0fs category=%s",
                PRUNE_EVERY,
                loggable_category(error),
            )
            return
        if pruned:
            self._log.info("pruned %d finished jobs past their retention", pruned)


class PruneLoop:
    """A round of ``pruner`` every ``every`` seconds of real time, on a thread of its own.

    Real time, not the runner's clock: a fake clock's tests prune by calling
    ``Pruner.prune``, and see no sleeper of this loop's.
    """

    def __init__(
        self, pruner: Pruner, clock: Clock, log: logging.Logger, *, every: float = PRUNE_EVERY
    ) -> None:
        self._pruner = pruner
        self._every = every
        self._clock = clock
        self._log = log
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = start_loop(
            "jobtable-retention",
            self._loop,
            clock=self._clock,
            log=self._log,
            ended=self._stopped.is_set,
        )

    def stop(self) -> None:
        """No new round; a batch under way ends (``join`` waits for it)."""
        self._stopped.set()

    def join(self, timeout: float | None) -> None:
        """Wait up to ``timeout`` seconds for the thread to end, so no batch outlives the store."""
        if self._thread is not None and self._thread.is_alive():
            self._thread.join(timeout)

    def _loop(self) -> None:
        while not self._stopped.wait(self._every):
            self._pruner.prune_quietly(should_stop=self._stopped.is_set)
