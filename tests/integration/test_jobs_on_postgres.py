"""The reference's jobs tests (tests/unit/test_jobs.py) again, on PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from jobtable.adapters.fake_clock import FakeClock
from tests.support.harness import JobSystem, system_factory
from tests.support.observed import ObservedStore
from tests.support.postgres import fresh_schema
from tests.unit.test_async_handlers import *  # noqa: F403
from tests.unit.test_bulk import *  # noqa: F403
from tests.unit.test_job_lifecycle import *  # noqa: F403
from tests.unit.test_jobs import *  # noqa: F403 - the same tests, with the fixtures below
from tests.unit.test_liveness import *  # noqa: F403
from tests.unit.test_minutes import *  # noqa: F403
from tests.unit.test_states import *  # noqa: F403
from tests.unit.test_tracing import *  # noqa: F403


@pytest.fixture
def shared_store() -> Iterator[ObservedStore]:
    with fresh_schema() as (url, schema):
        from jobtable.adapters.postgres import PostgresStore

        store = ObservedStore(PostgresStore.open(url, now=FakeClock().now(), schema=schema))
        yield store
        store.close()


@pytest.fixture
def make_system(shared_store: ObservedStore) -> Iterator[Callable[..., JobSystem]]:
    yield from system_factory(shared_store)
