"""Enqueue N no-op jobtable jobs, one commit each, and print the rate: run by peers.py.

A process of its own, so ``PYTHONPATH`` picks which checkout of jobtable is
timed (``peers.py --baseline``); only the enqueue loop is timed, not start-up.

    python bench/enqueue_jobtable.py DATABASE N [full|normal]
"""

from __future__ import annotations

import sys
import time


def main() -> int:
    from jobtable.adapters.system_clock import SystemClock
    from jobtable.core import NoopPayload, Runner
    from jobtable.entrypoints.wiring import open_store

    database, n = sys.argv[1], int(sys.argv[2])
    synchronous = sys.argv[3] if len(sys.argv) > 3 else "full"
    clock = SystemClock()
    store = open_store(database, synchronous=synchronous, now=clock.now())
    runner = Runner(store, clock, workers=0)
    enqueue = runner.builtins.noop.enqueue
    payload = NoopPayload()
    try:
        started = time.perf_counter()
        for _ in range(n):
            enqueue(payload)
        print(n / (time.perf_counter() - started))
    finally:
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
