"""A change another process makes to a job wakes this process's readers of it.

``serve`` connects its runner's ``JobChanges`` to the store's job watcher
(SQLite file events, PostgreSQL NOTIFY), so the dashboard's event stream
moves as soon as a worker elsewhere publishes. Two stores on one database
stand for the two processes: each has its own connections, and neither sees
its own commits through the watcher.
"""

from __future__ import annotations

import pytest

from jobtable.adapters.system_clock import SystemClock
from jobtable.core import NoopPayload, Runner
from jobtable.entrypoints.wiring import follow_changes, open_store
from tests.support.databases import ENGINES, database_for


@pytest.fixture(params=ENGINES)
def two_processes(request, tmp_path):
    with database_for(request.param, tmp_path) as database:
        clock = SystemClock()
        stores = [open_store(database, synchronous="full", now=clock.now()) for _ in range(2)]
        runners = [Runner(store, clock, workers=0) for store in stores]
        try:
            yield stores, runners
        finally:
            for store in stores:
                store.close()


def test_a_job_changed_elsewhere_wakes_a_reader_here(two_processes):
    (here_store, _), (here, elsewhere) = two_processes
    job_id = elsewhere.builtins.noop.enqueue(NoopPayload())
    watcher = follow_changes(here_store, here.changes)
    try:
        with here.changes.subscribe(job_id) as reader:
            assert not reader.wait(0)  # nothing yet
            elsewhere.cancel(job_id)
            assert reader.wait(10)
        assert here.get(job_id).error == "cancelled"
    finally:
        watcher.stop()
