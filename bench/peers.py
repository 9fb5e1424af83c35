"""jobtable beside Huey, pgqueuer and procrastinate, as their users run them, in one run.

For every system the same two steps, each timed on its own:

1. **enqueue**: this process stores N no-op jobs through the system's own
   library call, one commit each (jobtable ``kind.enqueue``, Huey calling the
   task, pgqueuer ``Queries.enqueue``, procrastinate ``task.defer``);
2. **drain**: the system's own worker command starts in its own process
   (``jobtable worker --workers 2``, ``huey_consumer -w 2 -k thread``,
   ``PgQueuer.run()`` with pgqueuer's defaults, ``procrastinate worker
   --concurrency 2``) and runs them, while this process counts the jobs still
   unfinished every few milliseconds from the database. The rate is the jobs
   finished between the first count that saw one finish and the count that
   saw none left, over that time: a worker's start-up (imports, connecting)
   is no job's cost, so it is left out for every system alike.

Nothing else runs meanwhile: no drain figure comes from a loop that also
inserts. Every database is new (a file, or a PostgreSQL database of its own)
and dropped after. A drain that does not finish within its deadline stops the
run with an error naming it: a hang is never a rate. Systems are interleaved
round by round (``--rounds``), and each figure is the median of its rounds.

    bench/run peers.py                       # N=5,000, and PostgreSQL from 100,000 deep
    bench/run peers.py --quick               # 500 jobs, no deep run: checks that it works
    bench/run peers.py --workers 8           # jobtable and the peers with 8 at once

Prints a markdown table with the ratios; bench/README.md keeps the latest.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
POSTGRES = os.environ.get("JOBTABLE_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
POLL = 0.005


class Hang(Exception):
    """A drain or an enqueue that did not finish within its deadline."""


# -- databases ----------------------------------------------------------------


@contextlib.contextmanager
def fresh_postgres(url: str) -> Iterator[str]:
    """A new database on the server of ``url``, dropped afterwards."""
    import psycopg

    name = f"bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base, _, _ = url.rpartition("/")
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def postgres_count(url: str, sql: str) -> Callable[[], int]:
    import psycopg

    conn = psycopg.connect(url, autocommit=True)
    return lambda: conn.execute(sql).fetchone()[0]


def sqlite_count(path: str, sql: str) -> Callable[[], int]:
    conn = sqlite3.connect(path, isolation_level=None)
    return lambda: conn.execute(sql).fetchone()[0]


# -- the systems ---------------------------------------------------------------


class System:
    """One system in one mode: how to fill it, start its worker, and count what is left."""

    name = ""
    engine = ""

    def enqueue(self, n: int) -> float | None:
        """Store ``n`` jobs; return the rate when the system timed it itself (else None)."""
        raise NotImplementedError

    def worker(self, workers: int) -> tuple[list[str], dict[str, str]]:
        raise NotImplementedError

    def unfinished(self) -> Callable[[], int]:
        raise NotImplementedError


class JobtableSqlite(System):
    engine = "sqlite"

    def __init__(self, folder: str, synchronous: str, tree: str | None = None) -> None:
        self.name = f"{BEFORE if tree else ''}jobtable, SQLite {synchronous.upper()}"
        self.path = os.path.join(folder, f"jobtable-{uuid.uuid4().hex[:8]}.db")
        self.synchronous = synchronous
        self.tree = tree

    def enqueue(self, n: int) -> float | None:
        return enqueue_jobtable(self.path, n, self.tree, synchronous=self.synchronous)

    def worker(self, workers: int) -> tuple[list[str], dict[str, str]]:
        return [*jobtable_command(self.tree), "worker", "--database", self.path, "--workers",
                str(workers), "--sqlite-synchronous", self.synchronous,
                "--log-level", "warning"], tree_path(self.tree)  # fmt: skip

    def unfinished(self) -> Callable[[], int]:
        return sqlite_count(
            self.path, "SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')"
        )


class JobtablePostgres(System):
    engine = "postgres"

    def __init__(self, url: str, tree: str | None = None) -> None:
        self.name = f"{BEFORE if tree else ''}jobtable, PostgreSQL"
        self.url = url
        self.tree = tree

    def enqueue(self, n: int) -> float | None:
        return enqueue_jobtable(self.url, n, self.tree)

    def worker(self, workers: int) -> tuple[list[str], dict[str, str]]:
        return [*jobtable_command(self.tree), "worker", "--database", self.url, "--workers",
                str(workers), "--log-level", "warning"], tree_path(self.tree)  # fmt: skip

    def unfinished(self) -> Callable[[], int]:
        return postgres_count(
            self.url, "SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')"
        )


BEFORE = "before: "
"""The name's prefix of a system run from the ``--baseline`` checkout."""


def enqueue_jobtable(
    database: str, n: int, tree: str | None, *, synchronous: str = "full"
) -> float:
    """Enqueue in a process of its own (``enqueue_jobtable.py``), from ``tree`` or this checkout."""
    done = subprocess.run(
        [sys.executable, str(HERE / "enqueue_jobtable.py"), database, str(n), synchronous],
        env={**os.environ, **tree_path(tree)}, check=True, capture_output=True, text=True,
    )  # fmt: skip
    return float(done.stdout.split()[-1])


def jobtable_command(tree: str | None) -> list[str]:
    """``jobtable``, as installed here or imported from the checkout ``tree``."""
    if tree is None:
        return [str(BIN / "jobtable")]
    return [sys.executable, "-c", "import sys; from jobtable.entrypoints.cli import main; "
            "sys.exit(main())"]  # fmt: skip


def tree_path(tree: str | None) -> dict[str, str]:
    """The ``PYTHONPATH`` that imports jobtable from ``tree`` ahead of the installed one."""
    return {"PYTHONPATH": tree} if tree else {}


class Huey(System):
    engine = "sqlite"

    def __init__(self, folder: str, synchronous: str) -> None:
        self.name = f"Huey {huey_version()} SqliteHuey, {synchronous.upper()}"
        self.env = {
            "BENCH_HUEY_FILE": os.path.join(folder, f"huey-{uuid.uuid4().hex[:8]}.db"),
            "BENCH_HUEY_FSYNC": "1" if synchronous == "full" else "0",
        }

    def _app(self) -> Any:
        os.environ.update(self.env)
        try:
            import peer_apps

            return importlib.reload(peer_apps)
        finally:
            for key in self.env:
                os.environ.pop(key)

    def enqueue(self, n: int) -> None:
        apps = self._app()
        for _ in range(n):
            apps.noop()
        apps.huey.storage.close()

    def worker(self, workers: int) -> tuple[list[str], dict[str, str]]:
        return [str(BIN / "huey_consumer"), "peer_apps.huey", "-w", str(workers), "-k", "thread",
                "-q"], self.env  # fmt: skip

    def unfinished(self) -> Callable[[], int]:
        total = sqlite_count(self.env["BENCH_HUEY_FILE"], "SELECT count(*) FROM task")
        results = sqlite_count(self.env["BENCH_HUEY_FILE"], "SELECT count(*) FROM kv")
        enqueued = total()
        return lambda: enqueued - results() if enqueued else total()


class Pgqueuer(System):
    engine = "postgres"

    def __init__(self, url: str) -> None:
        self.name = f"pgqueuer {package_version('pgqueuer')} + asyncpg, its defaults"
        self.url = url

    def enqueue(self, n: int) -> None:
        import asyncpg
        from pgqueuer import Queries
        from pgqueuer.db import AsyncpgDriver

        async def fill() -> None:
            connection = await asyncpg.connect(self.url)
            queries = Queries(AsyncpgDriver(connection))
            await queries.install()
            for _ in range(n):
                await queries.enqueue("noop", None)
            await connection.close()

        asyncio.run(fill())

    def worker(self, workers: int) -> tuple[list[str], dict[str, str]]:
        return [sys.executable, str(HERE / "peer_apps.py"), "pgqueuer"], {"BENCH_PG_URL": self.url}

    def unfinished(self) -> Callable[[], int]:
        return postgres_count(
            self.url, "SELECT count(*) FROM pgqueuer WHERE status IN ('queued', 'picked')"
        )


class Procrastinate(System):
    engine = "postgres"

    def __init__(self, url: str) -> None:
        self.name = f"procrastinate {package_version('procrastinate')}"
        self.url = url

    def enqueue(self, n: int) -> None:
        import procrastinate

        app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=self.url))

        @app.task(name="noop")
        async def noop() -> None:
            return None

        with app.open():
            app.schema_manager.apply_schema()
            for _ in range(n):
                noop.defer()

    def worker(self, workers: int) -> tuple[list[str], dict[str, str]]:
        return [str(BIN / "procrastinate"), "--app=peer_apps.procrastinate_app",
                "--log-level", "warning", "worker", "--concurrency", str(workers)], {
            "BENCH_PG_URL": self.url
        }  # fmt: skip

    def unfinished(self) -> Callable[[], int]:
        return postgres_count(
            self.url, "SELECT count(*) FROM procrastinate_jobs WHERE status IN ('todo', 'doing')"
        )


def package_version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


def huey_version() -> str:
    return package_version("huey")


# -- measuring -----------------------------------------------------------------


def measure(system: System, n: int, workers: int, deadline: float) -> tuple[float, float]:
    """Enqueue ``n`` jobs (timed), then drain them in the system's worker (timed)."""
    started = time.perf_counter()
    timed = system.enqueue(n)
    enqueue_rate = timed if timed is not None else n / (time.perf_counter() - started)
    unfinished = system.unfinished()
    if unfinished() != n:
        raise Hang(f"{system.name}: {unfinished()} jobs unfinished after enqueueing {n}")
    argv, env = system.worker(workers)
    worker = subprocess.Popen(
        argv,
        env={
            **os.environ,
            **env,
            "PYTHONPATH": os.pathsep.join(
                filter(None, [env.get("PYTHONPATH"), str(HERE), os.environ.get("PYTHONPATH")])
            ),
        },
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        return enqueue_rate, drain_rate(system.name, n, unfinished, worker, deadline)
    finally:
        stop(worker)


def drain_rate(
    name: str, n: int, unfinished: Callable[[], int], worker: subprocess.Popen, deadline: float
) -> float:
    give_up = time.monotonic() + deadline
    first: tuple[float, int] | None = None
    none_finished = time.perf_counter()  # the last count that saw every job unfinished
    while True:
        left = unfinished()
        now = time.perf_counter()
        if first is None and left < n:
            first = (now, left)
            if left == 0:  # drained between two counts: from the last that saw none finished
                first = (none_finished, n)
        elif first is None:
            none_finished = now
        if left == 0:
            break
        if worker.poll() is not None:
            raise Hang(f"{name}: its worker exited ({worker.returncode}) with {left} jobs left")
        if time.monotonic() > give_up:
            raise Hang(f"{name}: {left} of {n} jobs still unfinished after {deadline:.0f} s")
        time.sleep(POLL)
    assert first is not None
    started, left_then = first
    return left_then / max(now - started, 1e-9)


def stop(worker: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(worker.pid, signal.SIGTERM)
    try:
        worker.wait(15)
    except subprocess.TimeoutExpired:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(5)


# -- the run -------------------------------------------------------------------


def sqlite_systems(folder: str, baseline: str | None) -> list[Callable[[], System]]:
    before: list[Callable[[], System]] = []
    if baseline:
        before = [lambda: JobtableSqlite(folder, "full", baseline),
                  lambda: JobtableSqlite(folder, "normal", baseline)]  # fmt: skip
    return [
        *before[:1],
        lambda: JobtableSqlite(folder, "full"),
        lambda: Huey(folder, "full"),
        *before[1:],
        lambda: JobtableSqlite(folder, "normal"),
        lambda: Huey(folder, "normal"),
    ]


def postgres_systems(baseline: str | None, *, deep: bool) -> list[Callable[[str], System]]:
    peers: list[Callable[[str], System]] = [Pgqueuer] if deep else [Pgqueuer, Procrastinate]
    before: list[Callable[[str], System]] = []
    if baseline:
        before = [lambda url: JobtablePostgres(url, baseline)]
    return [*before, JobtablePostgres, *peers]  # from 100,000 deep: procrastinate would take 10 min


def run(args: argparse.Namespace) -> int:
    results: dict[tuple[str, int], list[tuple[float, float]]] = {}
    order: list[tuple[str, int]] = []

    def note(system: System, n: int, figures: tuple[float, float]) -> None:
        key = (system.name, n)
        if key not in results:
            order.append(key)
        results.setdefault(key, []).append(figures)
        print(f"  {system.name}, {n:,} jobs: enqueue {figures[0]:,.0f}/s, "
              f"drain {figures[1]:,.0f}/s", file=sys.stderr, flush=True)  # fmt: skip

    with tempfile.TemporaryDirectory() as folder:
        for round_number in range(args.rounds):
            print(f"round {round_number + 1} of {args.rounds}", file=sys.stderr, flush=True)
            for make in sqlite_systems(folder, args.baseline):
                system = make()
                if not chosen(system, args):
                    continue
                note(system, args.jobs, measure(system, args.jobs, args.workers, args.deadline))
            if not args.postgres:
                continue
            for size in [args.jobs] + ([args.deep] if args.deep else []):
                for make_pg in postgres_systems(args.baseline, deep=size != args.jobs):
                    with fresh_postgres(args.postgres) as url:
                        system = make_pg(url)
                        if not chosen(system, args):
                            continue
                        note(system, size, measure(system, size, args.workers, args.deadline))
    print_table(results, order, args)
    return 0


def chosen(system: System, args: argparse.Namespace) -> bool:
    return not args.only or any(part in system.name for part in args.only.split(","))


def print_table(
    results: dict[tuple[str, int], list[tuple[float, float]]],
    order: list[tuple[str, int]],
    args: argparse.Namespace,
) -> None:
    medians = {
        key: (
            statistics.median(figure[0] for figure in runs),
            statistics.median(figure[1] for figure in runs),
        )
        for key, runs in results.items()
    }
    print(f"\n{args.workers} workers (or concurrency) each; median of {args.rounds} round(s)\n")
    print("| system | jobs | enqueue, one commit each | drain | drain vs jobtable |")
    print("|---|---:|---:|---:|---:|")
    for name, n in order:
        enqueue, drain = medians[(name, n)]
        ours = next(
            (medians[key] for key in order if key[0].startswith("jobtable") and key[1] == n
             and same_engine(key[0], name)),
            None,
        )  # fmt: skip
        ratio = "" if ours is None or name.startswith("jobtable") else f"{ours[1] / drain:.2f}x"
        print(f"| {name} | {n:,} | {enqueue:,.0f}/s | {drain:,.0f}/s | {ratio} |")
    print("\nratios are jobtable's drain over the peer's, same engine, mode and depth;")
    print("enqueue ratios:")
    for name, n in order:
        if name.startswith("jobtable"):
            continue
        ours = next(
            (medians[key] for key in order if key[0].startswith("jobtable") and key[1] == n
             and same_engine(key[0], name)),
            None,
        )  # fmt: skip
        if ours is not None:
            print(f"- {name}, {n:,}: jobtable {ours[0] / medians[(name, n)][0]:.2f}x")


def same_engine(ours: str, peer: str) -> bool:
    """jobtable's row that a peer's is compared with: the same engine and SQLite mode."""
    for mode in ("FULL", "NORMAL"):
        if peer.endswith(mode):
            return ours.endswith(mode)
    return "PostgreSQL" in ours


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=5000)
    parser.add_argument("--deep", type=int, default=100_000,
                        help="PostgreSQL drain from this deep too (0: no deep run)")  # fmt: skip
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--postgres", default=POSTGRES, help="'' to skip PostgreSQL")
    parser.add_argument("--deadline", type=float, default=600.0,
                        help="seconds a drain may take before the run stops as hung")  # fmt: skip
    parser.add_argument("--only", default="",
                        help="run only systems whose name holds one of these, comma-separated")  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="500 jobs, no deep run")
    parser.add_argument("--baseline", default="",
                        help="a checkout of an earlier jobtable, run beside this one as 'before: '")  # fmt: skip
    args = parser.parse_args()
    if args.quick:
        args.jobs, args.deep, args.deadline = 500, 0, 120.0
    try:
        return run(args)
    except Hang as hang:
        print(f"HUNG: {hang}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
