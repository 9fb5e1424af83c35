"""What each index and the history trigger cost a job's row, on both engines.

A job's life on the hot path is three writes of its row: the insert, the claim
(queued -> running) and its end (running -> succeeded). This times each of the
three with jobtable's own statements (the store's query files, batches of
``--batch`` per transaction, as a runner's batch is) on the full schema, then on
the same schema with one index or the history trigger taken away, so each
one's share shows as the difference. Raw drivers, no jobtable Python on the
clock: what is left is the database's own cost. Not a test: run by hand,

    bench/run row_costs.py                      # 20,000 jobs a variant, both engines
    bench/run row_costs.py --jobs 5000 --postgres ''
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from jobtable.adapters.sqlite import SqliteStore
from jobtable.core.ids import JobIdGenerator

NOW = datetime.datetime(2026, 12, 1, tzinfo=datetime.UTC)
POSTGRES = os.environ.get("JOBTABLE_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
KINDS = ("mail", "report")

VARIANTS: dict[str, list[str]] = {
    "full schema": [],
    "without jobs_by_status": ["DROP INDEX jobs_by_status"],
    "without jobs_by_kind": ["DROP INDEX jobs_by_kind"],
    "without jobs_by_queue": ["DROP INDEX jobs_by_queue"],
    "without jobs_finished": ["DROP INDEX jobs_finished"],
    "without jobs_running": ["DROP INDEX jobs_running"],
    "without the history trigger": ["DROP TRIGGER jobs_changed{on_jobs}"],
    "without the three list indexes": [
        "DROP INDEX jobs_by_status",
        "DROP INDEX jobs_by_kind",
        "DROP INDEX jobs_by_queue",
    ],
    "without list indexes or history": [
        "DROP INDEX jobs_by_status",
        "DROP INDEX jobs_by_kind",
        "DROP INDEX jobs_by_queue",
        "DROP TRIGGER jobs_changed{on_jobs}",
    ],
}


def job_rows(count: int, stamp: Callable[[datetime.datetime], Any]) -> list[dict[str, Any]]:
    ids = JobIdGenerator()
    now = stamp(NOW)
    return [
        {
            "id": ids.next_id(int(NOW.timestamp() * 1000) + number),
            "kind": KINDS[number % 2],
            "payload": "{}",
            "now": now,
            "max_attempts": 1,
            "retry": None,
            "queue": "default",
            "priority": 0,
            "run_at": now,
            "timeout": None,
            "unique_key": None,
            "unique_while_active": True,
            "key_until": None,
        }
        for number in range(count)
    ]


class Engine:
    """One engine's connection and statements, as the store runs them."""

    name: str
    queries: Any
    conn: Any

    def stamp(self, time: datetime.datetime) -> Any:
        return time

    def names(self, names: tuple[str, ...]) -> Any:
        return sorted(names)

    def run(self, statements: list[str]) -> None:
        for sql in statements:
            self.conn.execute(sql)
        self.commit()

    def commit(self) -> None:
        self.conn.commit()

    def close(self) -> None:
        self.conn.close()


class Sqlite(Engine):
    name = "SQLite"

    def __init__(self, folder: str, synchronous: str) -> None:
        import sqlite3

        from jobtable.adapters.sqlite.engine import QUERIES, stamp

        path = os.path.join(folder, f"costs-{uuid.uuid4().hex[:8]}.db")
        SqliteStore.open(path, now=NOW).close()
        self.queries = QUERIES
        self._stamp = stamp
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute(f"PRAGMA synchronous = {synchronous}")
        self.name = f"SQLite {synchronous.upper()}"

    def stamp(self, time: datetime.datetime) -> Any:
        return self._stamp(time)

    def names(self, names: tuple[str, ...]) -> Any:
        return json.dumps(sorted(names))

    def begin(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("COMMIT")

    def run(self, statements: list[str]) -> None:
        for sql in statements:
            self.conn.execute(sql.format(on_jobs=""))


class Postgres(Engine):
    name = "PostgreSQL"

    def __init__(self, url: str, schema: str) -> None:
        import psycopg

        from jobtable.adapters.postgres import PostgresStore
        from jobtable.adapters.postgres.engine import QUERIES

        PostgresStore.open(url, now=NOW, schema=schema).close()
        self.queries = QUERIES
        self.conn = psycopg.connect(url, options=f"-c search_path={schema}")

    def begin(self) -> None:
        pass  # psycopg opens a transaction at the first statement

    def run(self, statements: list[str]) -> None:
        for sql in statements:
            self.conn.execute(sql.format(on_jobs=" ON jobs"))
        self.conn.commit()


def measure(engine: Engine, jobs: int, batch: int) -> tuple[float, float, float]:
    """Microseconds a job for its insert, its claim and its end, batch by batch."""
    rows = job_rows(jobs, engine.stamp)
    insert, claim, end = (
        engine.queries[name] for name in ("create_job", "claim_next_job", "end_attempt")
    )
    now = engine.stamp(NOW)
    started = time.perf_counter()
    for at in range(0, jobs, batch):
        engine.begin()
        for row in rows[at : at + batch]:
            engine.conn.execute(insert, row)
        engine.commit()
    inserted = time.perf_counter() - started
    claimed = ended = 0.0
    params = {"runner_id": "r", "now": now, "kinds": engine.names(KINDS), "queues": None}
    while True:
        started = time.perf_counter()
        engine.begin()
        got = engine.conn.execute(claim, {**params, "limit": batch}).fetchall()
        engine.commit()
        claimed += time.perf_counter() - started
        if not got:
            return tuple(1e6 * spent / jobs for spent in (inserted, claimed, ended))  # type: ignore[return-value]
        started = time.perf_counter()
        engine.begin()
        for row in got:
            done = {"id": row[0], "runner_id": "r", "attempt": row[3], "status": "succeeded"}
            engine.conn.execute(end, {**done, "result": '{"ok":true}', "code": None, "now": now})
        engine.commit()
        ended += time.perf_counter() - started


@contextlib.contextmanager
def postgres_schema(url: str) -> Iterator[str]:
    import psycopg

    schema = f"bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield schema
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def engines(
    args: argparse.Namespace, folder: str
) -> Iterator[Callable[[], contextlib.AbstractContextManager[Engine]]]:
    @contextlib.contextmanager
    def sqlite(synchronous: str) -> Iterator[Engine]:
        engine = Sqlite(folder, synchronous)
        try:
            yield engine
        finally:
            engine.close()

    @contextlib.contextmanager
    def postgres() -> Iterator[Engine]:
        with postgres_schema(args.postgres) as schema:
            engine = Postgres(args.postgres, schema)
            try:
                yield engine
            finally:
                engine.close()

    yield lambda: sqlite("full")
    yield lambda: sqlite("normal")
    if args.postgres:
        yield postgres


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3, help="median of this many runs")
    parser.add_argument("--postgres", default=POSTGRES, help="'' to skip PostgreSQL")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for make in engines(args, folder):
            name = ""
            print("\n| variant | insert µs/job | claim µs/job | end µs/job | claim + end |")
            print("|---|---:|---:|---:|---:|")
            for variant, drops in VARIANTS.items():
                runs = []
                for _ in range(args.rounds):
                    with make() as engine:
                        name = engine.name
                        engine.run(drops)
                        runs.append(measure(engine, args.jobs, args.batch))
                insert, claim, end = (statistics.median(run[i] for run in runs) for i in range(3))
                print(
                    f"| {variant} | {insert:.0f} | {claim:.0f} | {end:.0f} | {claim + end:.0f} |",
                    flush=True,
                )
            print(
                f"({name}, {args.jobs:,} jobs, batches of {args.batch}, medians of {args.rounds})"
            )


if __name__ == "__main__":
    main()
