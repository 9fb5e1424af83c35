"""Notice commits made by other processes to a SQLite file, to wake idle workers there.

SQLite has no notifications across processes. ``PRAGMA data_version``
changes whenever another connection commits, and reading it is a few
microseconds, so one thread per process reads it every 50 ms on a
connection of its own; the workers themselves never poll the jobs table.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable

from adapters.sqlite.connections import BUSY_TIMEOUT_MS

DEFAULT_INTERVAL = 0.05


class DataVersionWatcher:
    def __init__(
        self,
        path: str,
        on_change: Callable[[], None],
        *,
        interval: float = DEFAULT_INTERVAL,
        logger: logging.Logger | None = None,
    ) -> None:
        self._path = path
        self._on_change = on_change
        self._interval = interval
        self._log = logger or logging.getLogger("jobtable.sqlite")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="jobtable-watcher", daemon=True)

    def start(self) -> DataVersionWatcher:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5.0)

    def _watch(self) -> None:
        conn: sqlite3.Connection | None = None
        seen: int | None = None
        while not self._stop.wait(self._interval):
            try:
                if conn is None:
                    conn = sqlite3.connect(self._path, isolation_level=None)
                    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                    conn.execute("PRAGMA query_only = ON")
                version = conn.execute("PRAGMA data_version").fetchone()[0]
            except sqlite3.Error:
                self._log.warning("watching the database for other writers failed; retrying")
                if conn is not None:
                    conn.close()
                conn, seen = None, None
                continue
            if seen is not None and version != seen:
                self._on_change()
            seen = version
        if conn is not None:
            conn.close()
