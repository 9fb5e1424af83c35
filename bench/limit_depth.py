"""Claim time at depth with most of the backlog held back (issue 21's bar: "claim time at
depth with most of the backlog held back").

Each case fills a table with ``--rows`` due jobs (default 1,000,000) of which all but a few
are held back, then times claims of the few that may start, each its own transaction (one
``run_batch`` claiming one job, as a runner with a free worker sends), against the same
claims on a table holding only those few. The ratio deep/shallow is the figure: 1.0 means
the held-back backlog costs a claim nothing.

- keyed: ``Limit(1, key=customer)``; one customer holds the backlog and runs one job (at
  its limit); 1,000 other customers have one due job each: each claim takes one of them.
- full: the same keyed limit with every key at it: big's and the 1,000 others' one job each
  run, and big's backlog waits behind them: every claim finds nothing.
- limit: ``Limit(1)`` with one running: every claim finds nothing (it must learn that fast).
- queue: a queue limited to 1 running with one running and the backlog in it: nothing.
- paused: ``Limit(100000)`` (room to spare) with the backlog in a paused queue and 1,000
  customers' jobs in another: each claim takes one of them.
- fair: as paused, for a fair kind (``fair_key=customer``; big's turn never comes).

    bench/run limit_depth.py                      # SQLite and PostgreSQL, 1,000,000 rows
    bench/run limit_depth.py --rows 100000        # smaller
"""

from __future__ import annotations

import argparse
import datetime
import os
import sqlite3
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import attrs

from jobtable.adapters.sqlite import SqliteStore
from jobtable.core.batch import Batch
from jobtable.core.ids import JobIdGenerator
from jobtable.core.jobs import NewJob
from jobtable.core.limits import QueueLimit, RunningLimit

NOW = datetime.datetime.now(datetime.UTC)
POSTGRES = os.environ.get("JOBTABLE_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
FREE = 1000
CLAIMS = 300
KEYED = {"charge": RunningLimit(n=1, keyed=True)}
WHOLE = {"charge": RunningLimit(n=1, keyed=False)}
ROOMY = {"charge": RunningLimit(n=100_000, keyed=False)}
PAUSED = ("queue", "paused", "fair")
"""The cases whose backlog is in a queue of its own (``slow``)."""


def backlog(rows: int, queue: str) -> Iterator[tuple[Any, ...]]:
    """``rows`` due jobs of customer ``big`` in ``queue``, oldest first (ahead of the rest)."""
    ids = JobIdGenerator()
    start = int(NOW.timestamp() * 1000) - rows - FREE - 10_000
    for number in range(rows):
        run_at = NOW - datetime.timedelta(seconds=rows + FREE - number)
        yield ids.next_id(start + number), "charge", queue, "big", run_at


def free_jobs(store: Any, queue: str, count: int) -> None:
    jobs = [
        NewJob(
            id=JobIdGenerator().next_id(int(NOW.timestamp() * 1000) - FREE + n),
            kind="charge",
            payload="{}",
            queue=queue,
            limit_key=f"customer-{n}",
            fair_key=f"customer-{n}",
            run_at=NOW - datetime.timedelta(seconds=FREE - n),
        )
        for n in range(count)
    ]
    store.create_many(jobs, now=NOW)


def fill_sqlite(path: str, rows: int, queue: str) -> None:
    conn = sqlite3.connect(path)
    conn.executemany(
        "INSERT INTO jobs (id, kind, queue, limit_key, fair_key, run_at, status, payload,"
        " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'queued', '{}', 'c', 'u')",
        (
            (job_id, kind, q, key, key, run_at.isoformat(timespec="microseconds"))
            for job_id, kind, q, key, run_at in backlog(rows, queue)
        ),
    )
    conn.commit()
    conn.execute("ANALYZE")
    conn.close()


def fill_postgres(url: str, schema: str, rows: int, queue: str) -> None:
    import psycopg

    with psycopg.connect(url, options=f"-c search_path={schema}", autocommit=True) as conn:
        columns = "id, kind, queue, limit_key, fair_key, run_at, status, payload, created_at"
        with conn.cursor().copy(f"COPY jobs ({columns}, updated_at) FROM STDIN") as copy:
            for job_id, kind, q, key, run_at in backlog(rows, queue):
                copy.write_row((job_id, kind, q, key, key, run_at, "queued", "{}", NOW, NOW))
        conn.execute("VACUUM ANALYZE jobs")


def timed_claims(store: Any, batch: Batch, count: int) -> float:
    """Seconds per claim, over ``count`` claims of one job each."""
    started = time.perf_counter()
    for _ in range(count):
        store.run_batch(batch, runner_id="bench", now=NOW, kinds=("charge",))
    return (time.perf_counter() - started) / count


def case(opened: Callable[[int, str], Any], name: str, rows: int) -> float:
    """Seconds per claim with ``rows`` held back in case ``name``."""
    queue = "slow" if name in PAUSED else "default"
    store = opened(rows, queue)
    try:
        if name in ("paused", "fair"):  # the backlog paused; others' jobs claimed one a time
            store.set_queue_paused("slow", paused=True, now=NOW)
            fair = frozenset({"charge"} if name == "fair" else ())
            batch = Batch(claim=1, limits=ROOMY if name == "paused" else {}, fair=fair)
            free_jobs(store, "default", FREE)
            seconds = timed_claims(store, batch, CLAIMS)
            done = store.run_batch(batch, runner_id="bench", now=NOW, kinds=("charge",))
            assert [job.queue for job in done.claimed] == ["default"], "another's job"
            return seconds
        if name == "queue":
            store.set_queue_limit("slow", QueueLimit(running=1), now=NOW)
            batch = Batch(claim=1, limited_queues=frozenset({"slow"}))
        else:
            batch = Batch(claim=1, limits=KEYED if name in ("keyed", "full") else WHOLE)
        if rows == 0:  # the shallow table: one job of big, so that it can run
            store.create(
                NewJob(id=JobIdGenerator().next_id(1), kind="charge", payload="{}",
                       queue=queue, limit_key="big", run_at=NOW - datetime.timedelta(days=1)),
                now=NOW,
            )  # fmt: skip
        first = store.run_batch(batch, runner_id="bench", now=NOW, kinds=("charge",))
        assert [job.claim for job in first.claimed], "big's first job runs: it is at its limit"
        if name == "keyed":
            free_jobs(store, queue, FREE)
            seconds = timed_claims(store, batch, CLAIMS)
            done = store.run_batch(batch, runner_id="bench", now=NOW, kinds=("charge",))
            assert done.claimed, "a free customer's job was claimed"
        elif name == "full":
            free_jobs(store, queue, FREE)
            every = attrs.evolve(batch, claim=FREE)
            taken = store.run_batch(every, runner_id="bench", now=NOW, kinds=("charge",))
            assert len(taken.claimed) == FREE, "every free customer's job runs: all keys full"
            seconds = timed_claims(store, batch, CLAIMS)
            done = store.run_batch(batch, runner_id="bench", now=NOW, kinds=("charge",))
            assert not done.claimed, "held back"
        else:
            seconds = timed_claims(store, batch, CLAIMS)
            done = store.run_batch(batch, runner_id="bench", now=NOW, kinds=("charge",))
            assert not done.claimed, "held back"
        return seconds
    finally:
        store.close()


def sqlite_opener(folder: str) -> Callable[[int, str], Any]:
    def opened(rows: int, queue: str) -> Any:
        path = os.path.join(folder, f"{uuid.uuid4().hex}.db")
        SqliteStore.open(path, now=NOW).close()
        if rows:
            fill_sqlite(path, rows, queue)
        return SqliteStore.open(path, now=NOW)

    return opened


def postgres_opener(url: str, schemas: list[str]) -> Callable[[int, str], Any]:
    import psycopg

    from jobtable.adapters.postgres import PostgresStore

    def opened(rows: int, queue: str) -> Any:
        schema = f"bench_depth_{uuid.uuid4().hex[:10]}"
        schemas.append(schema)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')
        PostgresStore.open(url, now=NOW, schema=schema).close()
        if rows:
            fill_postgres(url, schema, rows, queue)
        return PostgresStore.open(url, now=NOW, schema=schema)

    return opened


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--engines", default="sqlite,postgres")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cases", default="keyed,full,limit,queue,paused,fair")
    args = parser.parse_args()
    schemas: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        openers = {"sqlite": sqlite_opener(folder)}
        if "postgres" in args.engines:
            openers["postgres"] = postgres_opener(POSTGRES, schemas)
        try:
            for engine in args.engines.split(","):
                for name in args.cases.split(","):
                    shallow, deep = [], []
                    for _ in range(args.rounds):
                        shallow.append(case(openers[engine], name, 0))
                        deep.append(case(openers[engine], name, args.rows))
                    s, d = statistics.median(shallow), statistics.median(deep)
                    print(
                        f"{engine:8} {name:6} claim at {args.rows:,} held back: "
                        f"{d * 1000:7.3f} ms vs {s * 1000:7.3f} ms shallow = {s / d:.2f}x",
                        flush=True,
                    )
        finally:
            if schemas:
                import psycopg

                with psycopg.connect(POSTGRES, autocommit=True) as conn:
                    for schema in schemas:
                        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


if __name__ == "__main__":
    main()
