"""Claim cost at depth: an empty queue against 1,000,000 rows, 90% of them scheduled.

The deep table holds what makes a naive claim slow: 90% of its rows due in
the future, a tenth of the rest of a kind this runner does not serve, and the
due rows spread over priorities 0-9 and three queues. Each run times the
same number of claims (``claim_next`` with the runner's kinds, each its own
transaction) on an empty table with just those jobs, and on the deep one.
The ratio deep/empty is the figure (target >= 0.9). Not a test: run by hand,

    bench/run claim_depth.py                   # 1,000,000 rows, SQLite and PostgreSQL
    bench/run claim_depth.py --rows 100000     # smaller
    JOBTABLE_BENCH_POSTGRES=postgresql://postgres@127.0.0.1:5432/test bench/run claim_depth.py
"""

from __future__ import annotations

import argparse
import datetime
import os
import random
import tempfile
import time
import uuid
from collections.abc import Callable
from typing import Any

from jobtable.adapters.sqlite import SqliteStore
from jobtable.core import NewJob
from jobtable.core.ids import JobIdGenerator

NOW = datetime.datetime.now(datetime.UTC)
SERVED = frozenset({"mail", "report"})
CLAIMS = 2000
BATCH = 5000


def jobs(count: int, *, deep: bool, seed: int) -> list[NewJob]:
    """``count`` jobs; in a deep table 90% are scheduled and 1 in 10 of the rest not served."""
    chance = random.Random(seed)
    ids = JobIdGenerator()
    made = []
    for number in range(count):
        created = NOW - datetime.timedelta(seconds=count - number)
        if deep and number % 10:
            run_at = NOW + datetime.timedelta(hours=chance.randint(1, 1000))  # the future
            kind = chance.choice(sorted(SERVED))
        else:
            run_at = created
            kind = "other" if deep and chance.random() < 0.1 else chance.choice(sorted(SERVED))
        made.append(
            NewJob(
                id=ids.next_id(int(created.timestamp() * 1000)),
                kind=kind,
                payload="{}",
                priority=chance.randint(0, 9),
                queue=chance.choice(["default", "mail", "reports"]),
                run_at=run_at,
            )
        )
    return made


def fill(store: Any, count: int, *, deep: bool) -> None:
    made = jobs(count, deep=deep, seed=count)
    for start in range(0, len(made), BATCH):
        store.create_many(made[start : start + BATCH], now=NOW)


def claim_rate(store: Any) -> float:
    """Claims a second, one thread, each its own transaction: the cost of finding and
    taking the next job (outcomes are the same write at any depth, and not timed)."""
    started = time.perf_counter()
    for _ in range(CLAIMS):
        claimed = store.claim_next(runner_id="bench", now=NOW, kinds=SERVED)
        assert claimed is not None, "the table ran out of due jobs"
    return CLAIMS / (time.perf_counter() - started)


def settle(store: Any) -> None:
    """As a live database would be: statistics fresh and the fill's dead rows gone."""
    if hasattr(store, "_pool"):
        with store._pool.connection() as conn:
            conn.autocommit = True
            conn.execute("VACUUM ANALYZE jobs")
    else:
        with store._db.writer() as conn:
            conn.execute("ANALYZE")


def measure(name: str, open_store: Callable[[], Any], rows: int) -> tuple[str, float, float]:
    empty = open_store()
    fill(empty, CLAIMS * 2, deep=False)
    settle(empty)
    empty_rate = claim_rate(empty)
    empty.close()
    deep = open_store()
    started = time.perf_counter()
    fill(deep, rows, deep=True)
    print(f"{name}: {rows:,} rows stored in {time.perf_counter() - started:.0f}s", flush=True)
    settle(deep)
    deep_rate = claim_rate(deep)
    deep.close()
    return name, empty_rate, deep_rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="jobtable-depth-")
    results = [
        measure(
            "SQLite (synchronous NORMAL)",
            lambda: SqliteStore.open(
                os.path.join(folder, f"{uuid.uuid4().hex}.db"), now=NOW, synchronous="normal"
            ),
            args.rows,
        )
    ]
    url = os.environ.get("JOBTABLE_BENCH_POSTGRES")
    if url:
        from jobtable.adapters.postgres import PostgresStore

        def open_postgres() -> Any:
            import psycopg

            schema = f"bench_{uuid.uuid4().hex[:10]}"
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f"CREATE SCHEMA {schema}")
            store = PostgresStore.open(url, now=NOW, schema=schema)
            close = store.close

            def close_and_drop() -> None:
                close()
                with psycopg.connect(url, autocommit=True) as conn:
                    conn.execute(f"DROP SCHEMA {schema} CASCADE")

            store.close = close_and_drop  # type: ignore[method-assign]
            return store

        results.append(measure("PostgreSQL", open_postgres, args.rows))
    print(f"\n{CLAIMS} claims each; deep table: {args.rows:,} rows, 90% scheduled\n")
    print("| store | empty claims/s | deep claims/s | deep/empty |")
    print("|---|---|---|---|")
    for name, empty_rate, deep_rate in results:
        print(f"| {name} | {empty_rate:,.0f} | {deep_rate:,.0f} | {deep_rate / empty_rate:.2f} |")


if __name__ == "__main__":
    main()
