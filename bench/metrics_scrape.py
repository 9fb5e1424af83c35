"""``GET /metrics`` scrape time at 1,000,000 jobs (target: under 50 ms), SQLite and PostgreSQL.

Two tables of the same size, filled with SQL (not the runner, which would
take an hour): a *steady* one, where 99% of the rows are finished and the
rest queued, scheduled or running (what a busy system that keeps its
history looks like), and a *backlog*, where every row is unfinished (a
system that fell far behind). Five kinds over three queues, ten live
runners, and event series for every kind and code. Each scrape goes
through the real Falcon app in process (auth, the store's two reads, the
histograms' exposition); the figure is the p50 and p99 of SCRAPES scrapes
after a warm-up. Beside it: what one count of the unfinished jobs costs,
and how old the counts were at the last scrape (0 while counting is quick;
while it is slow, scrapes serve the latest counts and count again in the
background: entrypoints/metrics_counts.py). Not a test: run by hand,

    bench/run metrics_scrape.py                   # SQLite; PostgreSQL too when the URL is set
    bench/run metrics_scrape.py --rows 100000     # smaller
    JOBTABLE_BENCH_POSTGRES=postgresql://postgres@127.0.0.1:5432/test bench/run metrics_scrape.py
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import falcon.testing

from jobtable.adapters.sqlite import SqliteStore
from jobtable.adapters.system_clock import SystemClock
from jobtable.core import Runner
from jobtable.entrypoints.http.app import create_app
from jobtable.entrypoints.metrics import JobMetrics

NOW = datetime.datetime.now(datetime.UTC)
KINDS = 5
QUEUES = 3
RUNNERS = 10
SCRAPES = 200
WARM_UP = 20
TOKEN = "bench-token"
CODES = ("succeeded", "over_quota", "internal_error", "timed_out")


def _status(unfinished: str, mod: str) -> str:
    """Row i's status: the first ``unfinished`` rows cycle queued x5, scheduled x4, running
    (50/40/10); the rest are 90% succeeded. ``mod`` is the engine's modulo, as written in
    its SQL strings."""
    return f"""CASE
    WHEN i < {unfinished} THEN CASE
        WHEN i {mod} 10 < 5 THEN 'queued' WHEN i {mod} 10 < 9 THEN 'scheduled' ELSE 'running' END
    WHEN i {mod} 10 = 0 THEN 'failed' ELSE 'succeeded' END"""


# Row i: kind i % 5, queue i % 3; scheduled rows are due tomorrow.
SQLITE_FILL = f"""
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < :rows)
INSERT INTO jobs (id, kind, status, payload, created_at, updated_at, queue, run_at, claimed_by)
SELECT printf('bench-%09d', i), 'kind' || (i % {KINDS}), {_status(":unfinished", "%")},
       '{{}}', :now, :now,
       'queue' || (i % {QUEUES}), CASE WHEN i % 10 BETWEEN 5 AND 8 THEN :later ELSE :now END,
       'runner-' || (i % {RUNNERS})
FROM n
"""

POSTGRES_FILL = f"""
INSERT INTO jobs (id, kind, status, payload, created_at, updated_at, queue, run_at, claimed_by)
SELECT 'bench-' || lpad(i::text, 9, '0'), 'kind' || (i %% {KINDS}),
       {_status("%(unfinished)s", "%%")},
       '{{}}', %(now)s, %(now)s, 'queue' || (i %% {QUEUES}),
       CASE WHEN i %% 10 BETWEEN 5 AND 8 THEN %(later)s ELSE %(now)s END,
       'runner-' || (i %% {RUNNERS})
FROM generate_series(0, %(rows)s - 1) AS i
"""

RUNNER_ROW = """INSERT INTO jobtable_runners (id, host, pid, started_at, kinds, queues, workers,
    busy, last_seen) VALUES ({p}, 'bench', 1, {p}, '[]', NULL, 4, 2, {p})"""


def fill_sqlite(store: SqliteStore, rows: int, unfinished: int) -> None:
    params = {
        "rows": rows,
        "unfinished": unfinished,
        "now": NOW.isoformat(),
        "later": (NOW + datetime.timedelta(days=1)).isoformat(),
    }
    with store._db.writer() as conn:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(SQLITE_FILL, params)
        for number in range(RUNNERS):
            stamp = NOW.isoformat()
            conn.execute(RUNNER_ROW.format(p="?"), (f"runner-{number}", stamp, stamp))
        conn.execute("COMMIT")
        conn.execute("ANALYZE")


def fill_postgres(store: Any, rows: int, unfinished: int) -> None:
    params = {
        "rows": rows,
        "unfinished": unfinished,
        "now": NOW,
        "later": NOW + datetime.timedelta(days=1),
    }
    with store._pool.connection() as conn:
        conn.execute(POSTGRES_FILL, params)
        for number in range(RUNNERS):
            conn.execute(RUNNER_ROW.format(p="%s"), (f"runner-{number}", NOW, NOW))
    with store._pool.connection() as conn:
        conn.autocommit = True
        conn.execute("VACUUM ANALYZE jobs")


def some_events(metrics: JobMetrics) -> None:
    """Every kind and code seen, so the histograms' and counters' series are all there."""
    for kind in range(KINDS):
        for code in CODES:
            metrics.job_started(f"kind{kind}", waited=0.2)
            metrics.job_ended(f"kind{kind}", code=code, final=True, seconds=1.5)


def time_scrapes(store: Any) -> tuple[float, float, float, float]:
    """p50 and p99 of a scrape in ms; one count's read in ms; the counts' age at the end."""
    metrics = JobMetrics()
    runner = Runner(store, SystemClock(), observer=metrics)
    some_events(metrics)
    client = falcon.testing.TestClient(create_app(runner, api_token=TOKEN))
    headers = {"Authorization": f"Bearer {TOKEN}"}
    for _ in range(WARM_UP):
        answer = client.simulate_get("/metrics", headers=headers)
        assert answer.status_code == 200, answer.text
        assert "jobtable_store_up 1.0" in answer.text
    times = []
    for _ in range(SCRAPES):
        started = time.perf_counter()
        answer = client.simulate_get("/metrics", headers=headers)
        times.append((time.perf_counter() - started) * 1000)
    cuts = statistics.quantiles(times, n=100)
    age = re.search(r"^jobtable_jobs_age_seconds (\S+)$", answer.text, re.MULTILINE)
    assert age is not None
    started = time.perf_counter()
    runner.job_counts()
    return cuts[49], cuts[98], (time.perf_counter() - started) * 1000, float(age.group(1))


@contextmanager
def sqlite_store(folder: str) -> Iterator[Any]:
    store = SqliteStore.open(
        os.path.join(folder, f"{uuid.uuid4().hex}.db"), now=NOW, synchronous="normal"
    )
    try:
        yield store
    finally:
        store.close()


@contextmanager
def postgres_store(url: str) -> Iterator[Any]:
    import psycopg

    from jobtable.adapters.postgres import PostgresStore

    schema = f"bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    store = PostgresStore.open(url, now=NOW, schema=schema)
    try:
        yield store
    finally:
        store.close()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def measure(
    name: str, opened: Callable[[], Any], fill: Callable[[Any, int, int], None], rows: int
) -> list[tuple[Any, ...]]:
    results = []
    for table, unfinished in (("steady (1% unfinished)", rows // 100), ("backlog (all)", rows)):
        with opened() as store:
            started = time.perf_counter()
            fill(store, rows, unfinished)
            print(f"{name} {table}: {rows:,} rows in {time.perf_counter() - started:.0f}s")
            results.append((name, table, *time_scrapes(store)))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="jobtable-metrics-")
    results = measure("SQLite", lambda: sqlite_store(folder), fill_sqlite, args.rows)
    url = os.environ.get("JOBTABLE_BENCH_POSTGRES")
    if url:
        results += measure("PostgreSQL", lambda: postgres_store(url), fill_postgres, args.rows)
    print(f"\n{SCRAPES} scrapes of GET /metrics each, {args.rows:,} jobs, in process\n")
    print("| store | table | scrape p50 ms | scrape p99 ms | one count read ms | counts' age s |")
    print("|---|---|---|---|---|---|")
    for name, table, p50, p99, count_ms, age in results:
        print(f"| {name} | {table} | {p50:.1f} | {p99:.1f} | {count_ms:.0f} | {age:.1f} |")


if __name__ == "__main__":
    main()
