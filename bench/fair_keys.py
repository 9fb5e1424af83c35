"""A fair claim's cost by the number of tenants: those waiting, and those the kind had before.

A fair kind (``fair_key``) with ``waiting`` keys of 3 due jobs each, and a row in
``jobtable_fair_turns`` for each of ``past`` keys that had turns once and have no job now
(a kind keeps a row for every key it ever had). Timed: claims of 3 jobs, each its own
transaction (``run_batch``, as a runner with 3 free workers sends), ending the last
claim's jobs, after a few to list the keys; µs a claim, the median (SQLite: synchronous
"normal", as the drains run it, so no commit waits for the disk). "fair": the claim a fair
kind alone takes (its listed keys' heads in one statement); "with a limit": the same kind
with a limit that holds nothing back, whose claims read the turns and pick job by job
(as a fair claim that falls short does, and one that lists its keys again).

    bench/run fair_keys.py                  # SQLite
    bench/run fair_keys.py --postgres postgresql://postgres@127.0.0.1:5432/test
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from typing import Any

from jobtable.core.batch import Batch
from jobtable.core.ids import JobIdGenerator
from jobtable.core.jobs import NewJob
from jobtable.core.limits import RunningLimit
from jobtable.core.outcome import Succeed

NOW = datetime.datetime(2026, 12, 7, 12, 0, tzinfo=datetime.UTC)
CASES = ((100, 0), (100, 10_000), (1_000, 0), (10_000, 0), (100, 100_000))
CLAIMS = 60


@contextlib.contextmanager
def opened(postgres: str, folder: str) -> Iterator[tuple[Any, Any]]:
    """A new store, and a DB-API connection to its database (autocommit)."""
    if postgres:
        import psycopg

        from jobtable.adapters.postgres import PostgresStore

        schema = f"bench_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(postgres, autocommit=True) as admin:
            admin.execute(f'CREATE SCHEMA "{schema}"')
        store = PostgresStore.open(postgres, now=NOW, schema=schema)
        conn = psycopg.connect(postgres, options=f"-c search_path={schema}", autocommit=True)
        try:
            yield store, conn
        finally:
            conn.close()
            store.close()
            with psycopg.connect(postgres, autocommit=True) as admin:
                admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
        return
    import sqlite3

    from jobtable.adapters.sqlite import SqliteStore

    path = os.path.join(folder, f"{uuid.uuid4().hex[:8]}.db")
    store = SqliteStore.open(path, now=NOW, synchronous="normal")  # no fsync a commit
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        yield store, conn
    finally:
        conn.close()
        store.close()


def claim_time(postgres: str, folder: str, waiting: int, past: int, *, limited: bool) -> float:
    with opened(postgres, folder) as (store, conn):
        ids = JobIdGenerator()
        start = int(NOW.timestamp() * 1000) - 10 * waiting
        jobs = [
            NewJob(
                id=ids.next_id(start + n),
                kind="tenant",
                payload="{}",
                fair_key=f"waiting-{n % waiting}",
            )
            for n in range(3 * waiting)
        ]
        store.create_many(jobs, now=NOW)
        place = "%s" if postgres else "?"
        insert = f"INSERT INTO jobtable_fair_turns VALUES ('tenant', {place}, {place})"
        if postgres:
            with conn.cursor() as cursor:
                cursor.executemany(insert, [(f"past-{n}", n + 1) for n in range(past)])
        else:
            conn.execute("BEGIN")
            conn.executemany(insert, [(f"past-{n}", n + 1) for n in range(past)])
            conn.execute("COMMIT")
        conn.execute("ANALYZE")
        times, running = [], []
        for number in range(CLAIMS + 5):
            batch = Batch(
                outcomes=[(job.claim, Succeed(result="{}")) for job in running],
                claim=3,
                fair=frozenset({"tenant"}),
                limits={"tenant": RunningLimit(n=1_000_000, keyed=False)} if limited else {},
            )
            began = time.perf_counter()
            done = store.run_batch(batch, runner_id="r", now=NOW, kinds=["tenant"])
            if number >= 5:  # the first list the keys
                times.append(time.perf_counter() - began)
            running = done.claimed
            assert len(running) == 3, "each claim takes three jobs"
        return statistics.median(times) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--postgres", default="", help="a server's URL: PostgreSQL, not SQLite")
    args = parser.parse_args()
    engine = "PostgreSQL" if args.postgres else "SQLite"
    print(f"\n{engine}: a fair claim of 3 jobs, µs (median of {CLAIMS})\n")
    print("| keys waiting | keys before, no job | fair | with a limit |")
    print("|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as folder:
        for waiting, past in CASES:
            alone = claim_time(args.postgres, folder, waiting, past, limited=False)
            limited = claim_time(args.postgres, folder, waiting, past, limited=True)
            print(f"| {waiting:,} | {past:,} | {alone:,.0f} | {limited:,.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
