"""The database's own cost of an enqueue: a raw sqlite3 loop, one row a commit.

Inserts N rows into jobtable's own schema (migrated as jobtable migrates it,
with its indexes and history trigger), with jobtable's own insert statement
(``create_job.sql``), one ``BEGIN IMMEDIATE`` ... ``COMMIT`` each, as the
group commit does for a lone write, and prints the rate. Beside
``enqueue_jobtable.py`` it shows what jobtable's Python adds to the insert:
ids, times and the row are made as cheaply as Python can (a counter, one
time stamp for all).

    python bench/enqueue_raw.py DATABASE N [full|normal]
"""

from __future__ import annotations

import datetime
import sqlite3
import sys
import time


def main() -> int:
    from jobtable.adapters.sqlite.engine import QUERIES, stamp
    from jobtable.core.policies import RetryPolicy
    from jobtable.entrypoints.wiring import open_store

    database, n = sys.argv[1], int(sys.argv[2])
    synchronous = sys.argv[3] if len(sys.argv) > 3 else "full"
    now = datetime.datetime.now(datetime.UTC)
    open_store(database, synchronous=synchronous, now=now).close()  # the schema, migrated
    conn = sqlite3.connect(database, isolation_level=None)
    conn.execute(f"PRAGMA synchronous = {synchronous.upper()}")
    conn.execute("PRAGMA journal_mode = WAL")
    sql = QUERIES["create_job"]
    at = stamp(now)
    row = {
        "id": "",
        "kind": "noop",
        "payload": "{}",
        "now": at,
        "max_attempts": 1,
        "retry": RetryPolicy().to_json(),
        "queue": "default",
        "priority": 0,
        "run_at": at,
        "timeout": None,
        "unique_key": None,
        "unique_while_active": True,
        "key_until": None,
    }
    prefix = f"{int(now.timestamp() * 1000):012x}"
    execute = conn.execute
    try:
        started = time.perf_counter()
        for number in range(n):
            row["id"] = f"{prefix[:8]}-{prefix[8:]}-7000-8000-{number:012x}"
            execute("BEGIN IMMEDIATE")
            execute(sql, row)
            execute("COMMIT")
        print(n / (time.perf_counter() - started))
    finally:
        conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
