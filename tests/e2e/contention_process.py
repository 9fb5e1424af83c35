"""One process of the SQLite contention test: enqueues for a while and runs jobs, all at once.

Usage: python -m tests.e2e.contention_process DATABASE SECONDS IDS_FILE

Enqueues ``ledger`` jobs at a steady pace for SECONDS while its own two
workers run whatever any process queued; every id whose enqueue returned is
appended to IDS_FILE, and every enqueue that raised is counted in a line
``enqueue errors: N`` at the end. It logs to stderr in the CLI's format and
runs until SIGTERM, as ``jobtable worker`` does.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
import time

from jobtable.adapters.system_clock import SystemClock
from jobtable.core import Runner
from tests.e2e.ledger_kinds import register

PACE = 200
"""Enqueues a second per process: with four processes, a queue that drains as it fills."""


def main(database: str, seconds: float, ids_path: str) -> int:
    from jobtable.adapters.sqlite import SqliteStore

    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(name)s %(message)s"
    )
    store = SqliteStore.open(database, now=SystemClock().now())
    runner = Runner(store, SystemClock(), workers=2)
    register(runner.kinds)
    watcher = store.watch(runner.notice_jobs_from_elsewhere)
    runner.start()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())

    errors = 0
    started = time.monotonic()
    with open(ids_path, "w") as ids:
        sent = 0
        while time.monotonic() - started < seconds and not stop.is_set():
            try:
                ids.write(runner.enqueue("ledger", {"n": sent}) + "\n")
            except Exception as error:  # counted: a caller must never see one
                errors += 1
                logging.getLogger("contention").error("enqueue raised %s", type(error).__name__)
            sent += 1
            ahead = sent / PACE - (time.monotonic() - started)
            if ahead > 0:
                stop.wait(ahead)
        ids.write(f"enqueue errors: {errors}\n")
    logging.getLogger("contention").info("enqueueing done sent=%d", sent)
    stop.wait()
    runner.stop()
    runner.join(30)
    watcher.stop()
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], float(sys.argv[2]), sys.argv[3]))
