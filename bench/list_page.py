"""``GET /api/v1/jobs`` at 1,000,000 jobs: the p50 and p99 of one filtered page, both engines.

The table is filled with SQL, then analyzed, as bench/metrics_scrape.py fills
its steady table (five kinds over three queues; 1% unfinished, the rest 90%
succeeded and 10% failed). Each page goes through the real Falcon app in
process (auth, the query string, the store's read, the JSON of 50 jobs and
the next cursor); the figure is over PAGES requests after a warm-up. Run by
hand:

    bench/run list_page.py                        # SQLite and PostgreSQL (the test server)
    bench/run list_page.py --rows 100000 --postgres ''
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import falcon.testing

from jobtable.adapters.system_clock import SystemClock
from jobtable.core import Runner
from jobtable.entrypoints.http.app import create_app
from jobtable.entrypoints.http.pages import encode_cursor

sys.path.insert(0, str(Path(__file__).resolve().parent))

from metrics_scrape import (
    fill_postgres,
    fill_sqlite,
    postgres_store,
    sqlite_store,
)

PAGES = 200
WARM_UP = 20
TOKEN = "bench-token"


def queries(rows: int) -> dict[str, dict[str, str]]:
    """What an operator's page asks, by what it filters on."""
    middle = encode_cursor(f"bench-{rows // 2:09d}")
    assert middle is not None
    return {
        "newest, no filter": {},
        "status=failed (10%)": {"status": "failed"},
        "status=failed&queue=queue1 (3%)": {"status": "failed", "queue": "queue1"},
        "status=queued&queue=queue1 (0.17%)": {"status": "queued", "queue": "queue1"},
        "status=running&kind=kind4 (0.1%)": {"status": "running", "kind": "kind4"},
        "kind=kind2&queue=queue0 (7%)": {"kind": "kind2", "queue": "queue0"},
        "status=succeeded, a page from the middle": {"status": "succeeded", "cursor": middle},
    }


def time_pages(store: Any, rows: int) -> list[tuple[str, float, float]]:
    client = falcon.testing.TestClient(create_app(Runner(store, SystemClock()), api_token=TOKEN))
    headers = {"Authorization": f"Bearer {TOKEN}"}
    results = []
    for name, params in queries(rows).items():
        for _ in range(WARM_UP):
            answer = client.simulate_get("/api/v1/jobs", params=params, headers=headers)
            assert answer.status_code == 200, answer.text
            assert len(answer.json["jobs"]) == 50, (name, len(answer.json["jobs"]))
        times = []
        for _ in range(PAGES):
            started = time.perf_counter()
            client.simulate_get("/api/v1/jobs", params=params, headers=headers)
            times.append((time.perf_counter() - started) * 1000)
        cuts = statistics.quantiles(times, n=100)
        results.append((name, cuts[49], cuts[98]))
    return results


def measure(
    engine: str, opened: Callable[[], Any], fill: Callable[[Any, int, int], None], rows: int
) -> list[tuple[str, str, float, float]]:
    with opened() as store:
        started = time.perf_counter()
        fill(store, rows, rows // 100)
        print(
            f"{engine}: {rows:,} rows filled and analyzed in {time.perf_counter() - started:.0f}s"
        )
        return [(engine, *result) for result in time_pages(store, rows)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="jobtable-list-")
    results = measure("SQLite", lambda: sqlite_store(folder), fill_sqlite, args.rows)
    if args.postgres:
        url = args.postgres
        results += measure("PostgreSQL", lambda: postgres_store(url), fill_postgres, args.rows)
    print(f"\n{PAGES} pages of 50 each, {args.rows:,} jobs, in process\n")
    print("| store | page | p50 ms | p99 ms |")
    print("|---|---|---|---|")
    for engine, name, p50, p99 in results:
        print(f"| {engine} | {name} | {p50:.2f} | {p99:.2f} |")


if __name__ == "__main__":
    main()
