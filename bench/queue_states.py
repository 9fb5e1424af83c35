"""What a queue's counts by state cost on SQLite: 200,000 jobs over 5 queues, half of them
failed (a third of those cancelled), a quarter succeeded; ``store.queues()`` beside its two
parts, the states split (a read of the scheduled and failed rows) and the index-only count by
status. Medians of 3 reads.

    .venv/bin/python bench/queue_states.py
    .venv/bin/python bench/queue_states.py --jobs 1000000
"""

from __future__ import annotations

import argparse
import datetime
import os
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable

from jobtable.adapters.sql.listing import QUEUE_STATES
from jobtable.adapters.sqlite import SqliteStore
from jobtable.core import NewJob
from jobtable.core.ids import JobIdGenerator


def timed(read: Callable[[], object]) -> float:
    began = time.perf_counter()
    read()
    return (time.perf_counter() - began) * 1000


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=200_000)
    args = parser.parse_args()
    path = os.path.join(tempfile.mkdtemp(), "jobs.db")
    now = datetime.datetime.now(datetime.UTC)
    store = SqliteStore.open(path, now=now)
    ids = JobIdGenerator()
    at = int(now.timestamp() * 1000)
    for _batch in range(args.jobs // 5000):
        jobs = [
            NewJob(id=ids.next_id(at), kind="k", payload="{}", queue=f"q{n % 5}")
            for n in range(5000)
        ]
        store.create_many(jobs, now=now)
    conn = sqlite3.connect(path)
    conn.execute(
        "UPDATE jobs SET status = 'failed', finished_at = created_at, error = CASE WHEN "
        "rowid % 3 = 0 THEN 'cancelled' ELSE 'internal_error' END WHERE rowid % 2 = 0"
    )
    conn.execute(
        "UPDATE jobs SET status = 'succeeded', finished_at = created_at "
        "WHERE status = 'queued' AND rowid % 4 = 1"
    )
    conn.commit()
    counts = store._engine.sql("queues")
    whole = [timed(store.queues) for _ in range(3)]
    split = [timed(lambda: conn.execute(QUEUE_STATES).fetchall()) for _ in range(3)]
    indexed = [timed(lambda: conn.execute(counts).fetchall()) for _ in range(3)]
    print(
        f"{args.jobs:,} jobs: queues() {statistics.median(whole):.0f} ms; the states split "
        f"{statistics.median(split):.0f} ms; the index-only count by status "
        f"{statistics.median(indexed):.0f} ms"
    )
    store.close()


if __name__ == "__main__":
    run()
