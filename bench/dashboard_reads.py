"""What the dashboard's pages and data requests cost at depth, on SQLite: 1,000,000 jobs over
5 queues and 20 kinds (a tenth available, a tenth scheduled, the rest finished: half of those
failed), and an hour of per-minute rollup rows for every queue and kind. Each request is
served in process by the app ``serve`` runs (Falcon's test client: the server's own time,
no network); p50 and p95 of 20 requests each, after one warm-up.

    .venv/bin/python bench/dashboard_reads.py                 # 1,000,000 jobs
    .venv/bin/python bench/dashboard_reads.py --jobs 100000
"""

from __future__ import annotations

import argparse
import datetime
import logging
import os
import re
import sqlite3
import statistics
import tempfile
import time

import falcon.testing

from jobtable.adapters.sqlite import SqliteStore
from jobtable.adapters.system_clock import SystemClock
from jobtable.core import NewJob, Runner
from jobtable.core.ids import JobIdGenerator
from jobtable.core.minutes import MinuteCounts, minute_of
from jobtable.entrypoints.http.app import create_app

TOKEN = "bench-token"
REQUESTS = (
    "/ui/",
    "/ui/data/overview",
    "/ui/data/charts",
    "/ui/charts/throughput.svg",
    "/ui/charts/wait.svg?queue=q1",
    "/ui/jobs",
    "/ui/jobs?state=failed&queue=q2",
    "/ui/jobs?state=retrying",
)


def fill(path: str, jobs: int, now: datetime.datetime) -> None:
    store = SqliteStore.open(path, now=now)
    ids = JobIdGenerator()
    at = int(now.timestamp() * 1000) - jobs  # one id a millisecond back from now
    for start in range(0, jobs, 5000):
        batch = [
            NewJob(id=ids.next_id(at + n), kind=f"k{n % 20}", payload="{}", queue=f"q{n % 5}")
            for n in range(start, min(jobs, start + 5000))
        ]
        store.create_many(batch, now=now)
    minute = minute_of(now)
    store.add_minutes(
        [
            MinuteCounts(minute=minute - datetime.timedelta(minutes=m), queue=f"q{q}",
                         kind=f"k{k}", succeeded=50 + m, failed=m % 7,
                         waits=((2, 30), (5, 20), (9, 3)))
            for m in range(60) for q in range(5) for k in range(20)
        ],
        now=now,
    )  # fmt: skip
    store.close()
    conn = sqlite3.connect(path)
    conn.execute(
        "UPDATE jobs SET status = 'failed', finished_at = created_at, last_code = 'boom', "
        "error = CASE WHEN rowid % 3 = 0 THEN 'cancelled' ELSE 'internal_error' END "
        "WHERE rowid % 10 BETWEEN 2 AND 5"
    )
    conn.execute(
        "UPDATE jobs SET status = 'succeeded', finished_at = created_at "
        "WHERE rowid % 10 BETWEEN 6 AND 9"
    )
    conn.execute(
        "UPDATE jobs SET status = 'scheduled', run_at = '2099-01-01T00:00:00.000000Z', "
        "last_code = CASE WHEN rowid % 20 = 11 THEN 'flaky' END WHERE rowid % 10 = 1"
    )
    conn.commit()
    conn.execute("ANALYZE")
    conn.close()


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=20)
    args = parser.parse_args()
    path = os.path.join(tempfile.mkdtemp(), "jobs.db")
    clock = SystemClock()
    began = time.perf_counter()
    fill(path, args.jobs, clock.now())
    print(f"{args.jobs:,} jobs stored in {time.perf_counter() - began:.0f} s")
    store = SqliteStore.open(path, now=clock.now())
    runner = Runner(store, clock, workers=0, logger=logging.getLogger("bench"))
    app = create_app(runner, api_token=TOKEN, logger=logging.getLogger("bench.http"))
    client = falcon.testing.TestClient(app)
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    login = client.simulate_post("/ui/login", body=f"token={TOKEN}", headers=form)
    cookie = {"Cookie": f"jobtable_session={login.cookies['jobtable_session'].value}"}
    for path_and_query in REQUESTS:
        path, _, query = path_and_query.partition("?")
        answer = client.simulate_get(path, query_string=query, headers=cookie)
        assert answer.status_code == 200, (path_and_query, answer.status_code)
        times = []
        for _ in range(args.requests):
            start = time.perf_counter()
            client.simulate_get(path, query_string=query, headers=cookie)
            times.append((time.perf_counter() - start) * 1000)
        times.sort()
        p95 = times[max(0, round(0.95 * len(times)) - 1)]
        print(f"{path_and_query:36} p50 {statistics.median(times):8.1f} ms   p95 {p95:8.1f} ms")
    shown = client.simulate_get("/ui/", headers=cookie).text
    assert re.search(r'data-total="available">\d+', shown)
    store.close()


if __name__ == "__main__":
    run()
