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
        return PostgresStore.open(url, now=now, schema=schema)
    raise ValueError(engine)


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
