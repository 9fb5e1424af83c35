"""Async noop drain beside sync noop drain, in one run: N jobs enqueued in one batch, then a
runner in this process (SystemClock, SQLite at synchronous FULL) drains them; the rate is jobs over the time from start to the last one
finished. Rounds alternate the kinds, so each figure sees the same machine.

    .venv/bin/python bench/async_drain.py                  # 3,000 jobs, 2 rounds
    .venv/bin/python bench/async_drain.py --jobs 500 --rounds 1
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from typing import Any

import attrs

from jobtable import JobContext, Runner, SystemClock
from jobtable.entrypoints.wiring import open_store


@attrs.frozen
class Nothing:
    pass


@attrs.frozen
class Done:
    def public(self) -> dict[str, Any]:
        return {}


def sync_noop(ctx: JobContext, payload: Nothing) -> Done:
    return Done()


async def async_noop(ctx: JobContext, payload: Nothing) -> Done:
    return Done()


def drain(database: str, kind: str, jobs: int, *, workers: int, async_workers: int) -> float:
    clock = SystemClock()
    store = open_store(database, synchronous="full", now=clock.now())
    runner = Runner(store, clock, workers=workers, async_workers=async_workers)
    runner.kinds.register("sync_noop", sync_noop, payload=Nothing)
    runner.kinds.register("async_noop", async_noop, payload=Nothing)
    batch = [runner.encode(kind, {}) for _ in range(jobs)]
    for start in range(0, jobs, 500):
        runner.enqueue_batch(batch[start : start + 500])
    began = time.perf_counter()
    runner.start()
    while sum(count.count for count in runner.job_counts()):  # unfinished jobs left
        time.sleep(0.005)
    spent = time.perf_counter() - began
    runner.stop()
    runner.join(30)
    store.close()
    return jobs / spent


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    plans = [
        ("sync noop, --workers", "sync_noop", args.workers, 100),
        ("async noop, --async-workers 2", "async_noop", args.workers, 2),
        ("async noop, --async-workers 100", "async_noop", args.workers, 100),
    ]
    rates: dict[str, list[float]] = {label: [] for label, *_ in plans}
    with tempfile.TemporaryDirectory() as folder:
        for round_ in range(args.rounds):
            for label, kind, workers, async_workers in plans:
                database = os.path.join(folder, f"{round_}-{kind}-{async_workers}.db")
                rates[label].append(
                    drain(database, kind, args.jobs, workers=workers, async_workers=async_workers)
                )
    base = statistics.median(rates[plans[0][0]])
    for label, measured in rates.items():
        median = statistics.median(measured)
        print(f"{label:>34}: {median:7.0f} jobs/s  ({median / base:.2f}x sync)  rounds {measured}")


if __name__ == "__main__":
    run()
