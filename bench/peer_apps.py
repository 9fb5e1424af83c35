"""The peers' applications for bench/peers.py: one no-op task each, as their users write one.

Each is run by the peer's own worker command in its own process; where the
database is comes from the environment (``BENCH_HUEY_FILE``,
``BENCH_HUEY_FSYNC``, ``BENCH_PG_URL``). Only in bench/.venv.
"""

from __future__ import annotations

import os
from typing import Any

# -- Huey: SqliteHuey ---------------------------------------------------------


def make_huey() -> Any:
    """SqliteHuey as documented: WAL, ``fsync=True`` for synchronous FULL, else NORMAL."""
    from huey import SqliteHuey

    return SqliteHuey(
        "bench",
        filename=os.environ["BENCH_HUEY_FILE"],
        fsync=os.environ.get("BENCH_HUEY_FSYNC") == "1",
    )


huey = make_huey() if "BENCH_HUEY_FILE" in os.environ else None

if huey is not None:

    @huey.task()
    def noop() -> int:
        """Returns a value, so Huey stores a result (jobtable stores one for every job)."""
        return 1


# -- pgqueuer (asyncpg) -------------------------------------------------------


async def pgqueuer_main() -> Any:
    """The factory ``pgq run peer_apps:pgqueuer_main`` calls: an asyncpg driver, its defaults."""
    import asyncpg
    from pgqueuer import PgQueuer
    from pgqueuer.db import AsyncpgDriver

    connection = await asyncpg.connect(os.environ["BENCH_PG_URL"])
    pgq = PgQueuer(AsyncpgDriver(connection))

    @pgq.entrypoint("noop")
    async def noop(job: object) -> None:
        return None

    return pgq


# -- procrastinate ------------------------------------------------------------


def make_procrastinate() -> Any:
    import procrastinate

    app = procrastinate.App(
        connector=procrastinate.PsycopgConnector(conninfo=os.environ["BENCH_PG_URL"])
    )

    @app.task(name="noop")
    async def noop() -> None:
        return None

    return app


procrastinate_app = make_procrastinate() if "BENCH_PG_URL" in os.environ else None


def run_pgqueuer() -> None:
    """What ``pgq run peer_apps:pgqueuer_main`` does, with every default: its CLI in 1.6.0
    cannot start (its log set-up takes the level's name for an enum), so this calls the same
    ``PgQueuer.run()`` itself."""
    import asyncio

    async def main() -> None:
        pgq = await pgqueuer_main()
        await pgq.run()

    asyncio.run(main())


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["pgqueuer"]:
        run_pgqueuer()
