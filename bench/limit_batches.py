"""What a limited kind's batch costs beside off's, with the machine's swings taken out: one
process keeps a store per mode (``limit_kinds.py``'s, 100 tenants; SQLite, or with
``--postgres URL`` a database each on that server) and runs their batches in turn, one of
each, so every mode sees the same moments of the machine.

A batch is what a runner of 4 busy workers sends in a drain: the outcomes of the jobs the
last batch handed out, and 2 or 3 new jobs (alternately). Off holds 16 jobs ahead whenever
8 or fewer are held, and starts held jobs; a limited kind claims (it is never held ahead).
Timed: ``run_batch`` alone (µs a job, and the ratio of off's to each mode's, the drain's
ratio without the workers' own time). ``--extra MODE:SQL`` adds a store of MODE to which
SQL was applied after its jobs were enqueued (an index put back, say), named ``MODE+``.

    bench/run limit_batches.py                                  # 6,000 jobs a mode
    bench/run limit_batches.py --postgres postgresql://postgres@127.0.0.1:5432/test
    bench/run limit_batches.py --extra "keyed:CREATE INDEX jobs_limit_keys ON jobs
        (kind, limit_key, priority, run_at, id) WHERE status = 'queued' AND limit_key IS NOT NULL"
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import sys
import tempfile
import time
from typing import Any

from peers import fresh_postgres

from jobtable.adapters.system_clock import SystemClock
from jobtable.core import Runner
from jobtable.core.batch import Batch
from jobtable.core.limits import RateLimit, RunningLimit
from jobtable.core.outcome import Succeed
from jobtable.entrypoints.wiring import open_store

MODES = ("off", "limit", "keyed", "rate", "all", "fair")
CLOCK = SystemClock()
HOLD, HOLD_WHEN = 16, 8


def rules(mode: str) -> dict[str, Any]:
    """The batch's limits, rates and fair kinds, as a runner of ``limit_kinds`` sends them."""
    keyed = {"work": RunningLimit(n=4, keyed=True)}
    rate = {"work": RateLimit(n=1_000_000, per=60.0, keyed=False)}
    return {
        "off": {},
        "limit": {"limits": {"work": RunningLimit(n=64, keyed=False)}},
        "keyed": {"limits": keyed},
        "rate": {"rates": rate},
        "all": {"limits": keyed, "rates": rate},
        "fair": {"fair": frozenset({"work"})},
    }[mode]


class Drain:
    """One mode's store, its jobs, and the batches a runner of 4 busy workers sends."""

    def __init__(self, mode: str, jobs: int, database: str, sql: str | None) -> None:
        os.environ["JOBTABLE_BENCH_LIMITS"] = mode
        import limit_kinds

        self.store = open_store(database, synchronous="normal", now=CLOCK.now())
        kind = limit_kinds.register(Runner(self.store, CLOCK, workers=0).kinds)
        kind.enqueue_many([limit_kinds.Work(tenant=f"t{n % 100}") for n in range(jobs + 100)])
        if sql and database.startswith("postgresql"):
            import psycopg

            with psycopg.connect(database, autocommit=True) as conn:
                conn.execute(sql.encode())
        elif sql:
            with sqlite3.connect(database) as conn:
                conn.execute(sql)
        self.rules = rules(mode)
        self.limited = bool(self.rules)
        self.handed: list[Any] = []  # claims of the jobs the last batch handed out
        self.held: list[Any] = []
        self.seconds = 0.0
        self.done = 0

    def batch(self, number: int) -> None:
        wanted = 2 + number % 2
        starts = [] if self.limited else [job.claim for job in self.held[:wanted]]
        self.held = self.held[len(starts) :]
        hold = HOLD if not self.limited and len(self.held) <= HOLD_WHEN else 0
        batch = Batch(
            outcomes=[(claim, Succeed(result="{}")) for claim in self.handed],
            starts=starts,
            claim=wanted - len(starts),
            hold=hold,
            clock=CLOCK.now if "rates" in self.rules else None,
            durable=False,
            **self.rules,
        )
        began = time.perf_counter()
        done = self.store.run_batch(batch, runner_id="r", now=CLOCK.now(), kinds=["work"])
        self.seconds += time.perf_counter() - began
        self.handed = [job.claim for job in done.claimed] + starts
        self.held += done.held
        self.done += len(self.handed)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=6000, help="jobs each mode runs")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated; off first")
    parser.add_argument("--extra", action="append", default=[], help="MODE:SQL (see above)")
    parser.add_argument("--postgres", default="", help="a server's URL: PostgreSQL, not SQLite")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, contextlib.ExitStack() as databases:

        def database(name: str) -> str:
            if args.postgres:
                return databases.enter_context(fresh_postgres(args.postgres))
            return os.path.join(folder, f"{name}.db")

        drains = {
            mode: Drain(mode, args.jobs, database(mode), None) for mode in args.modes.split(",")
        }
        for extra in args.extra:
            mode, sql = extra.split(":", 1)
            drains[f"{mode}+"] = Drain(mode, args.jobs, database(f"{mode}+"), sql)
        number = 0
        while min(drain.done for drain in drains.values()) < args.jobs:
            for drain in drains.values():
                drain.batch(number)
            number += 1
        off = drains["off"].seconds / drains["off"].done
        engine = "PostgreSQL" if args.postgres else "SQLite"
        print(f"\n{engine}, {args.jobs:,} jobs of 100 tenants a mode, batches interleaved\n")
        print("| mode | µs a job | off's / the mode's |")
        print("|---|---:|---:|")
        for name, drain in drains.items():
            each = drain.seconds / drain.done
            print(f"| {name} | {each * 1e6:,.0f} | {off / each:.2f} |")
        for drain in drains.values():
            drain.store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
