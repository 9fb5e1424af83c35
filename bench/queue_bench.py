"""Queue throughput and latency: jobtable's stores beside a raw sqlite3 loop and Huey.

Prints one markdown table. Every figure in it comes from this one run, so
the ratios compare like with like on this machine. Not a test: run by hand
with ``bench/run queue_bench.py``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sqlite3
import statistics
import tempfile
import threading
import time
from typing import Any

from jobtable.adapters.memory import MemoryStore
from jobtable.adapters.sqlite import SqliteStore
from jobtable.adapters.system_clock import SystemClock
from jobtable.core import JobContext, NewJob, NoopPayload, NoopResult, Runner
from jobtable.core.ids import JobIdGenerator
from jobtable.core.outcome import Succeed

CLOCK = SystemClock()


class CountingStore:
    """Passes every call through; sets ``done`` once ``target`` jobs have succeeded."""

    def __init__(self, inner: Any, target: int) -> None:
        self._inner = inner
        self._lock = threading.Lock()
        self.succeeded = 0
        self.target = target
        self.done = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _count(self) -> None:
        with self._lock:
            self.succeeded += 1
            if self.succeeded >= self.target:
                self.done.set()

    def record(self, claim, outcome, *, now):
        changed = self._inner.record(claim, outcome, now=now)
        if isinstance(outcome, Succeed):
            self._count()
        return changed

    def run_batch(self, batch, **arguments):
        done = self._inner.run_batch(batch, **arguments)
        for (_, outcome), recorded in zip(batch.outcomes, done.recorded, strict=True):
            if recorded and isinstance(outcome, Succeed):
                self._count()
        return done

    def record_and_claim(self, outcomes, **arguments):
        held = self._inner.record_and_claim(outcomes, **arguments)
        for _, outcome in outcomes:
            if isinstance(outcome, Succeed):
                self._count()
        return held


# -- jobtable -------------------------------------------------------------


def open_jobtable(engine: str, folder: str) -> Any:
    if engine == "memory":
        return MemoryStore()
    synchronous = engine.split("-")[1]
    path = os.path.join(folder, f"jobtable-{synchronous}-{time.monotonic_ns()}.db")
    return SqliteStore.open(path, now=CLOCK.now(), synchronous=synchronous)


def jobtable_enqueue_rate(engine: str, folder: str, n: int) -> float:
    store = open_jobtable(engine, folder)
    runner = Runner(store, CLOCK, workers=2)
    started = time.perf_counter()
    for _ in range(n):
        runner.builtins.noop.enqueue(NoopPayload())
    elapsed = time.perf_counter() - started
    store.close()
    return n / elapsed


def bulk_fill(store: Any, count: int) -> None:
    """Queue ``count`` noop jobs as fast as the engine allows (benchmark set-up only)."""
    ids = JobIdGenerator()
    now = CLOCK.now()
    unix_ms = int(now.timestamp() * 1000)
    if isinstance(store, MemoryStore):
        for _ in range(count):
            store.create(NewJob(id=ids.next_id(unix_ms), kind="noop", payload="{}"), now=now)
        return
    stamp = now.isoformat(timespec="microseconds")
    rows = [(ids.next_id(unix_ms), stamp, stamp) for _ in range(count)]
    conn = sqlite3.connect(store.path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(
        "INSERT INTO jobs (id, kind, status, payload, created_at, updated_at)"
        " VALUES (?, 'noop', 'queued', '{}', ?, ?)",
        rows,
    )
    conn.execute("COMMIT")
    conn.close()


def jobtable_drain_rate(engine: str, folder: str, n: int, *, depth: int = 0) -> float:
    """Jobs per second for 2 workers to run ``n`` noop jobs from a queue ``max(n, depth)`` deep."""
    inner = open_jobtable(engine, folder)
    bulk_fill(inner, max(n, depth))
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


def jobtable_pickup(engine: str, folder: str, n: int) -> list[float]:
    """Seconds from ``enqueue`` returning to the handler starting, one job at a time."""
    store = open_jobtable(engine, folder)
    runner = Runner(store, CLOCK, workers=2)
    started_at: list[float] = []
    ran = threading.Semaphore(0)

    def probe(ctx: JobContext, payload: NoopPayload) -> NoopResult:
        started_at.append(time.perf_counter())
        ran.release()
        return NoopResult()

    kind = runner.kinds.register("probe", probe, payload=NoopPayload)
    runner.start()
    latencies = []
    for _ in range(n):
        kind.enqueue(NoopPayload())
        returned = time.perf_counter()
        ran.acquire(timeout=30)
        latencies.append(started_at[-1] - returned)
    runner.stop()
    runner.join(30)
    store.close()
    return latencies


# -- the raw sqlite3 loop: the per-job limit of a table queue --------------


def raw_three_commit_rate(synchronous: str, folder: str, n: int) -> float:
    """Insert, claim and complete each job, one commit each, in one thread."""
    path = os.path.join(folder, f"raw-{synchronous}-{time.monotonic_ns()}.db")
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={synchronous}")
    conn.execute(
        "CREATE TABLE jobs (id INTEGER PRIMARY KEY, status TEXT NOT NULL, payload TEXT,"
        " result TEXT)"
    )
    conn.execute("CREATE INDEX jobs_queued ON jobs (id) WHERE status = 'queued'")
    started = time.perf_counter()
    for _ in range(n):
        conn.execute("INSERT INTO jobs (status, payload) VALUES ('queued', '{}')")
        (job_id,) = conn.execute(
            "UPDATE jobs SET status = 'running' WHERE id = "
            "(SELECT id FROM jobs WHERE status = 'queued' ORDER BY id LIMIT 1) RETURNING id"
        ).fetchone()
        conn.execute(
            "UPDATE jobs SET status = 'succeeded', result = '{\"ok\":true}' WHERE id = ?",
            (job_id,),
        )
    elapsed = time.perf_counter() - started
    conn.close()
    return n / elapsed


# -- Huey -----------------------------------------------------------------


def make_huey(synchronous: str, folder: str) -> Any:
    from huey import Huey
    from huey.storage import SqliteStorage

    level = {"full": 2, "normal": 1}[synchronous]

    class Storage(SqliteStorage):
        def _create_connection(self):  # type: ignore[no-untyped-def]
            conn = super()._create_connection()
            conn.execute(f"pragma synchronous={level}")
            return conn

    path = os.path.join(folder, f"huey-{synchronous}-{time.monotonic_ns()}.db")
    return Huey("bench", storage_class=Storage, filename=path)


def huey_rates(synchronous: str, folder: str, n: int, pickups: int) -> dict[str, Any]:
    from huey.signals import SIGNAL_COMPLETE, SIGNAL_EXECUTING

    huey = make_huey(synchronous, folder)
    completed = threading.Semaphore(0)
    executing_at: list[float] = []

    @huey.task()
    def noop() -> dict[str, bool]:
        return {"ok": True}

    @huey.signal(SIGNAL_COMPLETE)
    def on_complete(signal: Any, task: Any, *args: Any) -> None:
        completed.release()

    @huey.signal(SIGNAL_EXECUTING)
    def on_executing(signal: Any, task: Any, *args: Any) -> None:
        executing_at.append(time.perf_counter())

    started = time.perf_counter()
    for _ in range(n):
        noop()
    enqueue_rate = n / (time.perf_counter() - started)

    consumer = huey.create_consumer(workers=2, worker_type="thread", periodic=False)
    started = time.perf_counter()
    consumer.start()
    for _ in range(n):
        completed.acquire(timeout=600)
    drain_rate = n / (time.perf_counter() - started)

    latencies = []
    for _ in range(pickups):
        noop()
        returned = time.perf_counter()
        completed.acquire(timeout=60)
        latencies.append(executing_at[-1] - returned)
    consumer.stop(graceful=True)
    return {"enqueue": enqueue_rate, "drain": drain_rate, "pickup": latencies}


# -- the table ------------------------------------------------------------


def percentiles(values: list[float]) -> str:
    ms = sorted(v * 1000 for v in values)
    cut = statistics.quantiles(ms, n=100, method="inclusive")
    return f"{cut[49]:.2f} / {cut[94]:.2f} / {cut[98]:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a small run to check it works")
    parser.add_argument("--folder", default=None, help="where the databases go (default: tmp)")
    args = parser.parse_args()
    n, pickups, deep, deep_n = (5000, 200, 100_000, 2000)
    if args.quick:
        n, pickups, deep, deep_n = (300, 30, 5000, 200)

    folder = args.folder or tempfile.mkdtemp(prefix="jobtable-bench-")
    print(f"jobs={n} pickups={pickups} deep={deep}/{deep_n} folder={folder}")
    print(
        f"when: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, sqlite {sqlite3.sqlite_version}\n"
    )
    rows: list[tuple[str, ...]] = []
    drain: dict[str, float] = {}
    enqueue_rates: dict[str, float] = {}
    for engine in ("memory", "sqlite-full", "sqlite-normal"):
        enqueue = enqueue_rates[engine] = jobtable_enqueue_rate(engine, folder, n)
        drain[engine] = jobtable_drain_rate(engine, folder, n)
        shallow = jobtable_drain_rate(engine, folder, deep_n)
        deep_rate = jobtable_drain_rate(engine, folder, deep_n, depth=deep)
        pickup = jobtable_pickup(engine, folder, pickups)
        rows.append((f"jobtable {engine}", f"{enqueue:,.0f}", f"{drain[engine]:,.0f}",
                     f"{shallow:,.0f}", f"{deep_rate:,.0f} ({deep_rate / shallow:.2f}x)",
                     percentiles(pickup)))  # fmt: skip
    raw: dict[str, float] = {}
    hueys: dict[str, float] = {}
    for synchronous in ("full", "normal"):
        raw[synchronous] = raw_three_commit_rate(synchronous, folder, n)
        rows.append((f"raw sqlite3 3-commit loop, {synchronous}", "", f"{raw[synchronous]:,.0f}",
                     "", "", ""))  # fmt: skip
        try:
            result = huey_rates(synchronous, folder, n, pickups)
        except ImportError:
            rows.append((f"Huey SqliteHuey, {synchronous}", "not installed", "", "", "", ""))
            continue
        hueys[synchronous] = result["drain"]
        rows.append((f"Huey SqliteHuey, {synchronous}", f"{result['enqueue']:,.0f}",
                     f"{result['drain']:,.0f}", "", "", percentiles(result["pickup"])))  # fmt: skip

    header = ("system", "enqueue/s", f"drain/s ({n}, 2 workers)", f"drain/s ({deep_n}, empty)",
              f"drain/s ({deep_n}, {deep:,} deep)", "pickup ms p50/p95/p99")  # fmt: skip
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()
    for synchronous in ("full", "normal"):
        ours = drain[f"sqlite-{synchronous}"]
        line = f"sqlite {synchronous}: drain = {ours / raw[synchronous]:.2f}x the raw loop"
        if synchronous in hueys:
            line += f", {ours / hueys[synchronous]:.2f}x Huey"
        # Per job end to end (enqueue, then claim and record), against the same raw loop.
        both = 1 / (1 / enqueue_rates[f"sqlite-{synchronous}"] + 1 / ours)
        line += f"; enqueue+drain {both:,.0f}/s = {both / raw[synchronous]:.2f}x the raw loop"
        print(line)


if __name__ == "__main__":
    main()
