"""The drain with limits and rates on beside off, in one run (issue 21's bar: >= 0.7x).

For each mode of ``limit_kinds.py`` (off, limit, keyed, rate, all), interleaved round by
round: N jobs of 100 tenants are enqueued, then ``jobtable worker --workers W`` drains
them in a process of its own while this one counts the unfinished jobs (``peers.py``'s
drain rate: start-up left out). Every limit is at least W, so it holds nothing back.

    bench/run limits_drain.py                       # SQLite and PostgreSQL, 5,000 jobs
    bench/run limits_drain.py --jobs 500 --rounds 1 # quick
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import uuid

from peers import (
    BIN,
    HERE,
    POSTGRES,
    drain_rate,
    fresh_postgres,
    postgres_count,
    sqlite_count,
    stop,
)

MODES = ("off", "limit", "keyed", "rate", "all", "fair")
CHECKOUT = os.pathsep.join([str(HERE), str(HERE.parent)])
"""The worker imports jobtable from this checkout (and the kinds from beside this file)."""
UNFINISHED = "SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')"


def enqueue(database: str, n: int, mode: str) -> None:
    from jobtable.adapters.system_clock import SystemClock
    from jobtable.core import Runner
    from jobtable.entrypoints.wiring import open_store

    os.environ["JOBTABLE_BENCH_LIMITS"] = mode
    import limit_kinds

    clock = SystemClock()
    store = open_store(database, synchronous="normal", now=clock.now())
    try:
        runner = Runner(store, clock, workers=0)
        kind = limit_kinds.register(runner.kinds)
        kind.enqueue_many([limit_kinds.Work(tenant=f"t{n % 100}") for n in range(n)])
    finally:
        store.close()


def drain(database: str, n: int, mode: str, workers: int, count) -> float:
    enqueue(database, n, mode)
    worker = subprocess.Popen(
        [str(BIN / "jobtable"), "worker", "--database", database, "--workers", str(workers),
         "--kinds", "limit_kinds", "--log-level", "warning"],
        env={**os.environ, "JOBTABLE_BENCH_LIMITS": mode, "PYTHONPATH": CHECKOUT},
        stdout=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        return drain_rate(f"{mode}", n, count, worker, 600)
    finally:
        stop(worker)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=5000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--postgres", default=POSTGRES, help="'' to skip PostgreSQL")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated; off first")
    args = parser.parse_args()
    modes = args.modes.split(",")
    rates: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for round_number in range(args.rounds):
            for mode in modes:
                path = os.path.join(folder, f"{uuid.uuid4().hex[:8]}.db")
                rate = drain(path, args.jobs, mode, args.workers, sqlite_count(path, UNFINISHED))
                rates.setdefault(("SQLite", mode), []).append(rate)
                print(f"round {round_number + 1}: SQLite {mode}: {rate:,.0f}/s", file=sys.stderr)
                if args.postgres:
                    with fresh_postgres(args.postgres) as url:
                        rate = drain(
                            url, args.jobs, mode, args.workers, postgres_count(url, UNFINISHED)
                        )
                    rates.setdefault(("PostgreSQL", mode), []).append(rate)
                    print(
                        f"round {round_number + 1}: PostgreSQL {mode}: {rate:,.0f}/s",
                        file=sys.stderr,
                    )
    print(
        f"\n{args.jobs:,} jobs of 100 tenants, --workers {args.workers}, median of {args.rounds}\n"
    )
    print("| engine | mode | drain | vs off |")
    print("|---|---|---:|---:|")
    for (engine, mode), runs in rates.items():
        off = statistics.median(rates[(engine, "off")])
        median = statistics.median(runs)
        print(f"| {engine} | {mode} | {median:,.0f}/s | {median / off:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
