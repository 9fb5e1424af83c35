"""Notice commits made by other processes to a SQLite file, to wake idle workers there.

SQLite has no notifications across processes. A commit writes the
database's files, which Linux reports through inotify (``file_events.py``);
on such an event the watcher reads ``PRAGMA data_version`` on the store's
writer connection, where this process's own commits do not count, and calls
``on_change`` when another process committed. Without inotify it reads the
version every 50 ms instead. Either way it also looks every second, and the
workers themselves never poll the jobs table.

The event comes when a commit writes its WAL frames, which is before readers
can see it: at synchronous FULL the writer first waits for their fsync (a
millisecond, or hundreds on a busy disk), and nothing raises an event when
the commit then becomes visible (the WAL index is shared memory). A reading
in between sees no change; without a second look the job would wait for the
next unrelated write or the look a second later. So when a file event's
reading shows no change, the watcher reads again after any commit in flight
has ended (``read_settled``: the store waits for the write lock, which a
writer holds until its commit is visible).

Should anything go wrong while watching the files (or in the loop at all),
the watcher says so once, lets the files go and polls from then on: a
watcher thread that died would leave other processes' jobs waiting until
some unrelated wake, with nothing in the log to say why.
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
"""Least time between two readings on file events, so a burst of commits costs one reading
per 2 ms; the wait comes after a reading, so the first event of a quiet spell is read at once."""


class DataVersionWatcher:
    def __init__(
        self,
        read_version: Callable[[], int],
        on_change: Callable[[], None],
        *,
        database_path: str | None = None,
        read_settled: Callable[[], int] | None = None,
        interval: float = POLL_INTERVAL,
        logger: logging.Logger | None = None,
    ) -> None:
        self._read_version = read_version
        self._read_settled = read_settled
        self._on_change = on_change
        self._log = logger or logging.getLogger("jobtable.sqlite")
        self._events = FileEvents.open(database_path) if database_path else None
        self._events_lock = threading.Lock()
        """Held to interrupt or close the file events, so ``stop`` never writes to a closed pipe."""
        self._poll_interval = interval
        self._fallback_interval = FALLBACK_INTERVAL
        self._failed = False
        self._stop = threading.Event()
        self._seen: int | None = None
        self._thread = threading.Thread(target=self._watch, name="jobtable-watcher", daemon=True)

    @property
    def file_events(self) -> FileEvents | None:
        """What the watcher sleeps on; None once it polls (no inotify, or after a failure)."""
        return self._events

    def is_alive(self) -> bool:
        return self._thread.is_alive()

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
        """End the thread, whether it sleeps on file events or polls, and release the files."""
        self._stop.set()
        with self._events_lock:
            if self._events is not None:
                self._events.interrupt()
        if self._thread.ident is not None:
            self._thread.join(5.0)
        if not self._thread.is_alive():  # else the thread releases them when it ends
            self._close_events()

    def _read(self, read: Callable[[], int] | None = None) -> int | None:
        try:
            return (read or self._read_version)()
        except StoreError as error:
            self._log.warning("watching for other processes' jobs failed: %s", error.category)
            return None

    def _settled(self) -> int | None:
        """The version once a commit in flight has ended; when SQLite's write lock stays taken
        past the busy timeout, the workers are told to look (a commit may have landed) and
        None comes back, without a warning: their own writes meet that lock and say so."""
        assert self._read_settled is not None
        try:
            return self._read_settled()
        except StoreError:
            self._on_change()
            return None

    def _sleep(self) -> bool:
        """Sleep until a file event (True) or the interval's end (False)."""
        events = self._events
        if events is None:
            self._stop.wait(self._poll_interval)
            return False
        return events.wait(self._fallback_interval)

    def _watch(self) -> None:
        """Look until ``stop``: no error ends the thread, it only turns file events off."""
        try:
            while not self._stop.is_set():
                try:
                    self._look()
                except Exception as error:
                    self._fall_back_to_polling(error)
        finally:
            self._close_events()

    def _look(self) -> None:
        written = self._sleep()
        if self._stop.is_set():
            return
        version = self._read()
        if written and version == self._seen and self._read_settled is not None:
            version = self._settled()  # the write may be a commit still in flight
        if version is None:
            return
        if self._seen is None or version != self._seen:
            self._on_change()  # after a failed reading, look anyway: cheap and safe
        self._seen = version
        if written:  # after the reading, not before: the first event of a quiet spell costs no wait
            self._stop.wait(COALESCE)

    def _fall_back_to_polling(self, error: Exception) -> None:
        """Poll from now on, saying so once: a repeated failure must not flood the log.

        Only the error's type is logged, never its text, which may quote
        paths or data. Every later reading still compares versions, so a
        commit made while the file events failed is noticed by the next poll.
        """
        self._close_events()
        if self._failed:
            self._log.debug(
                "watching for other processes' jobs failed again (%s)", type(error).__name__
            )
            return
        self._failed = True
        self._log.warning(
            "watching for other processes' jobs failed (%s): "
            "polling the database every %.2fs from now on",
            type(error).__name__,
            self._poll_interval,
        )

    def _close_events(self) -> None:
        """Close the file events, then forget them: ``file_events`` is None only once closed."""
        with self._events_lock:
            if self._events is not None:
                self._events.close()
                self._events = None
