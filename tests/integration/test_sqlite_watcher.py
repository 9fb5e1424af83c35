"""The SQLite watcher: it notices other processes' commits, and no error ends it.

A "commit from another process" is a second ``sqlite3`` connection writing to
the same file: ``PRAGMA data_version`` on the store's writer counts every
other connection's commits, just as it counts other processes'.
"""

from __future__ import annotations

import os
import resource
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing

import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.sqlite import SqliteStore
from jobtable.adapters.sqlite import watcher as watcher_module
from jobtable.adapters.sqlite.file_events import FileEvents
from jobtable.adapters.sqlite.watcher import DataVersionWatcher
from jobtable.core.errors import StoreUnavailableError
from tests.support.logs import LogCapture

DEADLINE = 10.0
"""How long a test waits for what should take milliseconds, before calling it a failure."""
NEVER = 600.0
"""An interval no test lasts: a wake that comes in time cannot have come from it."""
SELECT_LIMIT = 1024
"""``select`` refuses descriptor numbers from here on (FD_SETSIZE)."""


@pytest.fixture
def store(tmp_path) -> Iterator[SqliteStore]:
    store = SqliteStore.open(tmp_path / "jobs.db", now=FakeClock().now())
    yield store
    store.close()


@pytest.fixture
def inotify(tmp_path) -> None:
    """Skip where the kernel cannot report file writes: the watcher only polls there."""
    events = FileEvents.open(str(tmp_path / "probe.db"))
    if events is None:
        pytest.skip("inotify is not available here: the watcher polls instead")
    events.close()


@pytest.fixture
def no_timed_fallback(monkeypatch) -> None:
    """Make the watcher's timed look (every second) too rare to deliver anything in a test."""
    monkeypatch.setattr(watcher_module, "FALLBACK_INTERVAL", NEVER)


@pytest.fixture
def low_descriptors_taken() -> Iterator[None]:
    """Occupy every descriptor number below 1024, so the next ones opened are 1024 or more."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2 * SELECT_LIMIT:
        pytest.skip(f"the hard limit on open files ({hard}) leaves no room above {SELECT_LIMIT}")
    wanted = 4 * SELECT_LIMIT if hard == resource.RLIM_INFINITY else min(hard, 4 * SELECT_LIMIT)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    taken = [os.open(os.devnull, os.O_RDONLY)]
    try:
        while taken[-1] < SELECT_LIMIT:  # dup hands out the lowest free number
            taken.append(os.dup(taken[0]))
        yield
    finally:
        for descriptor in taken:
            os.close(descriptor)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def commit_elsewhere(path: str) -> None:
    """Commit on a connection of its own, to a table of its own: another process, as far as
    ``PRAGMA data_version`` can tell."""
    with closing(sqlite3.connect(path)) as other:
        other.execute("CREATE TABLE IF NOT EXISTS elsewhere (n INTEGER)")
        other.execute("INSERT INTO elsewhere (n) VALUES (1)")
        other.commit()


def wait_until(condition: Callable[[], bool], timeout: float = DEADLINE) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def open_descriptors() -> dict[int, str]:
    """This process's descriptors and what each is (``anon_inode:inotify``, ``pipe:[..]``)."""
    found = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            found[int(name)] = os.readlink(f"/proc/self/fd/{name}")
        except FileNotFoundError:  # the one listdir itself used, closed since
            continue
    return found


def inotify_and_pipes() -> int:
    return sum(
        target == "anon_inode:inotify" or target.startswith("pipe:")
        for target in open_descriptors().values()
    )


def fail_to_wait(timeout: float) -> bool:
    raise OSError("/secret/path: something the log must not quote")


def warnings_in(log: LogCapture) -> list[str]:
    return [line for line in log.lines() if line.startswith("WARNING")]


@pytest.mark.usefixtures("inotify", "no_timed_fallback")
def test_the_watcher_notices_a_commit_through_inotify_on_descriptors_of_1024_and_above(
    store, low_descriptors_taken
):
    changed = threading.Event()
    before = set(open_descriptors())
    watcher = store.watch(changed.set)
    try:
        events = watcher.file_events
        assert events is not None
        assert events.fileno() >= SELECT_LIMIT
        opened = set(open_descriptors()) - before
        assert opened
        assert min(opened) >= SELECT_LIMIT  # the pipe too

        commit_elsewhere(store.path)

        assert changed.wait(DEADLINE)  # only inotify can deliver: no timed look, no polling
        assert watcher.file_events is events  # and it never fell back to polling
        assert watcher.is_alive()
    finally:
        watcher.stop()


@pytest.mark.usefixtures("inotify", "no_timed_fallback")
def test_a_failing_file_events_wait_makes_the_watcher_poll_logging_one_warning(store, monkeypatch):
    log = LogCapture()
    changed = threading.Event()
    baseline = inotify_and_pipes()
    watcher = DataVersionWatcher(
        store.data_version, changed.set, database_path=store.path, logger=log.logger
    )
    events = watcher.file_events
    assert events is not None
    monkeypatch.setattr(events, "wait", fail_to_wait)
    watcher.start()
    try:
        assert wait_until(lambda: watcher.file_events is None)
        assert inotify_and_pipes() == baseline  # let go of, not leaked
        assert watcher.is_alive()
        assert not changed.is_set()

        commit_elsewhere(store.path)

        assert changed.wait(DEADLINE)  # by polling: the timed look is out of reach
        assert watcher.is_alive()
        warnings = warnings_in(log)
        assert len(warnings) == 1
        assert "OSError" in warnings[0]
        assert "polling" in warnings[0]
        assert "secret" not in log.text
    finally:
        watcher.stop()


@pytest.mark.usefixtures("inotify")
def test_an_error_in_on_change_does_not_end_the_watcher(store):
    log = LogCapture()
    failed, called_again = threading.Event(), threading.Event()

    def on_change() -> None:
        if not failed.is_set():
            failed.set()
            raise RuntimeError("something the log must not quote")
        called_again.set()

    watcher = DataVersionWatcher(
        store.data_version, on_change, database_path=store.path, logger=log.logger
    ).start()
    try:
        commit_elsewhere(store.path)

        assert failed.wait(DEADLINE)
        assert called_again.wait(DEADLINE)  # the change is looked at again, by polling
        assert watcher.is_alive()
        assert watcher.file_events is None
        warnings = warnings_in(log)
        assert len(warnings) == 1
        assert "RuntimeError" in warnings[0]
        assert "must not quote" not in log.text
    finally:
        watcher.stop()


@pytest.mark.usefixtures("inotify", "no_timed_fallback")
@pytest.mark.parametrize("mode", ["inotify", "polling", "polling after a failure"])
def test_stop_ends_the_thread_promptly_and_releases_the_descriptors(store, monkeypatch, mode):
    baseline = inotify_and_pipes()
    watcher = DataVersionWatcher(
        store.data_version,
        lambda: None,
        database_path=None if mode == "polling" else store.path,
        interval=NEVER,  # a stop that only took effect at the next poll would not be prompt
        logger=LogCapture().logger,
    )
    if mode == "polling after a failure":
        assert watcher.file_events is not None
        monkeypatch.setattr(watcher.file_events, "wait", fail_to_wait)
    watcher.start()
    if mode == "polling after a failure":
        assert wait_until(lambda: watcher.file_events is None)
    assert (watcher.file_events is not None) == (mode == "inotify")

    started = time.monotonic()
    watcher.stop()

    assert time.monotonic() - started < 1.0
    assert not watcher.is_alive()
    assert watcher.file_events is None
    assert inotify_and_pipes() == baseline


def test_stop_before_start_releases_the_descriptors(store):
    baseline = inotify_and_pipes()
    watcher = DataVersionWatcher(store.data_version, lambda: None, database_path=store.path)

    watcher.stop()

    assert inotify_and_pipes() == baseline


@pytest.mark.usefixtures("inotify", "no_timed_fallback")
def test_a_commit_not_yet_visible_at_its_file_event_is_still_noticed_without_another_event(
    tmp_path,
):
    # At synchronous FULL a commit's WAL write raises the file event before its fsync
    # lets readers see it: the first reading finds nothing new, and no event follows.
    database = tmp_path / "jobs.db"
    visible = threading.Event()
    changed = threading.Event()

    def version_seen_at_the_event() -> int:
        return 2 if visible.is_set() else 1

    def version_once_the_commit_ended() -> int:
        visible.set()
        return 2

    watcher = DataVersionWatcher(
        version_seen_at_the_event,
        changed.set,
        database_path=str(database),
        read_settled=version_once_the_commit_ended,
    ).start()
    try:
        with open(f"{database}-wal", "ab") as wal:  # the commit's frames, written
            wal.write(b"frames")

        assert changed.wait(DEADLINE)  # no other event, no timed look: the second reading
    finally:
        watcher.stop()


def test_the_reading_after_commits_in_flight_waits_for_another_connections_commit(store):
    other = sqlite3.connect(store.path, isolation_level=None)
    try:
        before = store.data_version()
        other.execute("BEGIN IMMEDIATE")
        other.execute("CREATE TABLE elsewhere (n INTEGER)")  # written, not yet committed
        read: list[int] = []
        errors: list[BaseException] = []

        def read_after_commits() -> None:
            try:
                read.append(store.data_version_after_commits_in_flight())
            except BaseException as error:
                errors.append(error)

        reader = threading.Thread(target=read_after_commits)
        reader.start()
        assert wait_until(store._db._write_lock.locked)  # the reader waits on SQLite's lock
        other.execute("COMMIT")
        reader.join(DEADLINE)

        assert not errors
        assert read and read[0] != before  # it saw the commit that was in flight when it began
    finally:
        other.close()


@pytest.mark.usefixtures("inotify", "no_timed_fallback")
def test_a_write_lock_held_past_the_busy_timeout_wakes_the_workers_without_a_warning(tmp_path):
    database = tmp_path / "jobs.db"
    log = LogCapture()
    changed = threading.Event()

    def lock_held_too_long() -> int:
        raise StoreUnavailableError("database locked")

    watcher = DataVersionWatcher(
        lambda: 1,
        changed.set,
        database_path=str(database),
        read_settled=lock_held_too_long,
        logger=log.logger,
    ).start()
    try:
        with open(f"{database}-wal", "ab") as wal:
            wal.write(b"frames")

        assert changed.wait(DEADLINE)  # a commit may have landed: let the workers look
        assert watcher.file_events is not None  # nothing failed: still on file events
        assert warnings_in(log) == []
    finally:
        watcher.stop()
