"""SQLite connections: one writer per process behind a lock, readers apart.

WAL lets readers run beside the writer. Readers are pooled, not kept one per
thread: a thread-per-request server would otherwise open a connection (two
descriptors) for every thread it ever ran and never close them. At most
``IDLE_READERS`` idle ones are kept; a burst opens more and closes them after. Every write is a ``BEGIN IMMEDIATE``
transaction, so it takes the write lock up front and waits ``busy_timeout``
for it instead of failing half-way. A connection never crosses ``fork()``:
a child that uses the store opens its own, and keeps the parent's
referenced but unused (closing them could checkpoint and delete the WAL the
parent is still using).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from jobtable.core.errors import StoreUnavailableError

SYNCHRONOUS_MODES = ("full", "normal")
BUSY_TIMEOUT_MS = 5000
_SHORTENED_AFTER_MS = 50
"""A wait for the process's lock longer than this shortens SQLite's own wait after it."""

IDLE_READERS = 8
"""Idle read connections kept for reuse; more are opened under load and closed after."""

_inherited_across_fork: list[sqlite3.Connection] = []

T = TypeVar("T")


class Connections:
    def __init__(
        self, path: str, *, synchronous: str = "full", busy_timeout_ms: int = BUSY_TIMEOUT_MS
    ) -> None:
        if synchronous not in SYNCHRONOUS_MODES:
            raise ValueError(f"synchronous must be one of {', '.join(SYNCHRONOUS_MODES)}")
        self.path = path
        self.synchronous = synchronous
        self.busy_timeout_ms = busy_timeout_ms
        self._reset()

    def _reset(self) -> None:
        self._pid = os.getpid()
        self._write_lock = threading.Lock()
        self._writer: sqlite3.Connection | None = None
        self._readers_lock = threading.Lock()
        self._idle_readers: list[sqlite3.Connection] = []
        self._closed = False

    def _after_fork(self) -> None:
        if self._writer is not None:
            _inherited_across_fork.append(self._writer)
        _inherited_across_fork.extend(self._idle_readers)
        self._reset()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path,
            isolation_level=None,
            check_same_thread=False,
            timeout=self.busy_timeout_ms / 1000,
        )
        conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
        conn.execute(f"PRAGMA synchronous = {self.synchronous.upper()}")
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    def _check_open(self) -> None:
        if os.getpid() != self._pid:
            self._after_fork()
        if self._closed:
            raise sqlite3.ProgrammingError("the store is closed")

    @contextmanager
    def writer(self) -> Iterator[sqlite3.Connection]:
        """The writer connection, held under the process's write lock (no transaction).

        Waiting for the process's lock and then for SQLite's together last at
        most ``busy_timeout``: when another process holds the database's
        write lock, every thread here gives up within that bound, instead of
        one after the other, each after a full timeout of its own.
        """
        self._check_open()
        budget = self.busy_timeout_ms / 1000
        started = time.monotonic()
        if not self._write_lock.acquire(timeout=budget):
            raise StoreUnavailableError("database locked")
        try:
            if self._writer is None:
                self._writer = self._connect()
                mode = self._writer.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if mode != "wal":
                    raise sqlite3.OperationalError(f"cannot use WAL here (journal_mode {mode})")
            left_ms = int((budget - (time.monotonic() - started)) * 1000)
            if left_ms < self.busy_timeout_ms - _SHORTENED_AFTER_MS:
                self._writer.execute(f"PRAGMA busy_timeout = {max(left_ms, 1)}")
                try:
                    yield self._writer
                finally:
                    self._writer.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
            else:
                yield self._writer
        finally:
            self._write_lock.release()

    def write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` in one ``BEGIN IMMEDIATE`` transaction on the writer; commit or roll back."""
        with self.writer() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = work(conn)
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return result

    @contextmanager
    def reader(self) -> Iterator[sqlite3.Connection]:
        """A read-only connection for the caller's statements, back in the pool afterwards.

        Fetch every row before the block ends: an unfinished statement keeps
        a read transaction open, which holds back the WAL checkpoint.
        """
        self._check_open()
        with self._readers_lock:
            conn = self._idle_readers.pop() if self._idle_readers else None
        if conn is None:
            conn = self._connect()
            conn.execute("PRAGMA query_only = ON")
        try:
            yield conn
        finally:
            with self._readers_lock:
                keep = not self._closed and len(self._idle_readers) < IDLE_READERS
                if keep:
                    self._idle_readers.append(conn)
            if not keep:
                conn.close()

    def close(self) -> None:
        if os.getpid() != self._pid:
            self._after_fork()
        with self._write_lock:
            self._closed = True
            if self._writer is not None:
                self._writer.close()
                self._writer = None
        with self._readers_lock:
            for conn in self._idle_readers:
                conn.close()
            self._idle_readers.clear()
