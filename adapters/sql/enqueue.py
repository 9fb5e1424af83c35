"""Storing new jobs: one, a batch (all or none), or inside the application's transaction."""

from __future__ import annotations

import datetime
from collections.abc import Collection
from typing import Any

from jobtable.adapters.sql.engine import Connection, SqlPart
from jobtable.adapters.sql_rows import new_job_parameters
from jobtable.core.errors import StoreError
from jobtable.core.idempotency import KeepAnswer
from jobtable.core.jobs import Enqueued, NewJob

UNIQUE_TRIES = 5
"""Inserts tried while a unique key's holder keeps letting it go in between (it never does
twice in a row in practice)."""


class SqlEnqueue(SqlPart):
    def create(
        self, job: NewJob, *, now: datetime.datetime, keep: KeepAnswer | None = None
    ) -> Enqueued:
        if job.unique_key or keep is not None:
            (enqueued,) = self.create_many([job], now=now, keep=keep)
            return enqueued
        # One job that cannot conflict: one statement, nothing to read back.
        engine = self._engine
        engine.send_announced(
            engine.sql("create_job"), new_job_parameters(job, now, stamp=engine.stamp)
        )
        return Enqueued(job.id)

    def create_many(
        self, jobs: Collection[NewJob], *, now: datetime.datetime, keep: KeepAnswer | None = None
    ) -> list[Enqueued]:
        """Store every job in one transaction: all of them, or (on an error) none.

        Jobs without a unique key (none can conflict, nothing to read back) go
        in as one batch, sent in one round trip where the engine can.
        """
        if not any(job.unique_key for job in jobs):
            enqueued = [Enqueued(job.id) for job in jobs]
            rows = [new_job_parameters(job, now, stamp=self._engine.stamp) for job in jobs]

            def insert_all(conn: Connection) -> None:
                self._insert_rows(conn, rows)
                self._engine.announce(conn)
                self._keep(conn, keep, enqueued)

            self._engine.send(insert_all)
            return enqueued

        def insert_each(conn: Connection) -> list[Enqueued]:
            enqueued = [self._insert(conn, job, now) for job in jobs]
            if not all(each.duplicate for each in enqueued):
                self._engine.announce(conn)
            self._keep(conn, keep, enqueued)
            return enqueued

        return self._engine.write(insert_each)

    def create_in(self, connection: object, job: NewJob, *, now: datetime.datetime) -> Enqueued:
        """Store ``job`` on the application's own connection, inside its transaction.

        Nothing is committed here: the job exists once the application
        commits, and not at all if it rolls back; runners elsewhere hear of it
        at that commit. TypeError when the connection is not this engine's.
        """
        conn = self._engine.application_connection(connection)
        with self._engine.translated():
            enqueued = self._insert(conn, job, now)
            if not enqueued.duplicate:
                self._engine.announce(conn)
        return enqueued

    async def create_in_async(
        self, connection: Any, job: NewJob, *, now: datetime.datetime
    ) -> Enqueued:
        """``create_in`` on the application's asyncio connection (psycopg's AsyncConnection),
        awaited inside its transaction: the job exists once the application commits.
        TypeError when the connection is not one this engine can take."""
        engine = self._engine
        kind = engine.async_connection_type
        if kind is None:
            raise TypeError(
                "an asyncio enqueue on the application's connection needs PostgreSQL "
                "(a psycopg.AsyncConnection)"
            )
        if not isinstance(connection, kind):
            raise TypeError("connection must be a psycopg.AsyncConnection to this database")
        conn: Any = connection  # an AsyncConnection: its methods are awaited
        params = new_job_parameters(job, now, stamp=engine.stamp)
        with engine.translated():
            for _ in range(UNIQUE_TRIES):
                cursor = await conn.execute(engine.sql("create_job"), params)
                if cursor.rowcount == 1:
                    announce = engine.announcement()
                    if announce is not None:
                        await conn.execute(*announce)
                    return Enqueued(job.id)
                cursor = await conn.execute(engine.sql("unique_key_holder"), params)
                holder = await cursor.fetchone()
                if holder is not None:
                    return Enqueued(holder[0], duplicate=True)
        raise StoreError("database error")

    def _insert_rows(self, conn: Connection, rows: list[dict[str, Any]]) -> None:
        if len(rows) == 1:
            conn.execute(self._engine.sql("create_job"), rows[0])
        elif rows:
            cursor = conn.cursor()
            try:
                cursor.executemany(self._engine.sql("create_job"), rows)
            finally:
                cursor.close()

    def _insert(self, conn: Connection, job: NewJob, now: datetime.datetime) -> Enqueued:
        """Insert one job; with a unique key already held, the holder's id instead."""
        params = new_job_parameters(job, now, stamp=self._engine.stamp)
        for _ in range(UNIQUE_TRIES):
            if conn.execute(self._engine.sql("create_job"), params).rowcount == 1:
                return Enqueued(job.id)
            holder = conn.execute(self._engine.sql("unique_key_holder"), params).fetchone()
            if holder is not None:
                return Enqueued(holder[0], duplicate=True)
            # The holder finished and let its key go in between: try the insert again.
        raise StoreError("database error")

    def _keep(self, conn: Connection, keep: KeepAnswer | None, enqueued: list[Enqueued]) -> None:
        """Keep the idempotency key's answer in the enqueue's transaction."""
        if keep is not None:
            status, body = keep.answer(enqueued)
            params = {"key": keep.key, "status": status, "body": body}
            conn.execute(self._engine.sql("answer_idempotency_key"), params)
