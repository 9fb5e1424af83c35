"""PostgreSQL and cross-process figures: drain, pickup in one process and across processes.

Runs jobtable on SQLite and PostgreSQL (``--postgres URL``, default the
local test server) and, when installed in bench/.venv, procrastinate and
pgqueuer on the same PostgreSQL server. Run by hand: ``bench/run process_bench.py``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from jobtable.adapters.system_clock import SystemClock
from jobtable.core import JobContext, NoopPayload, NoopResult, Runner
from jobtable.entrypoints.wiring import open_store

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
JOBTABLE = str(Path(sys.executable).with_name("jobtable"))
CLOCK = SystemClock()
sys.path.insert(0, str(HERE))

from peers_postgres import pgqueuer_drain, procrastinate_drain  # noqa: E402
from probe_kinds import Stamp  # noqa: E402
from probe_kinds import register as register_probe  # noqa: E402
from queue_bench import CountingStore  # noqa: E402


def fresh_postgres(url: str) -> str:
    import psycopg

    schema = f"bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    return f"{url}?options=-csearch_path%3D{schema}"


def percentiles(values: list[float]) -> str:
    ms = sorted(v * 1000 for v in values)
    cut = statistics.quantiles(ms, n=100, method="inclusive")
    return f"{cut[49]:.2f} / {cut[94]:.2f} / {cut[98]:.2f}"


def drain_rate(database: str, n: int) -> float:
    inner = open_store(database, synchronous="normal", now=CLOCK.now())
    runner = Runner(inner, CLOCK)
    for _ in range(n):
        runner.builtins.noop.enqueue(NoopPayload())
    store = CountingStore(inner, n)
    runner = Runner(store, CLOCK, workers=2)
    started = time.perf_counter()
    runner.start()
    store.done.wait(600)
    elapsed = time.perf_counter() - started
    runner.stop()
    runner.join(30)
    inner.close()
    return n / elapsed


def pickup_in_process(database: str, n: int) -> list[float]:
    store = open_store(database, synchronous="normal", now=CLOCK.now())
    runner = Runner(store, CLOCK, workers=2)
    stamps: list[float] = []
    ran = threading.Semaphore(0)

    def probe(ctx: JobContext, payload: NoopPayload) -> NoopResult:
        stamps.append(time.perf_counter())
        ran.release()
        return NoopResult()

    kind = runner.kinds.register("inproc", probe, payload=NoopPayload)
    watcher = store.watch(runner.notice_jobs_from_elsewhere)
    runner.start()
    latencies = []
    for _ in range(n):
        kind.enqueue(NoopPayload())
        returned = time.perf_counter()
        ran.acquire(timeout=30)
        latencies.append(stamps[-1] - returned)
    watcher.stop()
    runner.stop()
    runner.join(30)
    store.close()
    return latencies


def start_worker(database: str) -> subprocess.Popen:
    return subprocess.Popen(
        [JOBTABLE, "worker", "--database", database, "--kinds", "probe_kinds",
         "--sqlite-synchronous", "normal", "--log-level", "warning"],
        env={**os.environ, "PYTHONPATH": f"{HERE}:{REPO}"},
    )  # fmt: skip


def pickup_across_processes(database: str, n: int) -> tuple[list[float], float]:
    """Enqueue here, run in a ``jobtable worker`` process; also its idle CPU share."""
    store = open_store(database, synchronous="normal", now=CLOCK.now())
    runner = Runner(store, CLOCK)
    probes = register_probe(runner.kinds)
    worker = start_worker(database)
    try:
        warm = probes.enqueue(Stamp())
        while (job := store.get(warm)) is None or not job.status.finished:
            time.sleep(0.05)
        idle_cpu = cpu_share(worker.pid, seconds=5.0)
        latencies = []
        for _ in range(n):
            job_id = probes.enqueue(Stamp())
            returned = time.time()
            while (job := store.get(job_id)) is None or not job.status.finished:
                time.sleep(0.002)
            latencies.append((job.result or {})["at"] - returned)
            time.sleep(0.02)  # let the worker go idle again, as a real pickup finds it
        return latencies, idle_cpu
    finally:
        worker.terminate()
        worker.wait(30)
        store.close()


def cpu_share(pid: int, *, seconds: float) -> float:
    """Percent of one core the process used over ``seconds`` of wall time."""

    def ticks() -> int:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])

    hz = os.sysconf("SC_CLK_TCK")
    before = ticks()
    time.sleep(seconds)
    return 100.0 * (ticks() - before) / hz / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--jobs", type=int, default=5000)
    parser.add_argument("--pickups", type=int, default=200)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="jobtable-process-bench-")

    def fresh(engine: str) -> str:
        if engine == "sqlite":
            return os.path.join(folder, f"{uuid.uuid4().hex}.db")
        return fresh_postgres(args.postgres)

    rows = []
    for engine in ("sqlite", "postgres"):
        drain = drain_rate(fresh(engine), args.jobs)
        local = pickup_in_process(fresh(engine), args.pickups)
        remote, idle_cpu = pickup_across_processes(fresh(engine), args.pickups)
        rows.append((f"jobtable {engine}", f"{drain:,.0f}", percentiles(local),
                     percentiles(remote), f"{idle_cpu:.2f}%"))  # fmt: skip
    for name, peer in PEERS.items():
        try:
            rate = peer(args.postgres, args.jobs)
        except ImportError:
            rows.append((name, "not installed", "", "", ""))
            continue
        rows.append((name, f"{rate:,.0f}", "", "", ""))
    print(f"jobs={args.jobs} pickups={args.pickups}; SQLite synchronous=normal\n")
    print("| system | drain/s (2 workers) | pickup ms, one process | pickup ms, across processes "
          "| idle worker CPU |")  # fmt: skip
    print("|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


PEERS: dict[str, Any] = {
    "procrastinate 3.10 (concurrency 2)": procrastinate_drain,
    "pgqueuer 1.6.0 (batches of 10, 20 tasks)": pgqueuer_drain,
}


if __name__ == "__main__":
    main()
