"""Notice commits made by other processes to a SQLite file, to wake idle workers there.

SQLite has no notifications across processes. A commit writes the
database's files, which Linux reports through inotify (``file_events.py``);
on such an event the watcher reads ``PRAGMA data_version`` on the store's
writer connection, where this process's own commits do not count, and calls
``on_change`` when another process committed. Without inotify it reads the
version every 50 ms instead. Either way it also looks every second, and the
workers themselves never poll the jobs table.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from jobtable.adapters.sqlite.file_events import FileEvents
from jobtable.core import StoreError

POLL_INTERVAL = 0.05
"""Between readings when the kernel cannot tell us about writes."""
FALLBACK_INTERVAL = 1.0
"""Between readings when it can: should an event ever be missed."""
COALESCE = 0.002
"""Least time between two readings, so a burst of commits costs one reading per 2 ms."""


class DataVersionWatcher:
    def __init__(
        self,
        read_version: Callable[[], int],
        on_change: Callable[[], None],
        *,
        database_path: str | None = None,
        interval: float = POLL_INTERVAL,
        logger: logging.Logger | None = None,
    ) -> None:
        self._read_version = read_version
        self._on_change = on_change
        self._log = logger or logging.getLogger("jobtable.sqlite")
        self._events = FileEvents.open(database_path) if database_path else None
        self._interval = FALLBACK_INTERVAL if self._events else interval
        self._stop = threading.Event()
        self._seen: int | None = None
        self._thread = threading.Thread(target=self._watch, name="jobtable-watcher", daemon=True)

    def start(self) -> DataVersionWatcher:
        """Take the first reading now, then watch in a thread.

        Reading before returning closes a gap: a commit made after ``start``
        returns is always seen as a change, so a caller that starts the
        watcher before its workers' first claim can never miss a job.
        """
        self._seen = self._read()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._events is not None:
            self._events.interrupt()
        self._thread.join(5.0)
        if self._events is not None and not self._thread.is_alive():
            self._events.close()

    def _read(self) -> int | None:
        try:
            return self._read_version()
        except StoreError as error:
            self._log.warning("watching for other processes' jobs failed: %s", error.category)
            return None

    def _sleep(self) -> None:
        if self._events is None:
            self._stop.wait(self._interval)
        else:
            self._events.wait(self._interval)
            self._stop.wait(COALESCE)

    def _watch(self) -> None:
        while True:
            self._sleep()
            if self._stop.is_set():
                return
            version = self._read()
            if version is None:
                continue
            if self._seen is None or version != self._seen:
                self._on_change()  # after a failed reading, look anyway: cheap and safe
            self._seen = version
