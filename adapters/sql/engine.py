"""What the shared SQL store asks of an engine: its connections, its times, its SQL.

``SqlEngine`` is all that differs between SQLite and PostgreSQL for the
shared body: how a read or a transaction gets a connection (group commit or
a pool), how a batch is sent, how others hear of new work, how times travel.
"""

from __future__ import annotations

import abc
import datetime
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

from jobtable.adapters.sql.queries import Queries

T = TypeVar("T")
S = TypeVar("S")
_NO_PARAMETERS: Mapping[str, Any] = {}


class Cursor(Protocol):
    """The part of a DB-API cursor the shared body uses (sqlite3's and psycopg's alike)."""

    @property
    def rowcount(self) -> int: ...

    @property
    def description(self) -> Any: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def executemany(self, sql: str, params: Iterable[Any], /) -> Any: ...

    def close(self) -> None: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """The part of a DB-API connection the shared body uses."""

    def execute(self, sql: str, params: Any = ..., /) -> Cursor: ...

    def cursor(self) -> Cursor: ...


class SqlEngine(abc.ABC):
    """One engine's connections, SQL and time format, for the shared body.

    Every method that touches the database raises ``StoreError`` (translated
    from the driver's errors, with none of their text); ``work`` passed in
    fetches every row it needs before it returns.
    """

    queries: Queries
    """Its query files: its own where its SQL differs, else the shared ones."""

    @abc.abstractmethod
    def read(self, work: Callable[[Connection], T]) -> T:
        """``work``'s value, run on a connection that reads."""

    @abc.abstractmethod
    def write(self, work: Callable[[Connection], T]) -> T:
        """``work``'s value, run in one transaction committed durably before this returns;
        rolled back (and raising) when ``work`` raises."""

    @abc.abstractmethod
    def send(self, work: Callable[[Connection], object]) -> None:
        """``write`` for statements whose results nobody reads: one round trip where the
        engine can (PostgreSQL's pipeline). ``work`` must not read a result."""

    @abc.abstractmethod
    def send_then_read(
        self,
        send: Callable[[Connection], S],
        read: Callable[[Connection, S], T],
        *,
        durable: bool = True,
    ) -> T:
        """``send``'s statements in one transaction committed (durably, unless ``durable`` is
        False: then the commit need not reach the disk before this returns), then ``read``'s value
        from what they returned, on the same connection.

        One round trip where the engine can (PostgreSQL's pipeline, committed at its end):
        ``send`` returns its cursors, and each result it reads itself costs a round trip
        there (taking what was sent before it along, in the same transaction). ``read``
        runs after that commit there (what it runs commits in a transaction of its own),
        and inside the one transaction elsewhere. When ``send`` raises, nothing it sent
        happened.
        """

    @abc.abstractmethod
    def names(self, names: Collection[str] | None) -> Any:
        """Kinds or queues a claim may take, as its claim statement reads them (None: any)."""

    def key_set(self, keys: frozenset[str]) -> Any:
        """Keys a statement reads as ``names`` gives them, for a set sent again and again
        (a fair kind's listed keys, claim after claim): an engine may keep its form."""
        return self.names(keys)

    @abc.abstractmethod
    def announce(self, conn: Connection) -> None:
        """Tell runners in other processes, at this transaction's commit, that jobs may be
        ready to claim (nothing where they watch the database themselves)."""

    reads_cost_no_round_trip: bool = False
    """A read costs no round trip (an embedded database): a claim may read a little under its
    locks before it decides what to send."""

    async_connection_type: type | None = None
    """The application's asyncio connection type ``create_in_async`` takes (None: none)."""

    def let_others_write(self, took: float) -> None:
        """After one batch of a long run of writes (a bulk action's) that took ``took``
        seconds: let other processes waiting to write have their turn (nothing where locks
        are per row)."""
        return None

    def look_then_lock(self, conn: Connection, kinds: Sequence[str]) -> Cursor:
        """Send the look at the queues passed over (``passed_over_queues``), then take the
        locks of the limited ``kinds`` in their order (``lock_limited``). Its rows are the
        look's; one whose name is None is none of them (where the lock comes back in it)."""
        look = conn.execute(self.sql("passed_over_queues"), {})
        for kind in kinds:
            self.lock_limited(conn, "lock_limited_kind", {"kind": kind})
        return look

    def lock_limited(self, conn: Connection, query: str, params: Mapping[str, Any]) -> None:
        """Take the lock ``query`` (a limited kind's or queue's) until this transaction
        ends, so that claims under it take turns across runners (nothing where one writer
        at a time holds the whole database)."""
        conn.execute(self.sql(query), params)

    def announcement(self) -> tuple[str, Mapping[str, Any]] | None:
        """The statement ``announce`` runs, for a connection this engine does not drive (an
        asyncio one); None where other processes watch the database themselves."""
        return None

    def announce_if_queues_limited(self, conn: Connection) -> None:
        """``announce``, if any queue is limited now: an outcome may free a limited queue's slot
        that a runner of other kinds waits for, though the writer never claimed from it."""
        self.announce(conn)

    def send_announced(self, sql: str, params: Mapping[str, Any]) -> None:
        """One statement whose result nobody reads, in a transaction of its own, announced
        (``announce``) at its commit: ``send`` of the two, or the engine's cheaper way."""

        def work(conn: Connection) -> None:
            conn.execute(sql, params)
            self.announce(conn)

        self.send(work)

    translated: Callable[[], AbstractContextManager[None]]
    """A block whose driver errors come out as StoreError (with none of their text)."""

    connection_type: type[Connection]
    """The driver's connection class: an application's connection must be one."""

    def application_connection(self, connection: object) -> Connection:
        """An application's own connection, checked; TypeError when it is not this engine's."""
        if not isinstance(connection, self.connection_type):
            kind = self.connection_type  # named as users import it: sqlite3.Connection
            name = f"{kind.__module__.split('.')[0]}.{kind.__qualname__}"
            raise TypeError(f"connection must be a {name} to this database")
        return connection

    @abc.abstractmethod
    def stamp(self, time: datetime.datetime) -> Any:
        """A time as this engine stores it."""

    @abc.abstractmethod
    def parse_time(self, value: Any) -> datetime.datetime:
        """A stored time (a column, or text inside a JSON value) as an aware datetime."""

    def sql(self, name: str) -> str:
        """The query file ``name``, in this engine's placeholder style."""
        return self.queries[name]

    def placeholder(self, name: str) -> str:
        """The named parameter ``name`` as this engine's driver spells it."""
        return self.queries.style.spell(name)


class SqlPart(abc.ABC):
    """A concern of the shared SQL store; every part runs on the one engine."""

    _engine: SqlEngine

    def _change(self, query: str, params: Mapping[str, Any]) -> int:
        """Run the query file ``query`` in a transaction of its own (one round trip where the
        engine can); the rows it changed."""
        sql = self._engine.sql(query)
        return self._engine.send_then_read(
            lambda conn: conn.execute(sql, params), lambda conn, cursor: int(cursor.rowcount)
        )

    def _rows(self, query: str, params: Mapping[str, Any] = _NO_PARAMETERS) -> list[Any]:
        """Every row the query file ``query`` reads."""
        sql = self._engine.sql(query)
        return self._engine.read(lambda conn: conn.execute(sql, params).fetchall())
