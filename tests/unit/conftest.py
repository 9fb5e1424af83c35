from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from jobtable.adapters.memory import MemoryStore
from tests.support.harness import JobSystem, system_factory
from tests.support.observed import ObservedStore


@pytest.fixture
def shared_store() -> ObservedStore:
    """One store that several runners of a test share, as processes share a database."""
    return ObservedStore(MemoryStore())


@pytest.fixture
def make_system(shared_store: ObservedStore) -> Iterator[Callable[..., JobSystem]]:
    yield from system_factory(shared_store)
