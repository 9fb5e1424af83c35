"""How late the event loop runs while an AsyncClient enqueues: a probe task sleeps 1 ms at a
time and records how far past 1 ms each sleep ends, first with nothing else to do, then
while the client enqueues ``--rate`` jobs a second (one commit each) on SQLite at
synchronous FULL (the embedded default), or on PostgreSQL with ``--postgres URL``.

    .venv/bin/python bench/async_lag.py                 # 10 s at 1,000 enqueues a second
    .venv/bin/python bench/async_lag.py --seconds 3 --rate 500

The target (issue 22): p99 overshoot at most 10 ms while enqueuing 1,000 a second.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time

import jobtable
from jobtable.entrypoints.cli import main as cli


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def probe(stop: asyncio.Event, lags: list[float]) -> None:
    while not stop.is_set():
        started = time.perf_counter()
        await asyncio.sleep(0.001)
        lags.append(time.perf_counter() - started - 0.001)


async def measure(database: str, *, seconds: float, rate: float) -> None:
    async with jobtable.AsyncClient(database) as client:
        await client.enqueue("noop", {})  # warm: the first call opens connections
        for label, enqueuing in (("idle", False), ("enqueuing", True)):
            stop = asyncio.Event()
            lags: list[float] = []
            prober = asyncio.create_task(probe(stop, lags))
            done = 0
            began = time.perf_counter()
            if enqueuing:
                slots = asyncio.Semaphore(32)
                tasks = set()

                async def one(slots: asyncio.Semaphore = slots) -> None:
                    nonlocal done
                    async with slots:
                        await client.enqueue("noop", {})
                        done += 1

                count = int(seconds * rate)
                for n in range(count):
                    due = began + n / rate
                    wait = due - time.perf_counter()
                    if wait > 0:
                        await asyncio.sleep(wait)
                    task = asyncio.create_task(one())
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
                await asyncio.gather(*tasks)
            else:
                await asyncio.sleep(seconds)
            spent = time.perf_counter() - began
            stop.set()
            await prober
            ms = [lag * 1000 for lag in lags]
            print(
                f"{label:>10}: {done / spent:7.0f} enqueues/s  probe overshoot p50 "
                f"{statistics.median(ms):5.2f} ms  p99 {percentile(ms, 0.99):5.2f} ms  "
                f"max {max(ms):6.2f} ms  ({len(ms)} sleeps)"
            )


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--postgres", default="", help="a postgresql:// URL (default: SQLite)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        database = args.postgres or os.path.join(folder, "lag.db")
        assert cli(["migrate", "--database", database, "--log-level", "warning"]) == 0
        print(f"database: {'PostgreSQL' if args.postgres else 'SQLite, synchronous FULL'}")
        asyncio.run(measure(database, seconds=args.seconds, rate=args.rate))


if __name__ == "__main__":
    run()
