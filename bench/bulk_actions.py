"""A bulk retry and a bulk cancel over 100,000 jobs, on SQLite and PostgreSQL: the time each
takes, its longest batch (one transaction of 500 jobs), and what another writer meanwhile
waits: a thread enqueueing one job per commit the whole time, its p50, p99 and longest
enqueue. A bulk action never holds the database for longer than one batch.

    .venv/bin/python bench/bulk_actions.py                       # SQLite
    .venv/bin/python bench/bulk_actions.py --database postgresql://postgres@127.0.0.1/test
"""

from __future__ import annotations

import argparse
import datetime
import logging
import os
import statistics
import tempfile
import threading
import time
from typing import Any

from jobtable.adapters.system_clock import SystemClock
from jobtable.core import BulkAction, BulkFilter, NewJob, Runner, State
from jobtable.core.ids import JobIdGenerator
from jobtable.entrypoints.wiring import open_store


def fresh_schema(url: str) -> tuple[str, str]:
    """A URL whose search_path is a new schema, and the schema's name (dropped after)."""
    import psycopg

    schema = f"bench_bulk_{os.getpid()}_{int(time.time())}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    separator = "&" if "?" in url else "?"
    return f"{url}{separator}options=-csearch_path%3D{schema}", schema


def drop_schema(url: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def fill(store: Any, jobs: int, now: datetime.datetime) -> None:
    ids = JobIdGenerator()
    at = int(now.timestamp() * 1000)
    for start in range(0, jobs, 5000):
        batch = [
            NewJob(id=ids.next_id(at), kind="k", payload="{}", queue="bulk")
            for _ in range(start, min(jobs, start + 5000))
        ]
        store.create_many(batch, now=now)


def timing(store: Any, name: str, spent: list[float]) -> None:
    """Time each call of the store's ``name`` (one batch: one transaction)."""
    inner = getattr(store, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - began)

    setattr(store, name, timed)


def measured(runner: Runner, action: BulkAction, which: BulkFilter, others: Any) -> str:
    stop = threading.Event()
    waits: list[float] = []

    def enqueue_meanwhile() -> None:
        while not stop.is_set():
            began = time.perf_counter()
            others.enqueue("noop", {}, None)
            waits.append(time.perf_counter() - began)

    writer = threading.Thread(target=enqueue_meanwhile)
    writer.start()
    began = time.perf_counter()
    done = runner.bulk(action, which)
    took = time.perf_counter() - began
    stop.set()
    writer.join()
    waits.sort()
    p99 = waits[max(0, round(0.99 * len(waits)) - 1)]
    return (
        f"{action.value}: {done.changed:,} of {done.matched:,} jobs in {took:.1f} s "
        f"({done.changed / took:,.0f}/s); another writer's enqueue meanwhile: "
        f"p50 {statistics.median(waits) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, "
        f"max {waits[-1] * 1000:.1f} ms ({len(waits):,} enqueues)"
    )


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", default=os.path.join(tempfile.mkdtemp(), "jobs.db"))
    parser.add_argument("--jobs", type=int, default=100_000)
    args = parser.parse_args()
    clock = SystemClock()
    server, schema = args.database, None
    if server.startswith("postgresql"):
        args.database, schema = fresh_schema(server)  # an empty jobs table for the figure
    store = open_store(args.database, synchronous="full", now=clock.now())
    fill(store, args.jobs, clock.now())
    spent: dict[str, list[float]] = {"cancel_jobs": [], "retry_jobs": []}
    for name, times in spent.items():
        timing(store, name, times)
    runner = Runner(store, clock, workers=0, logger=logging.getLogger("bench"))
    others = Runner(
        open_store(args.database, synchronous="full", now=clock.now()), clock, workers=0
    )
    print(f"{args.jobs:,} jobs on {'PostgreSQL' if 'postgresql' in args.database else 'SQLite'}")
    print(measured(runner, BulkAction.CANCEL, BulkFilter(queue="bulk"), others))
    print(f"  longest batch {max(spent['cancel_jobs']) * 1000:.0f} ms "
          f"of {len(spent['cancel_jobs'])}")  # fmt: skip
    print(measured(runner, BulkAction.RETRY, BulkFilter(state=State.CANCELLED), others))
    print(f"  longest batch {max(spent['retry_jobs']) * 1000:.0f} ms "
          f"of {len(spent['retry_jobs'])}")  # fmt: skip
    store.close()
    others.client.store.close()
    if schema is not None:
        drop_schema(server, schema)


if __name__ == "__main__":
    run()
