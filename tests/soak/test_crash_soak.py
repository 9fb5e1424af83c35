"""The crash soak at CI size: 30 s per engine (JOBTABLE_SOAK_SECONDS), full size by hand.

See tests/soak/crash_soak.py for what is measured and the verdict's rules.
"""

from __future__ import annotations

import os

import pytest

from tests.soak.crash_soak import soak
from tests.support.databases import database_for

pytestmark = pytest.mark.e2e
SECONDS = float(os.environ.get("JOBTABLE_SOAK_SECONDS", "30"))


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_killing_worker_processes_loses_no_job_and_completes_none_twice(engine, tmp_path):
    with database_for(engine, tmp_path) as database:
        verdict = soak(database, engine, SECONDS, tmp_path)
    report = "\n".join(verdict.lines())
    print(report)
    assert verdict.kills >= int(SECONDS // 10), report
    assert verdict.passed, report
