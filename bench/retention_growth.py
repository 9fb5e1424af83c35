"""Does a SQLite file stop growing under steady load once retention prunes? (issue 11)

Runs N noop jobs through a runner with short retention (succeeded jobs kept
``--keep`` seconds), enqueued in batches at a steady pace and drained by the
runner's workers, while the runner's own pruning thread deletes old ones
(every minute, a batch of 500 rows per transaction). Prints the file size
(the database, its WAL, its free pages) and the most rows the table held so
far at each mark: freed pages are reused, so once the row count's peak stops
rising the file stops growing. Run by hand:

    bench/run retention_growth.py --jobs 1000000
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import sqlite3
import tempfile
import threading
import time

from jobtable.adapters.sqlite import SqliteStore
from jobtable.adapters.system_clock import SystemClock
from jobtable.core import NoopPayload, Runner
from jobtable.core.jobs import Retention


def size(path: str) -> int:
    return os.path.getsize(path)


def wal_size(path: str) -> int:
    return os.path.getsize(path + "-wal") if os.path.exists(path + "-wal") else 0


def free_pages(path: str) -> int:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return int(conn.execute("PRAGMA freelist_count").fetchone()[0])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--keep", type=float, default=30.0, help="seconds succeeded jobs are kept")
    parser.add_argument("--batch", type=int, default=500)
    args = parser.parse_args()
    marks = sorted({args.jobs // 5 * n for n in range(1, 6)})
    path = os.path.join(tempfile.mkdtemp(prefix="jobtable-retention-"), "jobs.db")
    clock = SystemClock()
    store = SqliteStore.open(path, now=clock.now(), synchronous="normal")
    keep = datetime.timedelta(seconds=args.keep)
    runner = Runner(store, clock, workers=2, retention=Retention(succeeded=keep, failed=keep))
    noop = runner.builtins.noop
    runner.start()
    started = time.monotonic()
    enqueued = 0
    print(f"file {path}; retention {args.keep:g}s; pruning every 60 s in 500-row transactions")
    print(f"{'jobs':>10} {'seconds':>8} {'rows':>9} {'peak rows':>9} {'file MB':>8} "
          f"{'WAL MB':>7} {'free pages':>10}")  # fmt: skip
    peak = [0]
    watching = threading.Event()

    def watch_rows() -> None:
        while not watching.wait(1.0):
            peak[0] = max(peak[0], _rows(path))

    threading.Thread(target=watch_rows, daemon=True).start()
    try:
        for mark in marks:
            while enqueued < mark:
                count = min(args.batch, mark - enqueued)
                noop.enqueue_many([NoopPayload()] * count)
                enqueued += count
                while _backlog(path) > 20_000:  # steady: enqueue no faster than it drains
                    time.sleep(0.05)
            while _backlog(path) > 0:
                time.sleep(0.05)
            rows = _rows(path)
            print(f"{mark:>10} {time.monotonic() - started:>8.0f} {rows:>9} {peak[0]:>9} "
                  f"{size(path) / 1e6:>8.1f} {wal_size(path) / 1e6:>7.1f} "
                  f"{free_pages(path):>10}", flush=True)  # fmt: skip
    finally:
        watching.set()
        runner.stop()
        runner.join(30)
        store.close()


def _backlog(path: str) -> int:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        query = "SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')"
        return int(conn.execute(query).fetchone()[0])


def _rows(path: str) -> int:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return int(conn.execute("SELECT count(*) FROM jobs").fetchone()[0])


if __name__ == "__main__":
    main()
