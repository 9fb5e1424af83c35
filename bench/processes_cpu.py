"""``--processes``: a CPU-bound kind drained by 1 and by N worker processes (issue 12).

Each job burns about 5 ms of pure Python (bench/cpu_kinds.py). The jobs are
enqueued first, one commit each; then ``jobtable worker --processes P
--workers 2`` drains them in its own processes, and the time from its start
to the last job's end is the figure (startup included, so use enough jobs).
A hang is never a rate: past ``--timeout`` the run fails loudly. Run by hand:

    bench/run processes_cpu.py --jobs 2000
"""

from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jobtable.adapters.system_clock import SystemClock
from jobtable.core import Runner
from jobtable.entrypoints.wiring import open_store

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
JOBTABLE = str(Path(sys.executable).with_name("jobtable"))
sys.path.insert(0, str(HERE))

from cpu_kinds import Burn, burn  # noqa: E402
from cpu_kinds import register as register_cpu  # noqa: E402


def per_job_ms(rounds: int) -> float:
    started = time.perf_counter()
    for _ in range(20):
        burn(None, Burn(rounds=rounds))  # type: ignore[arg-type]
    return (time.perf_counter() - started) / 20 * 1000


def drain_seconds(processes: int, jobs: int, timeout: float) -> float:
    database = os.path.join(tempfile.mkdtemp(prefix="jobtable-cpu-"), "jobs.db")
    store = open_store(database, synchronous="normal", now=SystemClock().now())
    runner = Runner(store, SystemClock(), workers=0)
    register_cpu(runner.kinds)
    for _ in range(jobs):
        runner.enqueue("burn", {})
    store.close()
    started = time.monotonic()
    worker = subprocess.Popen(
        [JOBTABLE, "worker", "--database", database, "--kinds", "cpu_kinds", "--workers", "2",
         "--processes", str(processes), "--sqlite-synchronous", "normal",
         "--log-level", "warning"],
        env={**os.environ, "PYTHONPATH": f"{HERE}:{REPO}"},
    )  # fmt: skip
    try:
        with sqlite3.connect(database) as conn:
            while True:
                (left,) = conn.execute(
                    "SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')"
                ).fetchone()
                if left == 0:
                    return time.monotonic() - started
                if time.monotonic() - started > timeout:
                    raise SystemExit(f"--processes {processes}: {left} jobs left after {timeout}s")
                time.sleep(0.01)
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    print(f"one job: {per_job_ms(Burn().rounds):.1f} ms of pure Python; {args.jobs} jobs")
    one = drain_seconds(1, args.jobs, args.timeout)
    many = drain_seconds(args.processes, args.jobs, args.timeout)
    print("| processes | seconds | jobs/s |")
    print("|---|---|---|")
    print(f"| 1 | {one:.1f} | {args.jobs / one:,.0f} |")
    print(f"| {args.processes} | {many:.1f} | {args.jobs / many:,.0f} |")
    print(f"\n--processes {args.processes} drains {one / many:.2f}x faster than --processes 1")


if __name__ == "__main__":
    main()
