"""One ``store`` fixture over every JobStore adapter: each test gets a fresh database."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from adapters.fake_clock import FakeClock
from adapters.memory import MemoryStore
from adapters.sqlite import SqliteStore
from tests.support.postgres import fresh_schema

ENGINES = ["memory", "sqlite", "postgres"]


def open_store(engine: str, tmp_path, stack: ExitStack) -> object:
    now = FakeClock().now()
    if engine == "memory":
        return MemoryStore()
    if engine == "sqlite":
        return SqliteStore.open(tmp_path / "jobs.db", now=now)
    if engine == "postgres":
        from adapters.postgres import PostgresStore

        url, schema = stack.enter_context(fresh_schema())
        return PostgresStore.open(url, now=now, schema=schema)
    raise ValueError(engine)


@pytest.fixture(params=ENGINES)
def engine(request) -> str:
    return request.param


@pytest.fixture
def store(engine, tmp_path) -> Iterator[object]:
    with ExitStack() as stack:
        opened = open_store(engine, tmp_path, stack)
        stack.callback(opened.close)
        yield opened
