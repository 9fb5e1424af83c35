"""The body SQLite and PostgreSQL share, one part per concern, on the engine it is given.

An engine's store inherits this and adds only what is its own: opening and
migrating, liveness locks, and how it watches for changes.
"""

from __future__ import annotations

import abc

from jobtable.adapters.sql.engine import SqlEngine
from jobtable.adapters.sql.enqueue import SqlEnqueue
from jobtable.adapters.sql.held_back import SqlHeldBack
from jobtable.adapters.sql.history import SqlHistory
from jobtable.adapters.sql.idempotency import SqlIdempotency
from jobtable.adapters.sql.operations import SqlOperations
from jobtable.adapters.sql.queue import SqlQueue
from jobtable.adapters.sql.queues import SqlQueues
from jobtable.adapters.sql.reads import SqlReads
from jobtable.adapters.sql.registry import SqlRegistry
from jobtable.adapters.sql.retention import SqlRetention
from jobtable.adapters.sql.schedules import SqlSchedules
from jobtable.adapters.sql.settling import SqlSettling


class SqlStore(
    SqlEnqueue,
    SqlQueue,
    SqlSchedules,
    SqlSettling,
    SqlRegistry,
    SqlOperations,
    SqlQueues,
    SqlIdempotency,
    SqlReads,
    SqlHeldBack,
    SqlRetention,
    SqlHistory,
):
    def __init__(self, engine: SqlEngine) -> None:
        self._engine = engine

    @abc.abstractmethod
    def close(self) -> None:
        """Let go of every lock and connection this store holds."""
