"""SQLite as the shared SQL body's engine: group-committed writes, pooled readers, ISO times.

Other processes hear of a commit through the database file (watcher.py), so
nothing is announced in the transaction.
"""

from __future__ import annotations

import datetime
import functools
import json
import sqlite3
import time
from collections.abc import Callable, Collection, Mapping
from typing import Any, TypeVar

from jobtable.adapters.sql.engine import Connection, SqlEngine
from jobtable.adapters.sql.queries import Placeholders, Queries
from jobtable.adapters.sqlite.connections import Connections
from jobtable.adapters.sqlite.errors import translated

T = TypeVar("T")
S = TypeVar("S")

QUERIES = Queries("jobtable.adapters.sqlite", Placeholders.NAMED)
"""SQLite's own query files, else the shared ones."""


def stamp(now: datetime.datetime) -> str:
    """A time as SQLite stores it: ISO 8601 text in UTC, to the microsecond (it sorts)."""
    return now.astimezone(datetime.UTC).isoformat(timespec="microseconds")


def parse_stamp(text: Any) -> datetime.datetime:
    """A stored time; one written without an offset (by a tool, say) is UTC, as ours are."""
    parsed = datetime.datetime.fromisoformat(str(text))
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=datetime.UTC)


MIN_YIELD, MAX_YIELD = 0.01, 0.1
"""Seconds a bulk action pauses between its batches on SQLite (as long as the batch took)."""


class SqliteEngine(SqlEngine):
    queries = QUERIES
    translated = staticmethod(translated)
    connection_type = sqlite3.Connection
    reads_cost_no_round_trip = True

    def __init__(self, connections: Connections) -> None:
        self._db = connections

    def read(self, work: Callable[[Connection], T]) -> T:
        with translated():
            return self._db.read(work)

    def write(self, work: Callable[[Connection], T]) -> T:
        with translated():
            return self._db.write(work)

    def send(self, work: Callable[[Connection], object]) -> None:
        self.write(work)  # group commit already shares one transaction among writers

    def send_then_read(
        self,
        send: Callable[[Connection], S],
        read: Callable[[Connection, S], T],
        *,
        durable: bool = True,
    ) -> T:
        with translated():
            return self._db.write(lambda conn: read(conn, send(conn)), durable=durable)

    def names(self, names: Collection[str] | None) -> str | None:
        """A JSON array (json_each reads it), the same text for the same set every time."""
        if names is None:
            return None
        return _names_json(names if isinstance(names, frozenset) else frozenset(names))

    def let_others_write(self, took: float) -> None:
        # Another process waiting for the one write lock polls for it (SQLite's busy handler
        # sleeps 1 ms, then longer, up to 100 ms): a pause as long as the batch took (10 to
        # 100 ms) lets it in between batches instead of starving behind them.
        time.sleep(min(MAX_YIELD, max(MIN_YIELD, took)))

    def announce(self, conn: Connection) -> None:
        pass  # other processes watch the database file

    def lock_limited(self, conn: Connection, query: str, params: Mapping[str, Any]) -> None:
        pass  # the one writer's transaction (BEGIN IMMEDIATE) holds the database already

    def announce_if_queues_limited(self, conn: Connection) -> None:
        pass  # other processes watch the database file

    def stamp(self, time: datetime.datetime) -> str:
        return stamp(time)

    def parse_time(self, value: Any) -> datetime.datetime:
        return parse_stamp(value)


@functools.lru_cache(maxsize=64)
def _names_json(names: frozenset[str]) -> str:
    """Cached: a runner passes the same sets on every claim."""
    return json.dumps(sorted(names))
