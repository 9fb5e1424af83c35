"""What an idle runner costs: CPU, disk writes, database transactions, connections, threads.

Run by hand (never in tests): ``bench/run at_rest.py`` (``--quick`` for short windows).
Each system is started in its own process with its default settings and no jobs, left
to settle, then watched:

- CPU seconds (user + system, the process and its children) over ``--cpu-window`` s;
- bytes written to disk (``write_bytes`` of /proc/PID/io) over ``--write-window`` s,
  SQLite only;
- on PostgreSQL, transactions a second (``xact_commit + xact_rollback`` of
  ``pg_stat_database`` for a database made for the run, which nothing else uses) and the
  connections the process holds (``pg_stat_activity`` for that database), once settled
  and again after ``--write-window`` s (a pool's start-up growth closes after 60 s unused);
- the threads of the process (``Threads`` of /proc/PID/status).

The systems: ``jobtable worker`` and ``jobtable serve`` on SQLite and on PostgreSQL, and
an idle ``huey_consumer -w 2 -k thread`` (SqliteHuey), the peer the issue names.
PostgreSQL is ``JOBTABLE_BENCH_POSTGRES`` (default the shared test server); the run
makes a database of its own there and drops it at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
POSTGRES = os.environ.get("JOBTABLE_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
TICKS = os.sysconf("SC_CLK_TCK")


def tree(pid: int) -> list[int]:
    """``pid`` and its descendants, as /proc shows them now."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = Path(f"/proc/{entry}/stat").read_text()
                parent = int(stat.rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def cpu_seconds(pid: int) -> float:
    total = 0
    for each in tree(pid):
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICKS


def written_bytes(pid: int) -> int:
    total = 0
    for each in tree(pid):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{each}/io").read_text().splitlines():
                if line.startswith("write_bytes:"):
                    total += int(line.split()[1])
    return total


def threads(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return 0


@contextlib.contextmanager
def started(
    command: list[str], env: dict[str, str], settle: float, ready: Callable[[], bool]
) -> Iterator[int]:
    """Start ``command``; once ``ready()`` (its runner registered), let it settle ``settle`` s."""
    process = subprocess.Popen(
        command, env={**os.environ, **env}, cwd=HERE,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not ready():
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{command[0]} exited or never got ready: {process.returncode}")
            time.sleep(0.2)
        time.sleep(settle)  # a benchmark: settling after start-up is a fixed time
        if process.poll() is not None:
            raise SystemExit(f"{command[0]} exited early: {process.returncode}")
        yield process.pid
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


class Postgres:
    """A database of the run's own on the server, and its counters read from another one."""

    def __init__(self, url: str) -> None:
        import psycopg

        self.name = f"at_rest_{uuid.uuid4().hex[:8]}"
        self._admin = psycopg.connect(url, autocommit=True)
        self._admin.execute(f"CREATE DATABASE {self.name}")
        base, _, _ = url.rpartition("/")
        self.url = f"{base}/{self.name}"

    def transactions(self) -> int:
        row = self._admin.execute(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = %s",
            (self.name,),
        ).fetchone()
        return int(row[0]) if row else 0

    def registered(self) -> bool:
        """Whether a runner's row is there: the process is past its start-up."""
        import psycopg

        try:
            with psycopg.connect(self.url, autocommit=True) as conn:
                return bool(conn.execute("SELECT count(*) FROM jobtable_runners").fetchone()[0])
        except psycopg.Error:
            return False

    def connections(self) -> int:
        row = self._admin.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (self.name,)
        ).fetchone()
        return int(row[0]) if row else 0

    def drop(self) -> None:
        self._admin.execute(f"DROP DATABASE IF EXISTS {self.name} WITH (FORCE)")
        self._admin.close()


def sqlite_registered(path: str) -> Callable[[], bool]:
    def registered() -> bool:
        try:
            with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
                return bool(conn.execute("SELECT count(*) FROM jobtable_runners").fetchone()[0])
        except sqlite3.Error:
            return False

    return registered


def file_exists(path: str) -> Callable[[], bool]:
    return lambda: os.path.exists(path)


def measure(
    name: str,
    command: list[str],
    env: dict[str, str],
    args: argparse.Namespace,
    *,
    ready: Callable[[], bool],
    disk: bool,
    postgres: Postgres | None = None,
) -> dict[str, str]:
    row = {"system": name}
    with started(command, env, args.settle, ready) as pid:
        row["threads"] = str(threads(pid))
        if postgres is not None:
            row["connections"] = str(postgres.connections())
            time.sleep(1.5)  # the server publishes a backend's counts about once a second
            before, at = postgres.transactions(), time.monotonic()
        cpu, wrote = cpu_seconds(pid), written_bytes(pid)
        time.sleep(args.cpu_window)
        row["cpu"] = f"{cpu_seconds(pid) - cpu:.2f}"
        if postgres is not None:
            time.sleep(1.5)
            row["tx/s"] = f"{(postgres.transactions() - before) / (time.monotonic() - at):.2f}"
        if disk or postgres is not None:
            time.sleep(max(0.0, args.write_window - args.cpu_window))
        if disk:
            row["written"] = str(written_bytes(pid) - wrote)
        if postgres is not None:  # the pool's start-up growth closes after 60 s unused
            row["connections"] += f" ({postgres.connections()} after {args.write_window:.0f} s)"
    print(row, flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="short windows, to check it works")
    parser.add_argument("--settle", type=float, default=5.0)
    parser.add_argument("--cpu-window", type=float, default=20.0)
    parser.add_argument("--write-window", type=float, default=65.0,
                        help="over a minute: retention's round comes once a minute, and a "
                        "pooled connection unused for a minute closes")  # fmt: skip
    args = parser.parse_args()
    if args.quick:
        args.settle, args.cpu_window, args.write_window = 3.0, 5.0, 6.0
    jobtable = [str(BIN / "jobtable")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="at-rest-") as folder:
        for mode in ("worker", "serve"):
            listen = ["--listen", "127.0.0.1:0"] if mode == "serve" else []
            database = os.path.join(folder, f"{mode}.db")
            rows.append(measure(f"jobtable {mode}, SQLite", [*jobtable, mode,
                                "--database", database, *listen], {}, args,
                                ready=sqlite_registered(database), disk=True))  # fmt: skip
        huey_file = os.path.join(folder, "huey.db")
        huey = [str(BIN / "huey_consumer"), "peer_apps.huey", "-w", "2", "-k", "thread", "-q"]
        rows.append(measure("huey_consumer -w 2 -k thread", huey, {"BENCH_HUEY_FILE": huey_file},
                            args, ready=file_exists(huey_file), disk=True))  # fmt: skip
        for mode in ("worker", "serve"):
            listen = ["--listen", "127.0.0.1:0"] if mode == "serve" else []
            postgres = Postgres(POSTGRES)
            try:
                rows.append(measure(f"jobtable {mode}, PostgreSQL", [*jobtable, mode, "--database",
                                    postgres.url, *listen], {}, args,
                                    ready=postgres.registered, disk=False,
                                    postgres=postgres))  # fmt: skip
            finally:
                postgres.drop()
    columns = ["system", "cpu", "written", "tx/s", "connections", "threads"]
    print(f"\nCPU s over {args.cpu_window:.0f} s; bytes written over {args.write_window:.0f} s\n")
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(row.get(column, "") for column in columns) + " |")


if __name__ == "__main__":
    main()
