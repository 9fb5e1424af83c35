"""One ``store`` fixture over every JobStore adapter: each test gets a fresh database."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from tests.support.stores import ENGINES, open_store


@pytest.fixture(params=ENGINES)
def engine(request) -> str:
    return request.param


@pytest.fixture
def store(engine, tmp_path) -> Iterator[object]:
    with ExitStack() as stack:
        opened = open_store(engine, tmp_path, stack)
        stack.callback(opened.close)
        yield opened
