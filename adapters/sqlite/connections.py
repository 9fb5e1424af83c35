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
from typing import Any, TypeVar

from jobtable.core.errors import StoreUnavailableError

SYNCHRONOUS_MODES = ("full", "normal")
BUSY_TIMEOUT_MS = 5000
_SHORTENED_AFTER_MS = 50
"""A wait for the process's lock longer than this shortens SQLite's own wait after it."""

IDLE_READERS = 8
"""Idle read connections kept for reuse; more are opened under load and closed after."""

WRITER_TEMP_STORE = "MEMORY"
"""Where the writer keeps temporary tables (claims build small ones at every batch)."""

MAX_GROUP = 64
"""Writes one transaction holds at most: a bounded wait for the last of them."""

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
        self._pending_lock = threading.Lock()
        self._settled = threading.Condition(self._pending_lock)  # a group's writes are settled
        self._pending: list[_Write] = []  # writes waiting for the next group
        self._leading = False  # a thread runs the waiting writes (or waits for the writer to)
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
        started = time.monotonic()
        if not self._write_lock.acquire(timeout=self.busy_timeout_ms / 1000):
            raise StoreUnavailableError("database locked")
        try:
            with self._held_writer(started) as conn:
                yield conn
        finally:
            self._write_lock.release()

    @contextmanager
    def _held_writer(self, started: float) -> Iterator[sqlite3.Connection]:
        """The writer, its busy timeout cut by the time already spent waiting (lock held)."""
        if self._writer is None:
            self._writer = self._connect()
            # A claim's CTEs, set operations and sorts are temporary tables of a few rows; in
            # files (SQLite's default here) each opened one on disk: 270 µs for a 50 µs claim.
            # The writer's only (readers may sort a large listing); migrations set it back.
            self._writer.execute(f"PRAGMA temp_store = {WRITER_TEMP_STORE}")
            mode = self._writer.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if mode != "wal":
                raise sqlite3.OperationalError(f"cannot use WAL here (journal_mode {mode})")
        left_ms = int((self.busy_timeout_ms / 1000 - (time.monotonic() - started)) * 1000)
        if left_ms < self.busy_timeout_ms - _SHORTENED_AFTER_MS:
            self._writer.execute(f"PRAGMA busy_timeout = {max(left_ms, 1)}")
            try:
                yield self._writer
            finally:
                self._writer.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
        else:
            yield self._writer

    def write(self, work: Callable[[sqlite3.Connection], T], *, durable: bool = True) -> T:
        """Run ``work`` on the writer and commit it; returns once its commit is durable.

        Group commit: writes that arrive while another thread commits wait
        for it; then the first of them to take the writer runs every write
        waiting by then in one ``BEGIN IMMEDIATE`` transaction, each in a
        savepoint of its own, and commits them together: one fsync for many
        jobs. A write that fails is rolled back to its savepoint and raises
        for its caller alone; the others commit. A lone write waits for
        nobody and pays no savepoint. With ``durable`` False (and synchronous FULL), a
        group of such writes only commits at NORMAL: no fsync, lost whole in a power
        loss; the next durable commit's fsync makes it durable too (the WAL is synced
        up to its end).
        """
        self._check_open()
        if (durable or self.synchronous != "full") and self._write_lock.acquire(blocking=False):
            # Nobody holds the writer and nobody waits: a group of one, run here without
            # queueing (a write arriving meanwhile waits for this one, then commits every
            # write queued behind it, as below).
            writer = self._writer
            if writer is not None and not self._pending:
                try:
                    return _run_alone(writer, work)
                finally:
                    self._write_lock.release()
            self._write_lock.release()  # the first write, or writes queued: as below
        request = _Write(work, durable)
        started = time.monotonic()
        deadline = started + self.busy_timeout_ms / 1000
        with self._settled:
            self._pending.append(request)
            # A write whose group has committed returns at once: its caller never waits for
            # the writer again, which a later group may hold for as long as another process
            # holds the database (a claim committed but not yet returned would look lost).
            while not request.done and self._leading:
                left = deadline - time.monotonic()
                if left <= 0 and request in self._pending:
                    self._pending.remove(request)
                    raise StoreUnavailableError("database locked")
                self._settled.wait(left if left > 0 else None)  # past it: its group runs
            if request.done:
                return request.outcome()  # type: ignore[no-any-return]
            self._leading = True
        try:
            self._lead(request, started, deadline)
        finally:
            with self._settled:
                self._leading = False
                self._settled.notify_all()
        return request.outcome()  # type: ignore[no-any-return]

    def _lead(self, request: _Write, started: float, deadline: float) -> None:
        """Take the writer and run the waiting writes, group by group, until ``request``'s is
        done; give up (``request`` unrun) when the writer stays held past ``deadline``."""
        if not self._write_lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
            with self._settled:
                if request in self._pending:
                    self._pending.remove(request)
                    raise StoreUnavailableError("database locked")
                while not request.done:  # a group run by the writer's holder has it
                    self._settled.wait()
            return
        try:
            with self._held_writer(started) as conn:
                while not request.done:  # past MAX_GROUP ahead of it: another group
                    self._commit_pending(conn)
        finally:
            self._write_lock.release()

    def _commit_pending(self, conn: sqlite3.Connection) -> None:
        """Run the waiting writes in groups of at most MAX_GROUP (the writer lock is held)."""
        with self._pending_lock:
            group = self._pending[:MAX_GROUP]
            del self._pending[:MAX_GROUP]
        while group:
            relax = self.synchronous == "full" and not any(each.durable for each in group)
            if not relax:
                group = _run_group(conn, group)
            else:
                conn.execute("PRAGMA synchronous = NORMAL")
                try:
                    group = _run_group(conn, group)
                finally:
                    conn.execute("PRAGMA synchronous = FULL")
            with self._settled:
                self._settled.notify_all()  # their callers return, the writer still held here

    def read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work``'s value, run on a pooled read connection (``reader`` as one call, without
        a generator: every GET takes this path)."""
        conn = self._take_reader()
        try:
            return work(conn)
        finally:
            self._give_back(conn)

    @contextmanager
    def reader(self) -> Iterator[sqlite3.Connection]:
        """A read-only connection for the caller's statements, back in the pool afterwards.

        Fetch every row before the block ends: an unfinished statement keeps
        a read transaction open, which holds back the WAL checkpoint.
        """
        conn = self._take_reader()
        try:
            yield conn
        finally:
            self._give_back(conn)

    def _take_reader(self) -> sqlite3.Connection:
        self._check_open()
        with self._readers_lock:
            conn = self._idle_readers.pop() if self._idle_readers else None
        if conn is None:
            conn = self._connect()
            conn.execute("PRAGMA query_only = ON")
        return conn

    def _give_back(self, conn: sqlite3.Connection) -> None:
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


class _Write:
    """One caller's write, and once its group has ended, what came of it."""

    __slots__ = ("done", "durable", "error", "value", "work")

    def __init__(self, work: Callable[[sqlite3.Connection], Any], durable: bool = True) -> None:
        self.work = work
        self.durable = durable
        self.value: Any = None
        self.error: BaseException | None = None
        self.done = False

    def settle(self, value: Any = None, error: BaseException | None = None) -> None:
        self.value, self.error, self.done = value, error, True

    def outcome(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.value


def _run_group(conn: sqlite3.Connection, group: list[_Write]) -> list[_Write]:
    """Run ``group`` in one transaction and settle each write; return those to run again.

    Each write of a group runs in a savepoint: its failure rolls back its own
    statements only. When a failure ends the whole transaction (SQLite does
    on a full disk or an I/O error), the others' statements went with it:
    they are returned, to run again in a group of their own.
    """
    alone = len(group) == 1
    try:
        conn.execute("BEGIN IMMEDIATE")
    except BaseException as error:
        for request in group:
            request.settle(error=error)
        if not isinstance(error, Exception):
            raise
        return []
    outcomes: list[tuple[Any, BaseException | None]] = []
    try:
        for request in group:
            try:
                outcomes.append((_run_one(conn, request, alone), None))
            except Exception as error:
                if alone or not conn.in_transaction:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    request.settle(error=error)
                    return [other for other in group if other is not request]
                outcomes.append((None, error))
        conn.execute("COMMIT")
    except BaseException as failure:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        for request in group:
            request.settle(error=failure)
        if not isinstance(failure, Exception):
            raise
        return []
    for request, (value, raised) in zip(group, outcomes, strict=True):
        request.settle(value, raised)
    return []


def _run_alone(conn: sqlite3.Connection, work: Callable[[sqlite3.Connection], T]) -> T:
    """``work`` in a transaction of its own, committed; rolled back when it raises (as
    ``_run_group`` runs a group of one, without settling a ``_Write``)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        value = work(conn)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return value


def _run_one(conn: sqlite3.Connection, request: _Write, alone: bool) -> Any:
    if alone:
        return request.work(conn)
    conn.execute("SAVEPOINT jobtable_write")
    try:
        value = request.work(conn)
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK TO jobtable_write")
            conn.execute("RELEASE jobtable_write")
        raise
    conn.execute("RELEASE jobtable_write")
    return value
