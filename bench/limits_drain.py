"""The drain with limits and rates on beside off, in one run (issue 21's bar: >= 0.7x).

For each mode of ``limit_kinds.py`` (off, limit, keyed, rate, all, fair), round by round,
each limited mode's drain between two of off's: N jobs of 100 tenants are enqueued, then
``jobtable worker --workers W`` drains them in a process of its own while this one counts
the unfinished jobs (``peers.py``'s drain rate: start-up left out). A mode's ratio in a
round is its drain over the mean of the offs either side of it (this machine's speed
drifts within a round); the table gives the median of the rounds' ratios. Every limit is
at least W, so it holds nothing back.

    bench/run limits_drain.py                       # SQLite and PostgreSQL, 5,000 jobs
    bench/run limits_drain.py --jobs 500 --rounds 1 # quick
    bench/run limits_drain.py --no-sqlite --modes off,fair  # PostgreSQL's fair drain alone
    bench/run limits_drain.py --no-sqlite --analyze   # statistics taken after the enqueue

``--analyze`` (PostgreSQL) runs ANALYZE between the enqueue and the drain, as autovacuum
would on a table that grew: the planner then sees the backlog, and a young history.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable

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


def drain(database: str, n: int, mode: str, workers: int, count, *, analyze: bool) -> float:
    enqueue(database, n, mode)
    if analyze and database.startswith("postgresql"):
        import psycopg

        with psycopg.connect(database, autocommit=True) as conn:
            conn.execute("ANALYZE")
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


def bracketed(modes: list[str]) -> list[str]:
    """The drains of one round: off first, last and between every two limited modes, so
    each limited mode is measured against the offs either side of it in time (the
    machine's speed drifts over a round)."""
    steps = ["off"]
    for mode in modes:
        if mode != "off":
            steps += [mode, "off"]
    return steps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=5000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--postgres", default=POSTGRES, help="'' to skip PostgreSQL")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated")
    parser.add_argument("--no-sqlite", action="store_true", help="PostgreSQL's drains only")
    parser.add_argument("--analyze", action="store_true", help="PostgreSQL: ANALYZE first")
    args = parser.parse_args()
    engines: dict[str, Callable[[str], float]] = {}
    rates: dict[tuple[str, str], list[float]] = {}
    ratios: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:

        def sqlite(mode: str) -> float:
            path = os.path.join(folder, f"{uuid.uuid4().hex[:8]}.db")
            count = sqlite_count(path, UNFINISHED)
            return drain(path, args.jobs, mode, args.workers, count, analyze=False)

        def postgres(mode: str) -> float:
            with fresh_postgres(args.postgres) as url:
                count = postgres_count(url, UNFINISHED)
                return drain(url, args.jobs, mode, args.workers, count, analyze=args.analyze)

        if not args.no_sqlite:
            engines["SQLite"] = sqlite
        if args.postgres:
            engines["PostgreSQL"] = postgres
        for round_number in range(args.rounds):
            last_off: dict[str, float] = {}
            waiting: dict[str, tuple[str, float]] = {}  # a limited mode's, until the next off
            for mode in bracketed(args.modes.split(",")):
                for engine, run in engines.items():
                    rate = run(mode)
                    rates.setdefault((engine, mode), []).append(rate)
                    print(
                        f"round {round_number + 1}: {engine} {mode}: {rate:,.0f}/s", file=sys.stderr
                    )
                    if mode != "off":
                        waiting[engine] = (mode, rate)
                        continue
                    if engine in waiting:
                        limited, its_rate = waiting.pop(engine)
                        off = (last_off[engine] + rate) / 2
                        ratios.setdefault((engine, limited), []).append(its_rate / off)
                    last_off[engine] = rate
    print(
        f"\n{args.jobs:,} jobs of 100 tenants, --workers {args.workers}, {args.rounds} rounds"
        f"{', ANALYZE after the enqueue' if args.analyze else ''};"
        " vs off: the median of each round's drain over the mean of the offs either side\n"
    )
    print("| engine | mode | drain (median) | vs off | each round |")
    print("|---|---|---:|---:|---|")
    for (engine, mode), runs in rates.items():
        each = ratios.get((engine, mode), [1.0] * args.rounds)
        rounds = " / ".join(f"{ratio:.2f}" for ratio in each)
        print(
            f"| {engine} | {mode} | {statistics.median(runs):,.0f}/s"
            f" | {statistics.median(each):.2f}x | {rounds} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
