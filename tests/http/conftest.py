from __future__ import annotations

from collections.abc import Iterator

import falcon.testing
import pytest

from jobtable.adapters.memory import MemoryStore
from jobtable.entrypoints.http.app import create_app
from tests.support.harness import JobSystem

TOKEN = "test-token-7d1e"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def system() -> Iterator[JobSystem]:
    made = JobSystem(MemoryStore(), workers=1)
    yield made
    made.stop()


@pytest.fixture
def client(system) -> falcon.testing.TestClient:
    app = create_app(system.runner, api_token=TOKEN, version="9.9.9", logger=system.logs.logger)
    return falcon.testing.TestClient(app)
