"""The store port, by concern: what the core needs from a database.

Each consumer depends on the narrow port it uses (``JobQueue``, ``RunnerRegistry``,
``JobReads``, ``JobOperations``); a store implements them all, as ``JobStore``. Every
method that writes takes ``now`` from the caller's clock: a store never reads the time
itself. Every method may raise ``StoreError`` (``StoreUnavailableError`` when the
database cannot be reached); nothing else escapes a store.
"""

from __future__ import annotations

from typing import Protocol

from jobtable.core.ports.history import JobHistory
from jobtable.core.ports.operations import JobOperations
from jobtable.core.ports.queue import JobQueue
from jobtable.core.ports.reads import JobReads
from jobtable.core.ports.registry import RunnerRegistry

__all__ = [
    "JobHistory",
    "JobOperations",
    "JobQueue",
    "JobReads",
    "JobStore",
    "LivenessPort",
    "RunnerRegistry",
    "Watcher",
]


class Watcher(Protocol):
    """What ``watch`` returns: a thread telling of other connections' commits until stopped."""

    def stop(self) -> None: ...


class LivenessPort(JobQueue, RunnerRegistry, Protocol):
    """What keeping runners alive needs: the registry, and the queue to settle or put back
    the jobs a runner held."""


class JobStore(JobQueue, RunnerRegistry, JobReads, JobOperations, JobHistory, Protocol):
    """Every concern at once: what a store implements and what wraps one (core/around.py)."""

    def close(self) -> None:
        """Release the store's connections. Idempotent."""
        ...
