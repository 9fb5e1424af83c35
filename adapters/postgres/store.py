"""The PostgreSQL JobStore: many worker processes on many hosts, on the shared SQL body.

Claims use ``FOR UPDATE SKIP LOCKED`` in one statement; connections come
from a psycopg pool. The database URL (and its password) is never logged or
put in an error: errors carry only the core's fixed categories.

Liveness (core/liveness.py): each runner holds an advisory lock, whose
absence on the server it was taken on shows a crash within a second, and
raises a beat in ``jobtable_runners`` every sweep, which survives a failover
and a pooler. A runner whose beat stops for ``liveness_timeout`` seconds is
dead; its lock's session is ended by the server after as long without a word.
With no pooler (PostgreSQL 14 and later), a process's runners hold session
locks on one shared session, which also LISTENs (shared_session.py): a worker
process holds two connections at rest, that one and one pooled.

Behind PgBouncer in transaction mode (``pooler=True``): each runner's lock is
taken in a transaction of its own (lock_session.py), no prepared statements,
and LISTEN cannot work through it, so wakes come from a direct ``listen_url``
or, without one, from a look every second.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import weakref
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg.conninfo import make_conninfo
from psycopg_pool import ConnectionPool

from jobtable.adapters.postgres.engine import QUERIES, PostgresEngine
from jobtable.adapters.postgres.errors import translated
from jobtable.adapters.postgres.libpq_calls import neuter_descriptor
from jobtable.adapters.postgres.listener import (
    FALLBACK_INTERVAL,
    EventListener,
    NotifyListener,
    PollingWatcher,
    tell_changed_jobs,
)
from jobtable.adapters.postgres.migrate import migrate
from jobtable.adapters.postgres.runner_locks import RunnerLocks
from jobtable.adapters.postgres.shared_session import SharedSession
from jobtable.adapters.postgres.subscribers import Subscription
from jobtable.adapters.sql.engine import Connection
from jobtable.adapters.sql.store import SqlStore
from jobtable.core.errors import StoreError
from jobtable.core.liveness import LivenessTerms, LockState, RunnerSighting

DEFAULT_POOL_SIZE = 10
CONNECT_TIMEOUT = 5.0
POOL_MAX_IDLE = 60.0
"""Seconds a pooled connection beyond the first stays open unused: a burst's connections are
closed once it is over, and an idle runner holds one pooled connection (psycopg_pool's
default keeps them ten minutes)."""

POOL_WAIT = 2.0
"""Seconds a call waits for a pooled connection: while the server is down, a POST answers
503 after this long instead of hanging (every query takes milliseconds, so a healthy pool
never makes a caller wait this long)."""
LIVENESS_TIMEOUT = 20.0
"""Seconds of silence after which the server ends a runner's lock session and others may
judge it dead by its beat: the bound on settling the jobs of a host that vanished."""
MIN_LIVENESS_TIMEOUT = 5.0

IDLE_SWEEPS_SLOWER = 2.5
"""A runner running nothing sweeps every 1.25 s, not 0.5 s: each sweep's look at the runners
is a transaction, and an idle runner makes at most one a second (0.8 for its sweeps, 0.1
for the beats that keep its lease, a look every FALLBACK_INTERVAL). 1.25 s is over the fast
window (1 s), so a dead runner is judged at its second absent sighting: its jobs are
settled within about 2.5 s of a kill by an idle observer, 1.5 s by a busy one."""
"""Below this the owner's margin (at least 2 s) and a check's deadline leave it no time."""
POOLER_POLL_INTERVAL = 1.0
"""Behind a transaction pooler with no direct URL to LISTEN on: look for new jobs this often."""
SHARED_SESSION_SINCE = 140000
"""The first server version with ``idle_session_timeout``, which a shared session's locks
need (older servers: a lock session per runner, as behind a pooler)."""


_open_stores: weakref.WeakSet[PostgresStore] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for store in list(_open_stores):
        store.forget_after_fork()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _plan_without_jit(conn: psycopg.Connection) -> None:
    """Turn JIT off for a pooled session (behind a pooler, the engine does so in each
    batch's transaction instead). jobtable's statements are short; one whose cost the
    planner overestimated (a claim reading queue by queue, the queues guessed at 100) was
    compiled at every run: 250 ms for a 2 ms claim. A SET, not a startup option: the
    URL's, PGOPTIONS' or a service file's own options stay as they are."""
    conn.execute("SET jit = off")
    conn.commit()


class PostgresStore(SqlStore):
    def __init__(
        self,
        pool: ConnectionPool,
        conninfo: str = "",
        *,
        options: str = "",
        listen_conninfo: str | None = None,
        pooler: bool = False,
        liveness_timeout: float = LIVENESS_TIMEOUT,
    ) -> None:
        if liveness_timeout < MIN_LIVENESS_TIMEOUT:
            raise ValueError(f"liveness_timeout must be at least {MIN_LIVENESS_TIMEOUT} s")
        self._postgres = PostgresEngine(pool, jit_off_each_transaction=pooler)
        super().__init__(self._postgres)
        self._pool = pool
        self._conninfo = make_conninfo(conninfo, options=options) if options else conninfo
        self._listen_conninfo = listen_conninfo
        self._pooler = pooler
        self._pid = os.getpid()
        self.liveness_terms = LivenessTerms(
            lease=liveness_timeout,
            lock_timeout=liveness_timeout,
            idle_sweeps_slower=IDLE_SWEEPS_SLOWER,
        )
        self._liveness_timeout = liveness_timeout
        self._server_version = 0
        """The server's version (``migrate`` reads it)."""
        self._locks: RunnerLocks | SharedSession = RunnerLocks(
            self._conninfo, session_timeout=liveness_timeout
        )
        self._listeners: list[NotifyListener | Subscription] = []
        self.events_channel = "jobtable_events_public"
        """The channel the jobs_changed trigger tells of each job's changes on."""
        self.applied_at_open: list[str] = []
        _open_stores.add(self)

    @classmethod
    def open(
        cls,
        url: str,
        *,
        now: datetime.datetime,
        schema: str | None = None,
        pool_size: int = DEFAULT_POOL_SIZE,
        pooler: bool = False,
        listen_url: str | None = None,
        liveness_timeout: float = LIVENESS_TIMEOUT,
    ) -> PostgresStore:
        """Connect, and bring the schema up to date. Raises StoreError when it cannot.

        ``schema`` puts the tables in that schema (it must exist), as tests
        do to get a fresh database each. ``pooler`` says ``url`` goes through
        PgBouncer in transaction mode; ``listen_url``, a direct URL to the
        same database, then keeps wakes instant.
        """
        options = f"-c search_path={schema}" if schema else ""
        kwargs: dict[str, Any] = {"connect_timeout": int(CONNECT_TIMEOUT)}
        if options:
            kwargs["options"] = options
        if pooler:
            kwargs["prepare_threshold"] = None  # PgBouncer 1.18 keeps no prepared statements
        pool = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            kwargs=kwargs,
            configure=None if pooler else _plan_without_jit,
            timeout=POOL_WAIT,
            max_idle=POOL_MAX_IDLE,
            open=False,
            name="jobtable",
        )
        listen = None
        if listen_url:
            listen = make_conninfo(listen_url, options=options) if options else listen_url
        store = cls(
            pool,
            url,
            options=options,
            listen_conninfo=listen,
            pooler=pooler,
            liveness_timeout=liveness_timeout,
        )
        try:
            # Migrate first, on a connection of its own: an unreachable server
            # fails here at once, not after the pool's retries.
            store.applied_at_open = store.migrate(now=now)
            if not pooler and store._server_version >= SHARED_SESSION_SINCE:
                store._share_one_session()
            with translated():
                pool.open(wait=True, timeout=CONNECT_TIMEOUT)
        except BaseException:
            store.close()
            raise
        return store

    def migrate(self, *, now: datetime.datetime) -> list[str]:
        """Apply pending migrations; returns the versions applied (none when up to date)."""
        with translated(), self._own_connection() as conn:
            applied = migrate(conn, now=now)
            row = conn.execute("SELECT current_schema()").fetchone()
            self._server_version = conn.info.server_version
        # The channel follows the schema the tables are in, however it was chosen
        # (the schema argument, options in the URL, the user's default search_path).
        schema = row[0] if row and row[0] else "public"
        self._postgres.channel = f"jobtable_jobs_{schema}"[:63]
        self.events_channel = f"jobtable_events_{schema}"[:63]  # as the jobs_changed trigger
        return applied

    def _share_one_session(self) -> None:
        """Hold every runner's lock, and LISTEN, on one session (no pooler between)."""
        self._locks = SharedSession(self._conninfo, session_timeout=self._liveness_timeout)

    @property
    def channel(self) -> str:
        """The NOTIFY channel of this store's jobs table: one per schema."""
        return self._postgres.channel

    def watch(
        self, on_change: Callable[[], None], *, fallback_interval: float = FALLBACK_INTERVAL
    ) -> NotifyListener | PollingWatcher | Subscription:
        """Call ``on_change`` when any process enqueues here (and every few seconds anyway).

        Behind a transaction pooler LISTEN cannot work: without a direct
        ``listen_url`` this looks every second instead, and says so.
        """
        if self._pooler and self._listen_conninfo is None:
            return PollingWatcher(on_change, interval=POOLER_POLL_INTERVAL).start()
        if isinstance(self._locks, SharedSession):
            subscription = self._locks.subscribe(
                self.channel, lambda payload: on_change(), fallback_interval=fallback_interval
            )
            self._listeners.append(subscription)
            return subscription
        listener = NotifyListener(
            self._listen_connection, self.channel, on_change, fallback_interval=fallback_interval
        ).start()
        self._listeners.append(listener)
        return listener

    def _own_connection(self) -> psycopg.Connection:
        """An autocommit connection outside the pool, for migrating."""
        return psycopg.connect(
            self._conninfo,
            autocommit=True,
            connect_timeout=int(CONNECT_TIMEOUT),
            prepare_threshold=None,
        )

    def _listen_connection(self) -> psycopg.Connection:
        return psycopg.connect(
            self._listen_conninfo or self._conninfo,
            autocommit=True,
            connect_timeout=int(CONNECT_TIMEOUT),
        )

    # -- liveness: an advisory lock per runner, in a session of its own ----

    def _hold_liveness(self, runner_id: str) -> str | None:
        self.confirm_liveness(runner_id, timeout=CONNECT_TIMEOUT)
        return self._locks.location(runner_id)

    def _lock_location(self, runner_id: str) -> str | None:
        return self._locks.location(runner_id)

    def _release_liveness(self, runner_id: str) -> None:
        self._locks.release(runner_id)

    def confirm_liveness(self, runner_id: str, *, timeout: float) -> bool:
        """A round trip on the lock session; a new session and lock if it is gone.

        Each with ``timeout``: a silent network (a partition) fails the check
        instead of hanging it.
        """
        self._check_not_forked()
        return self._locks.confirm(runner_id, timeout=timeout)

    def lock_backend_pid(self, runner_id: str) -> int | None:
        """The server process holding ``runner_id``'s lock, for operators and tests."""
        return self._locks.backend_pid(runner_id)

    def _hold_dead_runners_lock(
        self, conn: Connection, runner_id: str | None, until_committed: contextlib.ExitStack
    ) -> bool:
        """The lock the dead runner's session held, taken until the settling commits."""
        taken = conn.execute(QUERIES["take_dead_runners_lock"], {"owner": runner_id}).fetchone()
        return bool(taken and taken[0])

    def sight_runners(self) -> list[RunnerSighting]:
        with translated(), self._pool.connection() as conn:
            rows = conn.execute(QUERIES["sight_runners"]).fetchall()
        sightings = []
        for runner_id, registered, beat, on_this_server, lock_held, holds_running in rows:
            if lock_held:
                lock = LockState.HELD
            elif registered and on_this_server:
                lock = LockState.ABSENT
            else:
                lock = LockState.UNKNOWN  # taken on another server, or no row to say where
            sightings.append(
                RunnerSighting(
                    runner_id=runner_id,
                    registered=registered,
                    beat=beat,
                    lock=lock,
                    holds_running=holds_running if registered else None,
                )
            )
        return sightings

    def watch_jobs(
        self,
        on_change: Callable[[str | None], None],
        *,
        fallback_interval: float = FALLBACK_INTERVAL,
    ) -> EventListener | PollingWatcher | Subscription:
        """Call ``on_change`` with a job's id soon after any process changes it (NOTIFY from
        the jobs_changed trigger); with None when a change may have gone unheard (after a
        reconnect, and every ``fallback_interval`` seconds)."""
        if self._pooler and self._listen_conninfo is None:
            return PollingWatcher(lambda: on_change(None), interval=POOLER_POLL_INTERVAL).start()
        if isinstance(self._locks, SharedSession):
            subscription = self._locks.subscribe(
                self.events_channel,
                lambda payload: tell_changed_jobs(on_change, payload),
                fallback_interval=fallback_interval,
            )
            self._listeners.append(subscription)
            return subscription
        listener = EventListener(
            self._listen_connection,
            self.events_channel,
            on_change,
            fallback_interval=fallback_interval,
        )
        listener.start()
        self._listeners.append(listener)
        return listener

    # -- closing, and forks ------------------------------------------------

    def close(self) -> None:
        if os.getpid() != self._pid:
            return  # a forked child: what it inherited is the parent's (forget_after_fork)
        self._locks.release_all()
        for listener in self._listeners:
            listener.stop()
        if isinstance(self._locks, SharedSession):
            self._locks.close()
        self._pool.close()

    def forget_after_fork(self) -> None:
        """In a forked child: let go of every inherited connection without ending it.

        The child keeping a lock session's socket would keep a dead parent
        "alive"; the child closing it would end the parent's session (and its
        lock) under the parent. Each socket is pointed at /dev/null instead.
        """
        self._locks.forget_after_fork()
        idle = list(getattr(self._pool, "_pool", ()))  # psycopg_pool's idle connections
        for conn in idle + [listener.connection for listener in self._listeners]:
            if conn is not None and not conn.closed:
                neuter_descriptor(conn.pgconn.socket)

    def _check_not_forked(self) -> None:
        if os.getpid() != self._pid:
            raise StoreError("database closed")  # a store does not cross fork(): open another
