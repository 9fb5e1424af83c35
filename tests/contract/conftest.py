"""One ``store`` fixture over every JobStore adapter: each test gets a fresh database."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from adapters.fake_clock import FakeClock
from adapters.memory import MemoryStore
from adapters.sqlite import SqliteStore

ENGINES = ["memory", "sqlite"]


def open_store(engine: str, tmp_path) -> object:
    if engine == "memory":
        return MemoryStore()
    if engine == "sqlite":
        return SqliteStore.open(tmp_path / "jobs.db", now=FakeClock().now())
    raise ValueError(engine)


@pytest.fixture(params=ENGINES)
def engine(request) -> str:
    return request.param


@pytest.fixture
def store(engine, tmp_path) -> Iterator[object]:
    opened = open_store(engine, tmp_path)
    yield opened
    opened.close()
