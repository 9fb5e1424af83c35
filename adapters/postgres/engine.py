"""PostgreSQL as the shared SQL body's engine: a psycopg pool, pipelines, NOTIFY wakes.

Times travel as timestamptz (datetimes both ways); a transaction that may
leave jobs ready to claim NOTIFYs the store's channel, delivered at commit.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg_pool import ConnectionPool

from jobtable.adapters.postgres.errors import translated
from jobtable.adapters.sql.engine import Connection, Cursor, SqlEngine
from jobtable.adapters.sql.queries import Placeholders, Queries

T = TypeVar("T")
S = TypeVar("S")

QUERIES = Queries("jobtable.adapters.postgres", Placeholders.PYFORMAT)
"""PostgreSQL's own query files, else the shared ones in psycopg's placeholder style."""

NOTIFY = "SELECT pg_notify(%(channel)s, '')"
"""Sent as written (no query file): the one statement the engine itself runs."""
NOTIFY_IF_QUEUES_LIMITED = (
    "SELECT pg_notify(%(channel)s, '') WHERE EXISTS (SELECT 1 FROM jobtable_queues"
    " WHERE running_limit IS NOT NULL OR rate_n IS NOT NULL)"
)
"""NOTIFY, only while some queue is limited (a row or two read: the queues table is small)."""


NOT_DURABLE = "SELECT set_config('synchronous_commit', 'off', true)"
"""Sent first in a transaction whose commit need not wait for the disk (a batch with no
outcome): should the server crash, it is lost whole, as if never sent."""

JIT_OFF = "SELECT set_config('jit', 'off', true)"
"""Sent first in a batch's transaction behind a pooler, where a session's own settings do
not travel (elsewhere each pooled session turns JIT off once: store.py)."""


@contextlib.contextmanager
def one_round_trip(conn: psycopg.Connection) -> Iterator[None]:
    """Send every statement of the block at once, as one transaction, with one Sync.

    In a pipeline, statements up to a Sync are one transaction when no BEGIN
    precedes them: the server commits them together at the Sync, or (one
    failing) runs none of the rest and rolls back them all. psycopg's own
    transaction() waits for the server at BEGIN and at COMMIT: three round
    trips where this takes one, most of a small batch's time on loopback.
    A result read inside the block is a round trip (a flush, not a Sync: the
    transaction stays open); the rest are read after it. Should the block raise
    before its end (in the client: a value that cannot be sent, an
    interrupt), the connection is closed before any Sync, so the server
    rolls back what was sent instead of committing half a batch. The pooled
    connection goes back out of autocommit; one that cannot (a closed one)
    is closed, so the pool drops it instead of handing it out changed.
    """
    conn.autocommit = True
    try:
        with conn.pipeline():
            try:
                yield
            except BaseException:
                conn.close()  # no Sync: nothing of the block commits
                raise
    finally:
        try:
            conn.autocommit = False
        except psycopg.Error:
            conn.close()


@functools.lru_cache(maxsize=16)  # a fair kind's listed keys, and those a claim looks up
def _array_literal(keys: frozenset[str]) -> str:
    """``keys`` as a text[] literal, each quoted (so none is read as NULL); cached."""
    quoted = (key.replace("\\", "\\\\").replace('"', '\\"') for key in sorted(keys))
    return "{" + ",".join(f'"{key}"' for key in quoted) + "}"


def as_time(value: Any) -> datetime.datetime:
    """A timestamptz column (a datetime) or a time inside jsonb (ISO text)."""
    if isinstance(value, datetime.datetime):
        return value
    return datetime.datetime.fromisoformat(str(value))


class PostgresEngine(SqlEngine):
    queries = QUERIES
    translated = staticmethod(translated)
    connection_type = psycopg.Connection
    async_connection_type = psycopg.AsyncConnection

    def __init__(self, pool: ConnectionPool, *, jit_off_each_transaction: bool = False) -> None:
        self._pool = pool
        self._jit_off_each_transaction = jit_off_each_transaction
        self._announced: dict[str, str] = {}
        self.channel = "jobtable_jobs_public"
        """The NOTIFY channel of this store's jobs table: one per schema (set on migrating)."""

    def read(self, work: Callable[[Connection], T]) -> T:
        with translated(), self._pool.connection() as conn:
            return work(conn)

    def write(self, work: Callable[[Connection], T]) -> T:
        with translated(), self._pool.connection() as conn, conn.transaction():
            return work(conn)

    def send(self, work: Callable[[Connection], object]) -> None:
        with translated(), self._pool.connection() as conn, one_round_trip(conn):
            work(conn)

    def send_then_read(
        self,
        send: Callable[[Connection], S],
        read: Callable[[Connection, S], T],
        *,
        durable: bool = True,
    ) -> T:
        with translated(), self._pool.connection() as conn:
            with one_round_trip(conn):
                if self._jit_off_each_transaction:
                    conn.execute(JIT_OFF)
                if not durable:  # for this transaction only: the pipeline's implicit one
                    conn.execute(NOT_DURABLE)
                sent = send(conn)
            return read(conn, sent)

    def names(self, names: Collection[str] | None) -> list[str] | None:
        """A text[] (``= ANY`` and ``unnest`` read it)."""
        return None if names is None else sorted(names)

    def key_set(self, keys: frozenset[str]) -> str:
        """A text[]'s literal, one string (the statement casts it): psycopg sends a list
        element by element, 120 µs for a fair kind's 100 keys, each claim."""
        return _array_literal(keys)

    def look_then_lock(self, conn: Connection, kinds: Sequence[str]) -> Cursor:
        if len(kinds) != 1:
            return super().look_then_lock(conn, kinds)
        (kind,) = kinds  # the usual claim's one: with the look, one statement fewer
        return conn.execute(self.sql("passed_over_queues_then_lock"), {"kind": kind})

    def announcement(self) -> tuple[str, Mapping[str, Any]]:
        return NOTIFY, {"channel": self.channel}

    def announce(self, conn: Connection) -> None:
        conn.execute(NOTIFY, {"channel": self.channel})  # delivered at commit

    def announce_if_queues_limited(self, conn: Connection) -> None:
        conn.execute(NOTIFY_IF_QUEUES_LIMITED, {"channel": self.channel})

    def send_announced(self, sql: str, params: Mapping[str, Any]) -> None:
        """One statement, with its NOTIFY inside it, committed on its own in autocommit:
        one round trip without a pipeline's exchanges (a lone enqueue's way). ``sql`` must
        be an INSERT without RETURNING; the notice goes only when it inserted a row."""
        announced = self._announced.get(sql)
        if announced is None:
            announced = self._announced[sql] = (
                f"WITH inserted AS ({sql}\nRETURNING 1) "
                "SELECT pg_notify(%(channel)s, '') FROM inserted"
            )
        with translated(), self._pool.connection() as conn:
            conn.autocommit = True
            try:
                conn.execute(announced, {**params, "channel": self.channel})
            finally:
                try:
                    conn.autocommit = False
                except psycopg.Error:
                    conn.close()

    def stamp(self, time: datetime.datetime) -> datetime.datetime:
        return time

    def parse_time(self, value: Any) -> datetime.datetime:
        return as_time(value)
