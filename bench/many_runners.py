"""Many runners on one PostgreSQL: what each worker process costs the database, idle and busy.

A private PostgreSQL cluster of its own (``tests/support/pg_cluster.py``:
``initdb`` in a temp folder, its own loopback port, ``max_connections`` 300,
fsync on; the machine's shared server on 5432 is never touched), and on it,
one shape at a time, each on a new database:

- ``separate``: ``--runners`` (20) ``jobtable worker --workers 1`` processes;
- ``one``: one ``jobtable worker --workers 20`` process (the same total workers);
- ``supervised``: one ``jobtable worker --processes 20 --workers 1``.

For each shape, once every runner has registered and settled:

1. **idle**: ``--idle`` seconds (20) with nothing to do: the database's
   transactions (``pg_stat_database`` ``xact_commit + xact_rollback`` of the
   shape's database) a second, per runner process; the connections held
   (``pg_stat_activity`` on that database); the CPU of every postgres process
   of the cluster (utime+stime from ``/proc``; the postmaster's reaped
   children included) and of the worker processes;
2. **drain**: ``--jobs`` noop jobs enqueued in one transaction; the rate from
   its commit until none is left unfinished; the transactions per finished
   job (the shape's, less this benchmark's own polling, less the idle rate
   over the seconds waited after the drain for the server's statistics, which
   a backend sends at most once a second); the database's and the workers'
   CPU per 1,000 jobs.

    bench/run many_runners.py                     # 20 runners, 20,000 jobs, 20 s idle
    bench/run many_runners.py --quick             # 4 runners, 1,000 jobs, 5 s idle: < 1 min
    bench/run many_runners.py --shapes separate,one --runners 20 --jobs 20000

Prints a markdown table; bench/README.md keeps the latest, with what a team
running 500 workers would plan with.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
JOBTABLE = str(Path(sys.executable).with_name("jobtable"))
SHAPES = ("separate", "one", "supervised")
POLL = 0.1
"""Between two counts of the jobs left during a drain (each is one transaction, subtracted)."""
STATS_DELAY = 2.5
"""Seconds a backend may keep its transaction counts before sending them (at most 1 s apart)."""
SETTLE = 3.0
"""Seconds after every runner registered before the idle measure starts."""
HZ = os.sysconf("SC_CLK_TCK")

from tests.support.pg_cluster import PrivateCluster, temp_folder  # noqa: E402

SERVER = {"max_connections": "300", "fsync": "on", "full_page_writes": "on",
          "shared_buffers": "128MB"}  # fmt: skip
"""On top of the test cluster's settings: room for 20+ runners, and a production's disk writes."""


# -- what the machine says ---------------------------------------------------------


def ticks(pid: int, *, reaped: bool = False) -> int:
    """A process's CPU in clock ticks (utime+stime; with ``reaped``, its waited-for children's)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0
    own = int(fields[11]) + int(fields[12])
    return own + (int(fields[13]) + int(fields[14]) if reaped else 0)


def children_of() -> dict[int, list[int]]:
    """Every live process's children, by parent pid."""
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        tree.setdefault(int(fields[1]), []).append(int(entry))
    return tree


def tree_seconds(roots: list[int]) -> float:
    """CPU seconds of ``roots`` and every descendant alive now, plus the reaped ones'."""
    tree = children_of()
    total, stack = 0, list(roots)
    while stack:
        pid = stack.pop()
        total += ticks(pid, reaped=True)
        stack.extend(tree.get(pid, []))
    return total / HZ


def postmaster_pid(cluster: PrivateCluster) -> int:
    return int((cluster.data / "postmaster.pid").read_text().split()[0])


# -- the server's counts -------------------------------------------------------------


@attrs.frozen
class Reading:
    at: float
    transactions: int
    postgres_cpu: float
    workers_cpu: float


class Monitor:
    """Two connections: statistics read from the ``postgres`` database (not counted in the
    shape's), and the jobs left counted in the shape's database (each count subtracted)."""

    def __init__(self, cluster: PrivateCluster, database: str, workers: list[int]) -> None:
        self.cluster = cluster
        self.database = database
        self.workers = workers
        self.postmaster = postmaster_pid(cluster)
        self.stats = cluster.connect("postgres")
        self.jobs = cluster.connect(database)
        self.own_transactions = 0
        self.own_pid = self.jobs.execute("SELECT pg_backend_pid()").fetchone()[0]

    def reading(self) -> Reading:
        (transactions,) = self.stats.execute(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = %s",
            (self.database,),
        ).fetchone()
        return Reading(
            at=time.monotonic(),
            transactions=int(transactions),
            postgres_cpu=tree_seconds([self.postmaster]),
            workers_cpu=tree_seconds(self.workers),
        )

    def unfinished(self) -> int:
        self.own_transactions += 1
        return int(
            self.jobs.execute(
                "SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')"
            ).fetchone()[0]
        )

    def connections(self) -> int:
        """Connections to the shape's database, ours left out."""
        return int(
            self.stats.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> %s",
                (self.database, self.own_pid),
            ).fetchone()[0]
        )

    def runners(self) -> int:
        self.own_transactions += 1
        with contextlib.suppress(Exception):  # the table is made by the first runner's migration
            return int(self.jobs.execute("SELECT count(*) FROM jobtable_runners").fetchone()[0])
        return 0

    def close(self) -> None:
        self.stats.close()
        self.jobs.close()


# -- one shape -----------------------------------------------------------------------


@attrs.frozen
class Figures:
    shape: str
    processes: int
    workers: int
    connections: int
    idle_per_process: float
    idle_postgres_cpu: float
    idle_workers_cpu: float
    drain: float
    per_job: float
    postgres_cpu_per_1000: float
    workers_cpu_per_1000: float


def commands(shape: str, url: str, runners: int) -> list[list[str]]:
    base = [JOBTABLE, "worker", "--database", url, "--log-level", "warning"]
    if shape == "separate":
        return [[*base, "--workers", "1"] for _ in range(runners)]
    if shape == "one":
        return [[*base, "--workers", str(runners)]]
    return [[*base, "--processes", str(runners), "--workers", "1"]]


@contextlib.contextmanager
def started(argvs: list[list[str]]) -> Iterator[list[subprocess.Popen[bytes]]]:
    """The worker processes, each in a session of its own, stopped (SIGTERM, then KILL) after."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PG")}
    processes = [
        subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, start_new_session=True)
        for argv in argvs
    ]
    try:
        yield processes
    finally:
        for process in processes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)


def wait_for(condition: Any, timeout: float, what: str, processes: list[Any]) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        for process in processes:
            if process.poll() is not None:
                raise SystemExit(f"a worker exited ({process.returncode}) {what}")
        if time.monotonic() > deadline:
            raise SystemExit(f"gave up after {timeout:.0f} s waiting until {what}")
        time.sleep(POLL)


def measure(cluster: PrivateCluster, shape: str, args: argparse.Namespace) -> Figures:
    from jobtable.adapters.system_clock import SystemClock
    from jobtable.core import NoopPayload, Runner
    from jobtable.entrypoints.wiring import open_store

    database = f"many_{shape}_{uuid.uuid4().hex[:6]}"
    with cluster.connect() as conn:
        conn.execute(f'CREATE DATABASE "{database}"')
    url = cluster.url_for(database)
    clock = SystemClock()
    open_store(url, synchronous="full", now=clock.now()).close()  # migrated before any runner
    argvs = commands(shape, url, args.runners)
    processes_count = args.runners if shape != "one" else 1
    print(f"{shape}: {len(argvs)} command(s), {processes_count} runner process(es)",
          file=sys.stderr, flush=True)  # fmt: skip
    try:
        with started(argvs) as processes:
            monitor = Monitor(cluster, database, [process.pid for process in processes])
            try:
                wait_for(lambda: monitor.runners() >= processes_count, 120,
                         "every runner registered", processes)  # fmt: skip
                time.sleep(SETTLE)  # start-up's own transactions reach the statistics
                connections = monitor.connections()
                start = monitor.reading()
                own_before = monitor.own_transactions
                time.sleep(args.idle)
                end = monitor.reading()
                idle_seconds = end.at - start.at
                idle_rate = (end.transactions - start.transactions
                             - (monitor.own_transactions - own_before)) / idle_seconds  # fmt: skip

                store = open_store(url, synchronous="full", now=clock.now())
                Runner(store, clock).builtins.noop.enqueue_many([NoopPayload()] * args.jobs)
                store.close()  # its connections are not the runners'
                drain_start = monitor.reading()
                own_before = monitor.own_transactions
                wait_for(lambda: monitor.unfinished() == 0, args.deadline,
                         f"{args.jobs} jobs were drained", processes)  # fmt: skip
                drained = monitor.reading()
                time.sleep(STATS_DELAY)
                after = monitor.reading()
                transactions = (after.transactions - drain_start.transactions
                                - (monitor.own_transactions - own_before)
                                - idle_rate * (after.at - drained.at))  # fmt: skip
                per_1000 = 1000 / args.jobs
                return Figures(
                    shape=shape,
                    processes=processes_count,
                    workers=args.runners,
                    connections=connections,
                    idle_per_process=idle_rate / processes_count,
                    idle_postgres_cpu=100 * (end.postgres_cpu - start.postgres_cpu) / idle_seconds,
                    idle_workers_cpu=100 * (end.workers_cpu - start.workers_cpu) / idle_seconds,
                    drain=args.jobs / (drained.at - drain_start.at),
                    per_job=transactions / args.jobs,
                    postgres_cpu_per_1000=(drained.postgres_cpu - drain_start.postgres_cpu)
                    * per_1000,
                    workers_cpu_per_1000=(drained.workers_cpu - drain_start.workers_cpu) * per_1000,
                )
            finally:
                monitor.close()
    finally:
        with cluster.connect() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


# -- the run -------------------------------------------------------------------------


@contextlib.contextmanager
def private_server() -> Iterator[PrivateCluster]:
    with temp_folder("pgmany-") as folder, PrivateCluster.create(folder / "primary") as cluster:
        with cluster.connect() as conn:
            for name, value in SERVER.items():
                conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
        cluster.restart()
        yield cluster


def print_table(rows: list[Figures], args: argparse.Namespace) -> None:
    print(f"\n{args.jobs:,} noop jobs; idle {args.idle:.0f} s; {args.runners} workers in all; "
          "PostgreSQL 15, private cluster, fsync on\n")  # fmt: skip
    print("| shape | processes | connections held | idle transactions/s per process "
          "| idle CPU: postgres, workers | drain | transactions per job "
          "| CPU s per 1,000 jobs: postgres, workers |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(f"| {row.shape} | {row.processes} | {row.connections} "
              f"| {row.idle_per_process:.2f} "
              f"| {row.idle_postgres_cpu:.1f}%, {row.idle_workers_cpu:.1f}% "
              f"| {row.drain:,.0f}/s | {row.per_job:.2f} "
              f"| {row.postgres_cpu_per_1000:.2f}, {row.workers_cpu_per_1000:.2f} |")  # fmt: skip
    print("\nper runner process, for planning (500 workers as 500 processes of --workers 1):")
    for row in rows:
        if row.processes == 1:
            continue
        per_connection = row.connections / row.processes
        print(f"- {row.shape}: {per_connection:.1f} connections and "
              f"{row.idle_per_process:.2f} idle transactions/s a process: 500 of them hold "
              f"{500 * per_connection:,.0f} connections and make "
              f"{500 * row.idle_per_process:,.0f} transactions/s doing nothing; "
              f"{row.per_job:.2f} transactions a finished job")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runners", type=int, default=20, help="processes (and total workers)")
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--idle", type=float, default=20.0, help="seconds measured idle")
    parser.add_argument("--shapes", default=",".join(SHAPES), help=", ".join(SHAPES))
    parser.add_argument("--deadline", type=float, default=600.0, help="seconds a drain may take")
    parser.add_argument("--quick", action="store_true",
                        help="4 runners, 1,000 jobs, 5 s idle, separate and one")  # fmt: skip
    args = parser.parse_args()
    if args.quick:
        args.runners, args.jobs, args.idle, args.shapes = 4, 1000, 5.0, "separate,one"
    shapes = [shape for shape in args.shapes.split(",") if shape]
    unknown = set(shapes) - set(SHAPES)
    if unknown:
        parser.error(f"unknown shapes: {', '.join(sorted(unknown))}")
    with private_server() as cluster:
        rows = [measure(cluster, shape, args) for shape in shapes]
    print_table(rows, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
