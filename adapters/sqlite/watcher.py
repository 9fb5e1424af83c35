"""Notice commits made by other processes to a SQLite file, to wake idle workers there.

SQLite has no notifications across processes. ``PRAGMA data_version`` on a
connection changes whenever another connection commits, and reading it
costs microseconds, so one thread per process reads it every 50 ms on the
store's writer connection (where this process's own commits do not count);
the workers themselves never poll the jobs table.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from core import StoreError

DEFAULT_INTERVAL = 0.05


class DataVersionWatcher:
    def __init__(
        self,
        read_version: Callable[[], int],
        on_change: Callable[[], None],
        *,
        interval: float = DEFAULT_INTERVAL,
        logger: logging.Logger | None = None,
    ) -> None:
        self._read_version = read_version
        self._on_change = on_change
        self._interval = interval
        self._log = logger or logging.getLogger("jobtable.sqlite")
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
        self._thread.join(5.0)

    def _read(self) -> int | None:
        try:
            return self._read_version()
        except StoreError as error:
            self._log.warning("watching for other processes' jobs failed: %s", error.category)
            return None

    def _watch(self) -> None:
        while not self._stop.wait(self._interval):
            version = self._read()
            if version is None:
                continue
            if self._seen is None or version != self._seen:
                self._on_change()  # after a failed reading, look anyway: cheap and safe
            self._seen = version
