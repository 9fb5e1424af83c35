"""RSS of ``jobtable serve`` from 100,000 to 1,000,000 jobs processed (target: < 5% growth).

``serve`` runs on a SQLite file with its workers; this process keeps a
backlog of noop jobs in front of them (``enqueue_batch`` straight into the
same file, 1,000 a transaction, never more than BACKLOG waiting) and reads
the server's resident set size from ``/proc/PID/status`` every time another
100,000 jobs have succeeded. A drain that stops moving for 60 s ends the run
with an error: a hang is never a figure. Run by hand:

    bench/run serve_memory.py                    # 1,000,000 jobs, 8 workers, NORMAL
    bench/run serve_memory.py --jobs 200000      # smaller
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

from local_server import free_port, wait_until_up

from jobtable.adapters.system_clock import SystemClock
from jobtable.core import Runner
from jobtable.entrypoints.wiring import open_store

JOBTABLE = str(Path(sys.executable).with_name("jobtable"))
BACKLOG = 20_000
STEP = 100_000


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--synchronous", default="normal")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="jobtable-serve-memory-")
    database = os.path.join(folder, "jobs.db")
    clock = SystemClock()
    store = open_store(database, synchronous=args.synchronous, now=clock.now())
    feeder = Runner(store, clock, workers=0)
    port = free_port()
    server = subprocess.Popen(
        [JOBTABLE, "serve", "--database", database, "--listen", f"127.0.0.1:{port}",
         "--workers", str(args.workers), "--sqlite-synchronous", args.synchronous,
         "--log-level", "warning"],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    counter = sqlite3.connect(database)
    samples: list[tuple[int, int, float]] = []
    try:
        wait_until_up(f"http://127.0.0.1:{port}/health")
        started = time.monotonic()
        enqueued = done = 0
        next_sample = STEP
        moved_at, last_done = time.monotonic(), -1
        while done < args.jobs:
            if enqueued < args.jobs and enqueued - done < BACKLOG:
                size = min(1000, args.jobs - enqueued)
                feeder.enqueue_batch([feeder.encode("noop", {}) for _ in range(size)])
                enqueued += size
                continue
            time.sleep(0.2)
            (unfinished,) = counter.execute(  # a small range of the index, unlike succeeded
                "SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')"
            ).fetchone()
            done = enqueued - unfinished
            if done != last_done:
                moved_at, last_done = time.monotonic(), done
            elif time.monotonic() - moved_at > 60:
                raise RuntimeError(f"the drain stopped at {done:,} of {args.jobs:,} jobs")
            while done >= next_sample:
                samples.append((next_sample, rss_kib(server.pid), time.monotonic() - started))
                print(f"{next_sample:>9,} jobs: RSS {samples[-1][1] / 1024:.1f} MiB "
                      f"after {samples[-1][2]:.0f} s", flush=True)  # fmt: skip
                next_sample += STEP
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(60)
        counter.close()
        store.close()
    first, last = samples[0][1], samples[-1][1]
    print(f"\nRSS at {samples[0][0]:,}: {first / 1024:.1f} MiB; at {samples[-1][0]:,}: "
          f"{last / 1024:.1f} MiB; growth {100 * (last - first) / first:+.1f}% "
          f"(target < 5%); {args.jobs / samples[-1][2]:,.0f} jobs/s overall")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
