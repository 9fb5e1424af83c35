"""Both sides of holding jobs ahead: long jobs spread evenly over two runners.

Two `jobtable worker --workers W` processes on one SQLite file (or PostgreSQL with
--postgres); N jobs of S seconds each enqueued once both run. Prints how many each
process ran and the time to run them all against the ideal (N*S / (2*W)): a runner
that held long jobs ahead would run more than its share, and the total would grow.

    bench/run spread.py                   # 16 jobs of 2 s, 2 processes of 2 workers
    bench/run spread.py --postgres URL
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import spread_kinds  # noqa: E402

from jobtable.adapters.system_clock import SystemClock  # noqa: E402
from jobtable.core import Runner  # noqa: E402
from jobtable.entrypoints.wiring import open_store  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--postgres", default=None, help="a PostgreSQL URL (default: SQLite)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        database = args.postgres or os.path.join(folder, "jobs.db")
        env = {**os.environ, "PYTHONPATH": HERE, "JOBTABLE_DATABASE": database}
        subprocess.run(
            [sys.executable, "-m", "jobtable.entrypoints.cli", "migrate", "--database", database],
            check=True, env=env, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        logs = [pathlib.Path(folder, f"w{n}.log") for n in range(2)]
        command = [sys.executable, "-m", "jobtable.entrypoints.cli", "worker"]
        command += ["--workers", str(args.workers), "--kinds", "spread_kinds"]
        workers = []
        for log in logs:
            with log.open("w") as err:
                workers.append(
                    subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=err)
                )
        try:
            deadline = time.monotonic() + 60
            while not all(" worker: database=" in log.read_text() for log in logs):
                if time.monotonic() > deadline:
                    raise SystemExit("the workers did not start")
                time.sleep(0.05)
            store = open_store(database, synchronous="full", now=SystemClock().now())
            runner = Runner(store, SystemClock(), workers=0)
            spread_kinds.register(runner.kinds)
            started = time.monotonic()
            ids = [runner.enqueue("nap", {"seconds": args.seconds}) for _ in range(args.jobs)]
            results = [runner.wait(job_id, timeout=600) for job_id in ids]
            took = time.monotonic() - started
            store.close()
        finally:
            for worker in workers:
                worker.terminate()
                worker.wait(30)
    per_process = collections.Counter(job.result["pid"] for job in results)
    ideal = args.jobs * args.seconds / (2 * args.workers)
    print(
        json.dumps(
            {
                "jobs": args.jobs,
                "seconds_each": args.seconds,
                "per_process": sorted(per_process.values()),
                "took_s": round(took, 2),
                "ideal_s": ideal,
                "over_ideal": round(took / ideal, 3),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
