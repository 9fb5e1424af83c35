"""Drain rates of procrastinate and pgqueuer on the same PostgreSQL, each in a fresh schema.

Both are installed in bench/.venv only (bench/requirements.txt), never as
jobtable dependencies. Each queues ``n`` no-op jobs, then times one worker
until all of them have run. procrastinate runs with a concurrency of 2, as
jobtable's 2 workers. pgqueuer refuses ``max_concurrent_tasks`` under twice
its batch size, and with an entrypoint ``concurrency_limit`` of 2 it ran the
first 12 jobs and then stalled here; so it gets its best showing instead:
batches of 10, up to 20 tasks at once, a 10 ms dequeue timeout. Its
``PgQueuer.run`` also starts a scheduler that never ends in drain mode, so
the queue manager is run alone.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import timedelta


def _fresh_schema(url: str) -> tuple[str, str]:
    import psycopg

    schema = f"peer_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    return schema, f"{url}?options=-csearch_path%3D{schema}"


def procrastinate_drain(url: str, n: int) -> float:
    import procrastinate

    _, conninfo = _fresh_schema(url)

    async def run() -> float:
        app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=conninfo))

        @app.task(name="noop")
        async def noop() -> None:
            return None

        async with app.open_async():
            await app.schema_manager.apply_schema_async()
            for start in range(0, n, 1000):
                await noop.batch_defer_async(*({} for _ in range(min(1000, n - start))))
            started = time.perf_counter()
            await app.run_worker_async(concurrency=2, wait=False, install_signal_handlers=False)
            return n / (time.perf_counter() - started)

    return asyncio.run(run())


def pgqueuer_drain(url: str, n: int) -> float:
    import psycopg
    from pgqueuer import PgQueuer, PsycopgDriver, Queries
    from pgqueuer.types import QueueExecutionMode

    _, conninfo = _fresh_schema(url)

    async def run() -> float:
        conn = await psycopg.AsyncConnection.connect(conninfo, autocommit=True)
        driver = PsycopgDriver(conn)
        queries = Queries(driver)
        await queries.install()
        for start in range(0, n, 1000):
            size = min(1000, n - start)
            await queries.enqueue(["noop"] * size, [None] * size, [0] * size)
        pgq = PgQueuer(driver)

        @pgq.entrypoint("noop")
        async def noop(job: object) -> None:
            return None

        started = time.perf_counter()
        await pgq.qm.run(
            mode=QueueExecutionMode.drain,
            dequeue_timeout=timedelta(seconds=0.01),
            batch_size=10,
            max_concurrent_tasks=20,
        )
        rate = n / (time.perf_counter() - started)
        await conn.close()
        return rate

    return asyncio.run(run())
