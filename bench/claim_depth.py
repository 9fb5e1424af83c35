"""Claim cost at depth: an empty queue against 1,000,000 rows, 90% of them scheduled.

The deep table holds what makes a naive claim slow: 90% of its rows due in
the future, a tenth of the rest of a kind this runner does not serve, and the
due rows spread over priorities 0-9 and three queues. Each run times the
same number of claims (``claim_next`` with the runner's kinds, each its own
transaction) on an empty table with just those jobs, and on the deep one.
The ratio deep/empty is the figure (target >= 0.9). It is printed for the
search alone (the claim's SELECT, read-only) and for the whole claim (the
search and the UPDATE that takes the job, one commit each): the search is
what the index design makes flat; the UPDATE costs what writing a row of a
bigger table costs. Not a test: run by hand,

    bench/run claim_depth.py                   # 1,000,000 rows, SQLite and PostgreSQL
    bench/run claim_depth.py --rows 100000     # smaller
    bench/run claim_depth.py --only postgres   # one engine
    JOBTABLE_BENCH_POSTGRES=postgresql://postgres@127.0.0.1:5432/test bench/run claim_depth.py
"""

from __future__ import annotations

import argparse
import datetime
import json
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
WARM_UP = 200
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
    for _ in range(WARM_UP):  # connections, statement caches and prepared plans warm
        store.claim_next(runner_id="bench", now=NOW, kinds=SERVED)
    started = time.perf_counter()
    for _ in range(CLAIMS):
        claimed = store.claim_next(runner_id="bench", now=NOW, kinds=SERVED)
        assert claimed is not None, "the table ran out of due jobs"
    return CLAIMS / (time.perf_counter() - started)


def find_rate(store: Any) -> float:
    """Searches a second for the next job, without taking it: the claim's own SELECT
    (its ``WHERE id = (...)`` part), read-only, so every search finds the same job."""
    postgres = hasattr(store, "_pool")
    if postgres:
        from jobtable.adapters.postgres.engine import QUERIES

        claim = QUERIES["claim_next_job"]
        search = claim[
            claim.index("MATERIALIZED (") + len("MATERIALIZED (") : claim.index("\n)\nUPDATE")
        ]
    else:
        from jobtable.adapters.sqlite.engine import QUERIES

        claim = QUERIES["claim_next_job"]
        search = claim[claim.index("WHERE id IN (") + len("WHERE id IN (") : claim.rindex(")")]
    search = search.replace("FOR UPDATE SKIP LOCKED", "")
    kinds: Any = sorted(SERVED) if postgres else json.dumps(sorted(SERVED))
    params = {"kinds": kinds, "queues": None, "limit": 1}
    connection = store._pool.connection() if postgres else store._db.reader()
    with connection as conn:
        for _ in range(WARM_UP):
            conn.execute(search, params).fetchone()
        started = time.perf_counter()
        for _ in range(CLAIMS):
            assert conn.execute(search, params).fetchone() is not None
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


def measure(name: str, open_store: Callable[[], Any], rows: int) -> tuple[str, list[float]]:
    """Searches and claims a second, on the empty table and then on the deep one."""
    rates = []
    for count, deep in ((CLAIMS * 3, False), (rows, True)):
        store = open_store()
        started = time.perf_counter()
        fill(store, count, deep=deep)
        print(f"{name}: {count:,} rows stored in {time.perf_counter() - started:.0f}s", flush=True)
        settle(store)
        rates += [find_rate(store), claim_rate(store)]
        store.close()
    return name, rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--only", choices=("sqlite", "postgres"), help="one engine")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="jobtable-depth-")
    results = []
    if args.only != "postgres":
        results.append(
            measure(
                "SQLite (synchronous NORMAL)",
                lambda: SqliteStore.open(
                    os.path.join(folder, f"{uuid.uuid4().hex}.db"), now=NOW, synchronous="normal"
                ),
                args.rows,
            )
        )
    url = os.environ.get("JOBTABLE_BENCH_POSTGRES")
    if url and args.only != "sqlite":
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
    print(f"\n{CLAIMS} each; deep table: {args.rows:,} rows, 90% scheduled\n")
    print("| store | search/s empty | search/s deep | deep/empty | claims/s empty "
          "| claims/s deep | deep/empty |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for name, (find_empty, claim_empty, find_deep, claim_deep) in results:
        print(
            f"| {name} | {find_empty:,.0f} | {find_deep:,.0f} | {find_deep / find_empty:.2f} "
            f"| {claim_empty:,.0f} | {claim_deep:,.0f} | {claim_deep / claim_empty:.2f} |"
        )


if __name__ == "__main__":
    main()
