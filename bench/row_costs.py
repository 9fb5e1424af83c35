"""What each index and the history trigger cost a job's row, on both engines.

A job's life on the hot path is three writes of its row: the insert, the claim
(queued -> running) and its end (running -> succeeded). This times each of the
three with jobtable's own statements (the store's query files; inserts and ends
one statement a row, claims one statement a batch of ``--batch``, each batch one
transaction, as a runner's batch is) on the full schema, then on the same schema
with one index or the history trigger taken away, so each one's share shows as
the difference; once on the schema as it is now and once as it was before
migration 0010 (issue 19's). Rounds are interleaved and the best of them is shown.

What is timed is the database's own work, never jobtable's Python: on SQLite this
process's CPU time around each batch (SQLite runs in it; CPU time is what the
other work on a shared machine disturbs least), on PostgreSQL the server's
execution time of each statement, its triggers included (``EXPLAIN ANALYZE``),
without the round trips and the commit. Not a test: run by hand,

    bench/run row_costs.py                                # both engines, both schemas
    bench/run row_costs.py --engines sqlite --jobs 20000
    bench/run row_costs.py --schemas now --only 'full schema'
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib.resources
import json
import os
import re
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


def _old(engine: str, number: str, starts: tuple[str, ...]) -> str:
    """The statements of an earlier migration that begin with one of ``starts``."""
    folder = importlib.resources.files("jobtable.migrations").joinpath(engine)
    (text,) = [f.read_text("utf-8") for f in folder.iterdir() if f.name.startswith(number)]
    parts = re.split(r";\n(?=\n|CREATE|DROP|ALTER|--)", text) if engine == "postgres" else None
    if parts is None:
        from jobtable.adapters.sqlite.migrate import split_statements

        parts = split_statements(text)
    bare = ["\n".join(ln for ln in p.splitlines() if not ln.startswith("--")) for p in parts]
    return ";\n".join(p.strip().rstrip(";") for p in bare if p.strip().startswith(starts)) + ";"


LIST_INDEXES = ("jobs_by_status", "jobs_by_kind", "jobs_by_queue")


def before_0010(engine: str) -> list[str]:
    """Statements that take a migrated schema back to what it was before 0010 (issue 19)."""
    drops = [f"DROP INDEX {name}" for name in (*LIST_INDEXES, "jobs_running")]
    indexes = [_old(engine, "0005", tuple(f"CREATE INDEX {n} " for n in LIST_INDEXES))]
    running = "CREATE INDEX jobs_running ON jobs (claimed_by) WHERE status = 'running'"
    if engine == "sqlite":
        history = [
            "DROP TRIGGER jobs_changed",
            "DROP TRIGGER job_events_trimmed",
            _old("sqlite", "0005", ("CREATE TRIGGER jobs_changed",)),
        ]
    else:
        history = [
            "DROP TRIGGER jobs_changed ON jobs",
            "DROP FUNCTION IF EXISTS jobtable_job_changed()",
            "DROP FUNCTION IF EXISTS jobtable_jobs_changed()",
            _old("postgres", "0006", ("CREATE FUNCTION", "CREATE TRIGGER")),
        ]
    return [*drops, *indexes, running, *history]


ROW_TRIGGER = """
DROP TRIGGER jobs_changed ON jobs;
CREATE FUNCTION jobtable_job_changed() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    added integer;
BEGIN
    INSERT INTO job_events (job_id, version, status, result, error)
    SELECT NEW.id, coalesce(max(version), 0) + 1,
           CASE NEW.status WHEN 'scheduled' THEN 'queued' ELSE NEW.status END,
           NEW.result, NEW.error
    FROM job_events WHERE job_id = NEW.id
    RETURNING version INTO added;
    IF added > 1000 THEN
        DELETE FROM job_events WHERE job_id = NEW.id AND version <= added - 1000;
    END IF;
    PERFORM pg_notify(left('jobtable_events_' || TG_TABLE_SCHEMA, 63), NEW.id);
    RETURN NULL;
END
$$;
CREATE TRIGGER jobs_changed AFTER UPDATE OF status, result, error ON jobs
FOR EACH ROW
WHEN ((CASE OLD.status WHEN 'scheduled' THEN 'queued' ELSE OLD.status END)
          IS DISTINCT FROM (CASE NEW.status WHEN 'scheduled' THEN 'queued' ELSE NEW.status END)
      OR OLD.result IS DISTINCT FROM NEW.result
      OR OLD.error IS DISTINCT FROM NEW.error)
EXECUTE FUNCTION jobtable_job_changed();
"""
"""0005's row trigger, without its second search for the newest number: the alternative
to a statement's trigger, for a statement that changes one row."""


def variants(engine: str, schema: str) -> dict[str, list[str]]:
    """Each variant: the statements that make it from the migrated schema."""
    base = before_0010(engine) if schema == "before" else []
    drop_trigger = "DROP TRIGGER jobs_changed" + (" ON jobs" if engine == "postgres" else "")
    droppable = (
        *LIST_INDEXES,
        "jobs_running",
        "jobs_finished",
        "jobs_scheduled",
        "jobs_held",
    )
    made = {f"{schema}: full schema": base}
    for name in droppable:
        made[f"{schema}: without {name}"] = [*base, f"DROP INDEX {name}"]
    made[f"{schema}: without the history trigger"] = [*base, drop_trigger]
    made[f"{schema}: without the three list indexes"] = [
        *base,
        *(f"DROP INDEX {name}" for name in LIST_INDEXES),
    ]
    made[f"{schema}: without list indexes or history"] = [
        *made[f"{schema}: without the three list indexes"][len(base) :],
        drop_trigger,
    ]
    made[f"{schema}: without list indexes or history"][:0] = base
    if engine == "postgres":
        made[f"{schema}: a row trigger for history"] = [*base, ROW_TRIGGER]
    return made


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
    engine = "sqlite"

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

    def each(self, sql: str, rows: list[dict[str, Any]]) -> float:
        """One statement a row, in one transaction: this process's CPU seconds."""
        started = time.process_time()
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.executemany(sql, rows)
        self.conn.execute("COMMIT")
        return time.process_time() - started

    def claim(self, sql: str, params: dict[str, Any]) -> tuple[float, list[tuple[str, int]]]:
        started = time.process_time()
        self.conn.execute("BEGIN IMMEDIATE")
        got = self.conn.execute(sql, params).fetchall()
        self.conn.execute("COMMIT")
        return time.process_time() - started, [(row[0], row[3]) for row in got]

    def run(self, statements: list[str]) -> None:
        for sql in statements:
            self.conn.executescript(sql)


class Postgres(Engine):
    name = "PostgreSQL"
    engine = "postgres"

    def __init__(self, url: str, schema: str) -> None:
        import psycopg

        from jobtable.adapters.postgres import PostgresStore
        from jobtable.adapters.postgres.engine import QUERIES

        PostgresStore.open(url, now=NOW, schema=schema).close()
        self.queries = QUERIES
        self.conn = psycopg.connect(url, options=f"-c search_path={schema}")

    def timed(self, sql: str, params: dict[str, Any]) -> float:
        """The server's execution time of one statement, its triggers included, in seconds."""
        plan = self.conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params).fetchone()
        return float(plan[0][0]["Execution Time"]) / 1000

    def each(self, sql: str, rows: list[dict[str, Any]]) -> float:
        spent = sum(self.timed(sql, row) for row in rows)
        self.conn.commit()
        return spent

    def claim(self, sql: str, params: dict[str, Any]) -> tuple[float, list[tuple[str, int]]]:
        spent = self.timed(sql, params)
        got = self.conn.execute(
            "SELECT id, attempt FROM jobs WHERE status = 'running' AND claimed_by = 'r'"
        ).fetchall()
        self.conn.commit()
        return spent, got

    def run(self, statements: list[str]) -> None:
        for sql in statements:
            self.conn.execute(sql.encode())  # several statements, no parameters
        self.conn.commit()


def measure(engine: Engine, jobs: int, batch: int) -> tuple[float, float, float]:
    """Microseconds a job for its insert, its claim and its end, batch by batch."""
    rows = job_rows(jobs, engine.stamp)
    insert, claim, end = (
        engine.queries[name] for name in ("create_job", "claim_next_job", "end_attempt")
    )
    now = engine.stamp(NOW)
    inserted = claimed = ended = 0.0
    for at in range(0, jobs, batch):
        inserted += engine.each(insert, rows[at : at + batch])
    params = {"runner_id": "r", "now": now, "kinds": engine.names(KINDS), "queues": None}
    while True:
        spent, got = engine.claim(claim, {**params, "limit": batch})
        claimed += spent
        if not got:
            return tuple(1e6 * spent / jobs for spent in (inserted, claimed, ended))  # type: ignore[return-value]
        ends = [
            {"id": job_id, "runner_id": "r", "attempt": attempt, "status": "succeeded",
             "result": '{"ok":true}', "code": None, "now": now}
            for job_id, attempt in got
        ]  # fmt: skip
        ended += engine.each(end, ends)


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
    def sqlite() -> Iterator[Engine]:
        engine = Sqlite(folder, args.synchronous)
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

    if "sqlite" in args.engines:
        yield sqlite
    if "postgres" in args.engines and args.postgres:
        yield postgres


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=5_000)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5, help="best of this many runs")
    parser.add_argument("--postgres", default=POSTGRES, help="'' to skip PostgreSQL")
    parser.add_argument("--engines", default="sqlite,postgres")
    parser.add_argument("--synchronous", default="normal", help="SQLite's: normal or full")
    parser.add_argument("--schemas", default="before,now", help="before: issue 19's (to 0009)")
    parser.add_argument("--only", default="", help="variants whose name holds this text")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for make in engines(args, folder):
            with make() as engine:
                name, kind = engine.name, engine.engine
            chosen = {
                variant: statements
                for schema in args.schemas.split(",")
                for variant, statements in variants(kind, schema).items()
                if args.only in variant
            }
            runs: dict[str, list[tuple[float, float, float]]] = {v: [] for v in chosen}
            for _ in range(args.rounds):  # interleaved: a slow moment spreads over all
                for variant, statements in chosen.items():
                    with make() as engine:
                        engine.run(statements)
                        runs[variant].append(measure(engine, args.jobs, args.batch))
            print(f"\n{name}: {args.jobs:,} jobs, batches of {args.batch}, best of {args.rounds}")
            print("\n| variant | insert µs/job | claim µs/job | end µs/job | claim + end |")
            print("|---|---:|---:|---:|---:|")
            for variant, measured in runs.items():
                insert, claim, end = (min(run[i] for run in measured) for i in range(3))
                both = min(run[1] + run[2] for run in measured)
                print(f"| {variant} | {insert:.1f} | {claim:.1f} | {end:.1f} | {both:.1f} |")


if __name__ == "__main__":
    main()
