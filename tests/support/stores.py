"""Open a fresh store of any engine for a test: memory, SQLite in a temporary directory, or a new PostgreSQL schema."""

from __future__ import annotations

from contextlib import ExitStack

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.memory import MemoryStore
from jobtable.adapters.sqlite import SqliteStore
from tests.support.postgres import fresh_schema

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
