"""Open a fresh store of any engine for a test: memory, SQLite in a temporary directory, or a new PostgreSQL schema."""

from __future__ import annotations

import shutil
import time
from contextlib import ExitStack

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.memory import MemoryStore
from jobtable.adapters.sqlite import SqliteStore
from tests.support.postgres import fresh_schema, postgres_url

ENGINES = ["memory", "sqlite", "postgres"]


def open_store(engine: str, tmp_path, stack: ExitStack) -> object:
    now = FakeClock().now()
    if engine == "memory":
        return MemoryStore()
    if engine == "sqlite":
        return SqliteStore.open(tmp_path / "jobs.db", now=now)
    if engine == "postgres":
        from jobtable.adapters.postgres import PostgresStore

        url, schema = stack.enter_context(fresh_schema())
        store = PostgresStore.open(url, now=now, schema=schema)
        _postgres_urls[id(store)] = (url, schema)
        stack.callback(_postgres_urls.pop, id(store), None)
        return store
    raise ValueError(engine)


_postgres_urls: dict[int, tuple[str, str]] = {}
"""Each open PostgreSQL store's URL and schema, for a connection of the application's own."""


def same_database(store, engine: str, stack: ExitStack) -> object:
    """Another store on ``store``'s database, as another process would open it (closed with
    ``stack``); the memory store is one process's: ``store`` itself."""
    now = FakeClock().now()
    if engine == "memory":
        return store
    if engine == "sqlite":
        other = SqliteStore.open(store.path, now=now)
    else:
        from jobtable.adapters.postgres import PostgresStore

        url, schema = _postgres_urls[id(store)]
        other = PostgresStore.open(url, now=now, schema=schema)
    stack.callback(other.close)
    return other


def application_connection(store, engine: str, stack: ExitStack) -> object:
    """A connection of the application's own to ``store``'s database, as ``create_in`` takes
    one (closed with ``stack``): sqlite3's or psycopg's, its transaction not yet begun."""
    if engine == "sqlite":
        import sqlite3

        conn = sqlite3.connect(store.path)
    else:
        import psycopg

        url, schema = _postgres_urls[id(store)]
        conn = psycopg.connect(url, options=f"-c search_path={schema}")
    stack.callback(conn.close)
    return conn


def break_lock(store, runner_id: str) -> None:
    """Take a live runner's liveness lock from under it, as the world can on each engine.

    Memory: the set entry goes. SQLite: the lock folder beside the database is
    removed, as ``git clean -X`` would. PostgreSQL: the lock session is ended
    with ``pg_terminate_backend``, as an operator (or a restart) would.
    """
    inner = getattr(store, "inner", store)
    if isinstance(inner, MemoryStore):
        inner.break_lock(runner_id)
    elif isinstance(inner, SqliteStore):
        shutil.rmtree(inner.path + ".runners")
    else:
        import psycopg

        pid = inner.lock_backend_pid(runner_id)
        assert pid is not None, "the runner holds no lock session"
        with psycopg.connect(postgres_url(), autocommit=True) as conn:
            conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
            # Wait until the server has ended it: termination is asynchronous.
            for _ in range(500):
                alive = conn.execute(
                    "SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)
                ).fetchone()
                if alive is None:
                    return
                time.sleep(0.01)
        raise AssertionError("the lock session outlived pg_terminate_backend")
