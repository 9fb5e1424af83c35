"""The HTTP load test at CI size, 50 clients beside 50 open event streams: 10 s per engine
(JOBTABLE_LOAD_SECONDS), 60 s by hand.

See tests/soak/http_load.py for what it does and the verdict's rules.
"""

from __future__ import annotations

import os

import pytest

from tests.soak.http_load import load
from tests.support.databases import database_for

pytestmark = pytest.mark.e2e
SECONDS = float(os.environ.get("JOBTABLE_LOAD_SECONDS", "10"))
RSS_GROWTH_LIMIT_KIB = 64 * 1024
"""Loose on purpose: it catches a leak of a request's worth per request, not noise."""


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_fifty_clients_beside_fifty_streams_then_sigterm_lose_nothing_and_error_nowhere(
    engine, tmp_path
):
    with database_for(engine, tmp_path) as database:
        report = load(engine, database, SECONDS, clients=50)
    text = "\n".join(report.lines())
    print(text)
    assert report.tally.count() > 0, text
    assert len(report.streams.streams) == 50, text
    assert report.passed, text
    assert report.rss_growth_kib < RSS_GROWTH_LIMIT_KIB, text
