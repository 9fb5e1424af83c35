"""The size of one ``GET /metrics`` scrape when clients enqueue into many queues of their own.

A client picks a queue name with each enqueue (``"queue"`` over HTTP,
``--queue`` in the CLI), so the names are the clients', not the
operator's. This stores one queued job in each of ``--queues`` names (the
API's own call, ``Runner.enqueue`` by kind name) on a fresh SQLite file,
then scrapes once through the real Falcon app in process and prints the
series (sample lines) and bytes of the answer, all of it and
``jobtable_jobs`` alone. Not a test: run by hand,

    bench/run metrics_queues.py                 # 2,000 queues
    bench/run metrics_queues.py --queues 20000
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import falcon.testing

from jobtable.adapters.sqlite import SqliteStore
from jobtable.adapters.system_clock import SystemClock
from jobtable.core import Runner
from jobtable.core.enqueue_options import EnqueueOptions
from jobtable.entrypoints.http.app import create_app
from jobtable.entrypoints.metrics import JobMetrics

TOKEN = "bench-token"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queues", type=int, default=2000)
    args = parser.parse_args()
    clock = SystemClock()
    with tempfile.TemporaryDirectory(prefix="jobtable-metrics-queues-") as folder:
        store = SqliteStore.open(Path(folder) / "jobs.db", now=clock.now(), synchronous="normal")
        try:
            runner = Runner(store, clock, observer=JobMetrics())
            for number in range(args.queues):
                runner.enqueue("noop", {}, EnqueueOptions(queue=f"client-{number:05d}"))
            client = falcon.testing.TestClient(create_app(runner, api_token=TOKEN))
            answer = client.simulate_get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
            assert answer.status_code == 200, answer.text
        finally:
            store.close()
    samples = [line for line in answer.text.splitlines() if line and not line.startswith("#")]
    jobs = [line for line in samples if line.startswith("jobtable_jobs{")]
    print(f"jobs in {args.queues:,} client-chosen queues, one scrape of GET /metrics:")
    print(f"  every series: {len(samples):,} series, {len(answer.content):,} bytes")
    print(
        f"  jobtable_jobs: {len(jobs):,} series, "
        f"{sum(len(line) + 1 for line in jobs):,} bytes, "
        f"{len({line.split('queue=')[1].split(',')[0] for line in jobs}):,} queue label values"
    )


if __name__ == "__main__":
    main()
