"""One PostgreSQL session per process that holds its runners' liveness locks and hears NOTIFY.

Where no pooler stands between, a runner's lock needs no open transaction: a
session-level advisory lock (``pg_try_advisory_lock``) lives as long as the
session. And a session outside a transaction can LISTEN (one in a transaction
hears nothing until it ends). So one connection does both, and a worker process
holds two at rest: this one and one pooled.

- ``idle_session_timeout`` (PostgreSQL 14 and later) has the server end the
  session after ``session_timeout`` seconds without a statement while it holds
  a lock, which releases every lock on it: the same bound as the lock session
  a pooler needs (lock_session.py), and for the same reason (a partition that
  TCP cannot show). Each runner's check, a round trip with a deadline, keeps
  it alive: a bare Sync, which the server answers without a transaction, so
  an idle runner's checks cost the database none.
- One thread reads notifications as they come and hands each to the
  subscribers of its channel (subscribers.py). After a reconnect, and every
  subscriber's fallback interval, each subscriber is told to look (``None``),
  as listener.py's NotifyListener does.
- When the session ends, every lock on it is lost: each runner's next check
  says so, and takes its lock again on a new session.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time

from psycopg import pq
from psycopg.conninfo import make_conninfo

from jobtable.adapters.postgres.libpq_calls import (
    LockLostError,
    neuter_descriptor,
    open_connection,
    readable,
    round_trip,
    synced,
)
from jobtable.adapters.postgres.lock_session import RUNNER_KEY, safe_runner_id
from jobtable.adapters.postgres.runner_locks import RELEASE_TIMEOUT
from jobtable.adapters.postgres.subscribers import Heard, Subscribers, Subscription
from jobtable.core.backoff import next_claim_retry_delay

READ_SLICE = 0.25
"""The longest one wait for notifications lasts before the stop flag is checked again."""
CONNECT_TIMEOUT = 5.0
MIN_ROUND_TRIP = 0.25
"""A check left less than this after waiting for another's round trip does not ask: it
fails without blaming (and closing) the session every runner's lock is on."""


class SharedSession:
    def __init__(
        self, conninfo: str, *, session_timeout: float, logger: logging.Logger | None = None
    ) -> None:
        # UTF8 whatever the role or database says: payloads are decoded as such.
        self._conninfo = make_conninfo(conninfo, client_encoding="UTF8").encode("utf-8")
        self._timeout_ms = max(1, round(session_timeout * 1000))
        self._log = logger or logging.getLogger("jobtable.postgres")
        self._io = threading.Lock()
        """One round trip at a time on the connection; held while it is replaced or closed."""
        self._conn: pq.abc.PGconn | None = None
        self._generation = 0
        """Which connection this is: a lock taken on an earlier one is gone."""
        self._incarnation: str | None = None
        self._locks: dict[str, tuple[int, str | None]] = {}
        """Runner id -> the generation its lock was taken on, and that server's start time."""
        self._synced = 0.0
        """When the last Sync that came back was sent (monotonic)."""
        self._subscribers = Subscribers(self._log)
        self._reader: threading.Thread | None = None
        self._stop = threading.Event()
        self._look_pending = False

    # -- locks -----------------------------------------------------------------

    def confirm(self, runner_id: str, *, timeout: float) -> bool:
        """A round trip on the session while ``runner_id``'s lock is on it (True); its lock
        taken again, on a new session if need be, when it is gone (False). Raises
        LockLostError when neither can be had within ``timeout``; one that only ran out of
        time waiting for another's round trip leaves the session (and others' locks) be."""
        safe_runner_id(runner_id)
        asked = time.monotonic()
        deadline = asked + timeout
        if not self._io.acquire(timeout=max(0.0, timeout)):
            raise LockLostError()
        heard: list[tuple[str, str]] = []
        try:
            if self._conn is not None and self._holds(runner_id):
                if self._synced >= asked:
                    return True  # a Sync sent since this call began came back: proof enough
                if deadline - time.monotonic() < MIN_ROUND_TRIP:
                    raise LockLostError()  # no time left to ask: the session is not to blame
                sent = time.monotonic()
                try:
                    synced(self._conn, deadline)
                    self._synced = sent
                    return True
                except LockLostError:
                    self._close()  # no answer in time: every lock on it is gone
                finally:
                    heard = self._drain()
            self._take(runner_id, deadline)
            heard += self._drain()
            return False
        finally:
            self._io.release()
            self._subscribers.tell(heard)

    def location(self, runner_id: str) -> str | None:
        """The server ``runner_id``'s lock was taken on (its start time), if held here."""
        taken = self._locks.get(runner_id)
        return None if taken is None else taken[1]

    def backend_pid(self, runner_id: str) -> int | None:
        """The server process holding ``runner_id``'s lock."""
        conn = self._conn
        if conn is None or not self._holds(runner_id):
            return None
        with contextlib.suppress(Exception):
            return int(conn.backend_pid)
        return None

    def release(self, runner_id: str, timeout: float = RELEASE_TIMEOUT) -> None:
        """Let go of ``runner_id``'s lock, waiting (within ``timeout``) for the server to say so:
        a sweep may look next. The session closes once it holds nothing and nobody listens."""
        heard: list[tuple[str, str]] = []
        with self._io:
            held = self._conn is not None and self._holds(runner_id)
            self._locks.pop(runner_id, None)
            if held:
                assert self._conn is not None
                key = RUNNER_KEY.format(id=f"'{runner_id}'")
                last = "; SET idle_session_timeout = 0" if not self._live_locks() else ""
                unlock = f"SELECT pg_advisory_unlock({key}){last}"
                try:
                    round_trip(self._conn, unlock, time.monotonic() + timeout)
                except LockLostError:
                    self._close()
                heard = self._drain()
            if not self._locks and not self._subscribers.all:
                self._close()
        self._subscribers.tell(heard)

    def release_all(self, timeout: float = RELEASE_TIMEOUT) -> None:
        for runner_id in list(self._locks):
            self.release(runner_id, timeout)

    def _take(self, runner_id: str, deadline: float) -> None:
        """Holding ``_io``: take ``runner_id``'s lock on the session, on a new one if it is
        gone (found so now, or before)."""
        fresh = self._conn is None
        if fresh:
            self._install(*_opened(self._conninfo, self._subscribers.channels(), deadline))
        key = RUNNER_KEY.format(id=f"'{runner_id}'")
        timeout = f"set_config('idle_session_timeout', '{self._timeout_ms}', false)"
        take = f"SELECT CASE WHEN pg_try_advisory_lock({key}) THEN {timeout} END"
        try:
            assert self._conn is not None
            results = round_trip(self._conn, take, deadline)
        except LockLostError:
            self._close()
            if fresh:
                raise
            self._install(*_opened(self._conninfo, self._subscribers.channels(), deadline))
            assert self._conn is not None
            results = round_trip(self._conn, take, deadline)  # once more, on a new session
        if results[-1].get_value(0, 0) is None:
            raise LockLostError()  # held elsewhere: its old session, which the server has not ended
        self._locks[runner_id] = (self._generation, self._incarnation)

    def _holds(self, runner_id: str) -> bool:
        """``runner_id``'s lock was taken on this session."""
        taken = self._locks.get(runner_id)
        return taken is not None and taken[0] == self._generation

    def _live_locks(self) -> bool:
        return any(self._holds(runner_id) for runner_id in list(self._locks))

    # -- notifications -----------------------------------------------------------

    def subscribe(self, channel: str, heard: Heard, *, fallback_interval: float) -> Subscription:
        """Hand ``channel``'s notifications to ``heard`` from now on; returns once the session
        listens (or its first try failed: the reader keeps trying, and looks once it listens)."""
        subscription = Subscription(
            channel, heard, fallback_interval, lambda: self.unsubscribe(subscription)
        )
        told: list[tuple[str, str]] = []
        with self._io:
            others = bool(self._subscribers.all)
            self._subscribers.all.append(subscription)
            if self._conn is not None:
                try:
                    listen = f'LISTEN "{channel}"'
                    round_trip(self._conn, listen, time.monotonic() + CONNECT_TIMEOUT)
                    told = self._drain()
                except LockLostError:
                    self._close()
            else:  # those listening before it (none, unless a reconnect is due) missed nothing
                with contextlib.suppress(LockLostError):
                    deadline = time.monotonic() + CONNECT_TIMEOUT
                    self._install(
                        *_opened(self._conninfo, self._subscribers.channels(), deadline),
                        look=others,
                    )
            self._start_reader()
        self._subscribers.tell(told)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        # Not while it is being told (unless it stops itself from there).
        with self._subscribers.telling, self._io:
            with contextlib.suppress(ValueError):
                self._subscribers.all.remove(subscription)
            channel = subscription.channel
            if not self._subscribers.all and not self._locks:
                self._close()
            elif self._conn is not None and channel not in self._subscribers.channels():
                try:
                    unlisten = f'UNLISTEN "{channel}"'
                    round_trip(self._conn, unlisten, time.monotonic() + CONNECT_TIMEOUT)
                except LockLostError:
                    self._close()

    def _start_reader(self) -> None:
        """Holding ``_io``: make sure the reader runs."""
        if self._reader is None:
            self._stop.clear()
            self._reader = threading.Thread(target=self._read, name="jobtable-session", daemon=True)
            self._reader.start()

    def _read(self) -> None:
        """Read notifications as they come; reconnect, with backoff, while anyone listens.
        A new session is opened without holding ``_io``: checks go on meanwhile."""
        delay: float | None = None
        while not self._stop.is_set():
            with self._io:
                conn = self._conn
                if conn is None and not self._subscribers.all:
                    self._reader = None  # under the lock: a new subscriber starts another
                    return
                heard = self._drain()  # any a round trip of another's read and left
            if conn is None:
                try:
                    opened = _opened(
                        self._conninfo,
                        self._subscribers.channels(),
                        time.monotonic() + CONNECT_TIMEOUT,
                    )
                    with self._io:
                        if self._conn is None and self._subscribers.all:
                            self._install(*opened)
                        else:
                            with contextlib.suppress(Exception):
                                opened[0].finish()
                    delay = None
                except LockLostError as error:
                    delay = next_claim_retry_delay(delay)
                    self._log.warning(
                        "listening for new jobs failed (%s); reconnecting in %.2fs",
                        type(error).__name__,
                        delay,
                    )
                    self._subscribers.look_all()  # something may have been queued meanwhile
                    self._stop.wait(delay)
            elif readable(conn, READ_SLICE):
                with self._io:
                    if self._conn is conn:
                        try:
                            conn.consume_input()
                            if conn.status != pq.ConnStatus.OK:
                                raise LockLostError()
                            heard += self._drain()
                        except Exception:
                            self._close()
            self._subscribers.tell(heard)
            if self._look_pending:
                self._look_pending = False
                self._subscribers.look_all()
            self._subscribers.look_when_due()

    def _install(self, conn: pq.abc.PGconn, incarnation: str | None, *, look: bool = True) -> None:
        """Holding ``_io``: ``conn`` (from ``_opened``) is the session now; each subscriber is
        told to look (what changed while none listened went unheard), unless ``look`` is
        False (the only subscriber just came)."""
        self._close()
        self._conn = conn
        self._generation += 1
        self._incarnation = incarnation
        if look and self._subscribers.all:
            self._look_pending = True  # the reader tells every subscriber, outside the lock
        if self._subscribers.all:
            self._start_reader()

    def _drain(self) -> list[tuple[str, str]]:
        """Holding ``_io``: the notifications libpq has read, as (channel, payload)."""
        heard = []
        conn = self._conn
        while conn is not None and (notify := conn.notifies()) is not None:
            try:
                heard.append((notify.relname.decode(), notify.extra.decode()))
            except UnicodeDecodeError:
                heard.append((notify.relname.decode(errors="replace"), ""))  # a look, then
        return heard

    # -- closing, and forks ----------------------------------------------------------

    def _close(self) -> None:
        """Holding ``_io``: end the session (and every lock on it)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.finish()

    def close(self) -> None:
        self._stop.set()
        with self._io:
            self._subscribers.all.clear()
            self._locks.clear()
            self._close()
            reader = self._reader
        if reader is not None and reader is not threading.current_thread():
            reader.join(5.0)

    def forget_after_fork(self) -> None:
        """In a forked child: drop the inherited session without a word to the server (the
        parent's: its locks must end with the parent, never with the child)."""
        conn, self._conn = self._conn, None
        if conn is not None and conn.status == pq.ConnStatus.OK:
            neuter_descriptor(int(conn.socket))
        self._io = threading.Lock()
        self._locks = {}
        self._subscribers = Subscribers(self._log)
        self._reader = None
        self._stop = threading.Event()


def _opened(
    conninfo: bytes, channels: list[str], deadline: float
) -> tuple[pq.abc.PGconn, str | None]:
    """A new session listening on ``channels``, and its server's start time (epoch seconds as
    text: tells a lock taken on this server from one taken before a restart or failover)."""
    conn = open_connection(conninfo, deadline)
    try:
        listens = "".join(f'LISTEN "{channel}"; ' for channel in channels)
        started = "SELECT extract(epoch FROM pg_postmaster_start_time())::text"
        incarnation = round_trip(conn, f"{listens}{started}", deadline)[-1].get_value(0, 0)
    except BaseException:
        with contextlib.suppress(Exception):
            conn.finish()
        raise
    return conn, None if incarnation is None else bytes(incarnation).decode()
