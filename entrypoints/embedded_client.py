"""``jobtable.Client``: for a process that only enqueues and reads (a web tier, a script).

It opens the database by path or ``postgresql://`` URL as the CLI does, and loads kinds
by module name as ``--kinds`` does, so payloads are checked; it runs no job.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable
from types import TracebackType
from typing import Any

from jobtable.adapters.system_clock import SystemClock
from jobtable.core.client import Client as StoreClient
from jobtable.core.jobs import Enqueued
from jobtable.core.kind_spec import EncodedJob
from jobtable.entrypoints.config import ConfigError, module_names
from jobtable.entrypoints.wiring import (
    Watcher,
    follow_changes,
    is_postgres_url,
    load_kinds,
    open_store,
    redact,
)


class Client(StoreClient):
    """Enqueue, read, wait for, follow and operate on jobs of one database; no workers.

    with jobtable.Client("jobtable.db", kinds=["myapp.jobs"]) as client:
        job_id = client.enqueue("count", {"steps": 5})
        job = client.wait(job_id, timeout=30)
    """

    def __init__(
        self,
        database: str | os.PathLike[str],
        *,
        kinds: Iterable[str] | str = (),
        logger: logging.Logger | None = None,
    ) -> None:
        """Open ``database`` (a SQLite file that exists, or a ``postgresql://`` URL), bring
        its schema up to date, and call each ``kinds`` module's ``register(kinds)``.

        Raises ConfigError (a ValueError) for a missing file or a kind module that
        cannot be imported or registered, naming it; StoreError when the database
        cannot be reached. Neither message holds a password from the URL.
        """
        self._database = os.fspath(database)
        modules = module_names((kinds,) if isinstance(kinds, str) else kinds, setting="kinds")
        self._modules = modules
        if not is_postgres_url(self._database) and not os.path.isfile(self._database):
            raise ConfigError(
                f"no database at {self._database}; give the path a worker or "
                "`jobtable migrate --database PATH` made, or a postgresql:// URL"
            )
        clock = SystemClock()
        self._opened = open_store(self._database, synchronous="full", now=clock.now())
        self._watch_lock = threading.Lock()
        self._watcher: Watcher | None = None
        self._closed = False
        try:
            super().__init__(
                self._opened,
                clock,
                logger=logger or logging.getLogger("jobtable.client"),
                hear_elsewhere=self._hear_other_processes,
            )
            load_kinds(self.kinds, modules, setting="kinds")
        except BaseException:
            self._opened.close()
            raise

    async def enqueue_on_async(self, request: EncodedJob, connection: Any) -> Enqueued:
        """Store a job checked by ``encode`` on the application's psycopg ``AsyncConnection``,
        inside its transaction (``AsyncClient.enqueue(..., connection=)``). TypeError for
        any other connection, or on SQLite."""
        create_in_async = getattr(self._opened, "create_in_async", None)
        if create_in_async is None:
            raise TypeError(
                "an asyncio enqueue on the application's connection needs PostgreSQL "
                "(a psycopg.AsyncConnection)"
            )
        now = self._clock.now()
        (job,), sending = self.tracing.sending([self.new_job(request, now)])
        try:
            enqueued: Enqueued = await create_in_async(connection, job, now=now)
        except BaseException:
            sending.end(None)
            raise
        sending.end([enqueued])
        return enqueued

    def hear_other_processes(self) -> None:
        """Have other processes' changes reach ``changes`` from now on (a watcher, started
        once): what ``wait`` and ``follow`` call first."""
        self._hear_other_processes()

    def _hear_other_processes(self) -> None:
        """Start, once, the watcher that tells waiters of other processes' changes."""
        with self._watch_lock:
            if self._watcher is None and not self._closed:
                self._watcher = follow_changes(self._opened, self.changes)

    def close(self) -> None:
        """Stop watching and close the database's connections. Idempotent."""
        with self._watch_lock:
            self._closed = True
            watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop()
        self._opened.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"jobtable.Client({redact(self._database)!r}, kinds={list(self._modules)!r})"
