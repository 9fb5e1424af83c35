"""Pickup across processes: from an enqueue's commit here to its handler starting in a worker.

For each engine (SQLite at synchronous FULL and NORMAL, PostgreSQL), a fresh
database, one idle ``jobtable worker`` process (2 workers, ``probe_kinds``)
and this process enqueuing one job at a time: the handler stamps the wall
clock when it starts (``probe_kinds.Started``); the pickup is that stamp less
the moment ``enqueue`` returned here. Between two pickups this process waits
for the job to finish, then ``--gap`` seconds more, so each pickup finds the
worker idle, as a real one does.

Reports p50 / p99 / max and how many pickups took over 50 ms, and, with
``--slowest``, when the slow ones happened (seconds since the first, and the
wall clock), to set beside a trace of the worker's fsyncs (``--strace FILE``
runs it under ``strace --seccomp-bpf -f -tt -T -y -e trace=fsync,fdatasync``).

    bench/run pickup.py                      # 1,000 pickups on each engine
    bench/run pickup.py --quick              # 100 on each: checks that it works
    bench/run pickup.py --only sqlite-full --pickups 1000 --slowest 10

Run with nothing else busy on the machine: a pickup is a few milliseconds,
and any other process's burst of CPU or disk shows in the tail.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from jobtable.adapters.system_clock import SystemClock
from jobtable.core import Runner
from jobtable.entrypoints.wiring import open_store

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
JOBTABLE = str(Path(sys.executable).with_name("jobtable"))
POSTGRES = os.environ.get("JOBTABLE_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
CLOCK = SystemClock()
SLOW = 0.050
"""A pickup over this is counted: the target allows none in 1,000 at SQLite FULL."""
ENGINES = ("sqlite-full", "sqlite-normal", "postgres")

sys.path.insert(0, str(HERE))
from probe_kinds import Stamp  # noqa: E402
from probe_kinds import register as register_probe  # noqa: E402


@contextmanager
def fresh_database(engine: str, folder: str, postgres: str) -> Iterator[str]:
    """A new SQLite file, or a new schema on the PostgreSQL server (dropped after)."""
    if engine.startswith("sqlite"):
        yield os.path.join(folder, f"pickup-{uuid.uuid4().hex[:8]}.db")
        return
    import psycopg

    schema = f"bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield f"{postgres}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(postgres, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def synchronous_of(engine: str) -> str:
    return engine.split("-")[1] if engine.startswith("sqlite") else "full"


def start_worker(database: str, synchronous: str, trace: str) -> subprocess.Popen[bytes]:
    """The worker; under ``strace`` (its fsyncs, timed, to the file ``trace``) when given one."""
    traced = ["strace", "--seccomp-bpf", "-f", "-tt", "-T", "-y",
              "-e", "trace=fsync,fdatasync", "-o", trace]  # fmt: skip
    return subprocess.Popen(
        [*(traced if trace else []), JOBTABLE, "worker", "--database", database, "--kinds", os.environ.get("BENCH_KINDS", "probe_kinds"),
         "--sqlite-synchronous", synchronous, "--log-level", "warning"],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), str(REPO), os.environ.get("PYTHONPATH")]))},
    )  # fmt: skip


def pickups(
    database: str, synchronous: str, n: int, gap: float, trace: str = ""
) -> list[tuple[float, float]]:
    """``n`` pickups as (wall-clock time of the enqueue, pickup seconds)."""
    store = open_store(database, synchronous=synchronous, now=CLOCK.now())
    runner = Runner(store, CLOCK)
    probes = register_probe(runner.kinds)
    worker = start_worker(database, synchronous, trace)
    print(f"  worker pid {worker.pid}", file=sys.stderr, flush=True)
    try:
        warm = probes.enqueue(Stamp())
        wait_finished(store, warm, worker)
        measured = []
        for _ in range(n):
            job_id = probes.enqueue(Stamp())
            returned = time.time()
            job = wait_finished(store, job_id, worker)
            measured.append((returned, (job.result or {})["at"] - returned))
            time.sleep(gap)
        return measured
    finally:
        stop(worker)
        store.close()


def stop(worker: subprocess.Popen[bytes]) -> None:
    """SIGTERM the worker (under ``strace``, strace's child: strace would only detach)."""
    children = Path(f"/proc/{worker.pid}/task/{worker.pid}/children")
    traced = children.exists() and children.read_text().split()
    for pid in traced or [str(worker.pid)]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid), signal.SIGTERM)
    worker.wait(30)


def wait_finished(store: object, job_id: str, worker: subprocess.Popen[bytes]) -> object:
    deadline = time.monotonic() + 60
    while True:
        job = store.get(job_id)  # type: ignore[attr-defined]
        if job is not None and job.status.finished:
            return job
        if worker.poll() is not None:
            raise SystemExit(f"the worker exited ({worker.returncode})")
        if time.monotonic() > deadline:
            raise SystemExit(f"job {job_id} not finished within 60 s: a hang")
        time.sleep(0.002)


def summary(measured: list[tuple[float, float]]) -> tuple[str, str, str, str]:
    ms = sorted(pickup * 1000 for _, pickup in measured)
    cut = statistics.quantiles(ms, n=100, method="inclusive")
    over = sum(1 for value in ms if value > SLOW * 1000)
    return f"{cut[49]:.2f}", f"{cut[98]:.2f}", f"{ms[-1]:.1f}", f"{over}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pickups", type=int, default=1000)
    parser.add_argument("--gap", type=float, default=0.02, help="seconds idle between pickups")
    parser.add_argument("--postgres", default=POSTGRES, help="'' to skip PostgreSQL")
    parser.add_argument("--only", default="", help=f"comma-separated, of {', '.join(ENGINES)}")
    parser.add_argument("--slowest", type=int, default=0, help="list the slowest N pickups")
    parser.add_argument("--strace", default="", help="trace the worker's fsyncs to this file")
    parser.add_argument("--quick", action="store_true", help="100 pickups on each engine")
    args = parser.parse_args()
    if args.quick:
        args.pickups = 100
    engines = [e for e in ENGINES if not args.only or e in args.only.split(",")]
    if not args.postgres:
        engines = [e for e in engines if e != "postgres"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="jobtable-pickup-") as folder:
        for engine in engines:
            print(f"{engine}: {args.pickups} pickups", file=sys.stderr, flush=True)
            with fresh_database(engine, folder, args.postgres) as database:
                measured = pickups(
                    database, synchronous_of(engine), args.pickups, args.gap, args.strace
                )
            rows.append((engine, *summary(measured)))
            first = measured[0][0]
            for at, pickup in sorted(measured, key=lambda m: -m[1])[: args.slowest]:
                clock = time.strftime("%H:%M:%S", time.localtime(at)) + f"{at % 1:.3f}"[1:]
                print(f"  slow: {pickup * 1000:.1f} ms at {at - first:.2f} s ({clock})",
                      file=sys.stderr)  # fmt: skip
    print(f"\n{args.pickups} pickups each, across processes, {args.gap * 1000:.0f} ms apart\n")
    print("| engine | p50 ms | p99 ms | max ms | over 50 ms |")
    print("|---|---:|---:|---:|---:|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
