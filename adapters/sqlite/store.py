"""The SQLite JobStore: the embedded default, on the shared SQL body (adapters/sql).

What is SQLite's own: opening and migrating the file, file-lock liveness, and
watching the file for other processes' commits.

Durability: WAL with ``synchronous=FULL`` by default, so a job whose
``create`` returned survives power loss (``normal`` trades that for speed:
it survives a crash of the process, not of the machine).
"""

from __future__ import annotations

import contextlib
import datetime
import os
import time
from collections.abc import Callable

import attrs

from jobtable.adapters.sql.engine import Connection
from jobtable.adapters.sql.store import SqlStore
from jobtable.adapters.sqlite.connections import BUSY_TIMEOUT_MS, WRITER_TEMP_STORE, Connections
from jobtable.adapters.sqlite.engine import QUERIES, SqliteEngine
from jobtable.adapters.sqlite.errors import translated
from jobtable.adapters.sqlite.liveness import LivenessLocks
from jobtable.adapters.sqlite.migrate import migrate
from jobtable.adapters.sqlite.watcher import DataVersionWatcher
from jobtable.core.errors import LivenessLockLostError, StoreUnavailableError
from jobtable.core.liveness import LivenessTerms, LockState, RunnerRecord, RunnerSighting

_OPEN_RETRY_DELAYS = (0.05, 0.1, 0.2, 0.4, 0.8)
_RUNNING_OWNERS = QUERIES["running_owners"]


class SqliteStore(SqlStore):
    liveness_terms = LivenessTerms()
    """One host, OS file locks: a lock is absent only when its process is gone (or its file
    was removed, which the owner notices within a tenth of a second). No lease needed."""

    def __init__(self, connections: Connections) -> None:
        super().__init__(SqliteEngine(connections))
        self._db = connections
        self._liveness = LivenessLocks(connections.path)
        self.applied_at_open: list[str] = []
        """The migrations ``open`` applied (none when the schema was up to date)."""

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        now: datetime.datetime,
        synchronous: str = "full",
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    ) -> SqliteStore:
        """Open (creating if need be) the database at ``path`` and bring its schema up to date.

        Raises StoreError when the file cannot be opened, written or migrated.
        """
        connections = Connections(
            os.fspath(path), synchronous=synchronous, busy_timeout_ms=busy_timeout_ms
        )
        store = cls(connections)
        try:
            store.applied_at_open = store._migrate_when_free(now)
        except BaseException:
            store.close()
            raise
        return store

    def _migrate_when_free(self, now: datetime.datetime) -> list[str]:
        """Migrate, retrying a few times when another process holds the database.

        Processes that open a new file at the same moment can meet in SQLite's
        deadlock guard (one switching it to WAL, another starting a write),
        which answers "locked" at once instead of waiting: try again shortly.
        """
        for delay in _OPEN_RETRY_DELAYS:
            try:
                return self.migrate(now=now)
            except StoreUnavailableError as error:
                if error.category != "database locked":
                    raise
                time.sleep(delay)
        return self.migrate(now=now)

    @property
    def path(self) -> str:
        return self._db.path

    def migrate(self, *, now: datetime.datetime) -> list[str]:
        """Apply pending migrations; returns the versions applied (none when up to date)."""
        with translated(), self._db.writer() as conn:
            conn.execute("PRAGMA temp_store = FILE")  # an index built over every row: on disk
            try:
                return migrate(conn, now=now)
            finally:
                conn.execute(f"PRAGMA temp_store = {WRITER_TEMP_STORE}")

    # -- liveness: a file lock per runner, held while its process lives ------

    def _hold_liveness(self, runner_id: str) -> None:
        try:
            self._liveness.hold(runner_id)
        except OSError:
            raise StoreUnavailableError("database unavailable") from None

    def _lock_location(self, runner_id: str) -> None:
        return None  # on this host: a file beside the database

    def _release_liveness(self, runner_id: str) -> None:
        self._liveness.release(runner_id)

    def confirm_liveness(self, runner_id: str, *, timeout: float) -> bool:
        try:
            return self._liveness.confirm(runner_id)
        except OSError:
            raise LivenessLockLostError() from None

    def sight_runners(self) -> list[RunnerSighting]:
        with translated(), self._db.reader() as conn:
            registered = conn.execute("SELECT id, beat FROM jobtable_runners").fetchall()
            unregistered = conn.execute(_RUNNING_OWNERS).fetchall()
        return [
            RunnerSighting(
                runner_id=runner_id, registered=True, beat=beat, lock=self._lock_state(runner_id)
            )
            for runner_id, beat in registered
        ] + [
            RunnerSighting(
                runner_id=owner, registered=False, beat=None, lock=self._lock_state(owner)
            )
            for (owner,) in unregistered
        ]

    def runners(self) -> list[RunnerRecord]:
        """The runners table, each ``last_seen`` being now for a runner whose lock is held:
        the lock is its proof of life, so an idle runner never writes a beat to say it."""
        records = super().runners()
        now = datetime.datetime.now(datetime.UTC)  # this reader saw the lock held: now
        return [
            attrs.evolve(record, last_seen=now)
            if self._liveness.is_alive(record.info.id)
            else record
            for record in records
        ]

    def _lock_state(self, runner_id: str | None) -> LockState:
        return LockState.HELD if self._liveness.is_alive(runner_id) else LockState.ABSENT

    def _hold_dead_runners_lock(
        self, conn: Connection, runner_id: str | None, until_committed: contextlib.ExitStack
    ) -> bool:
        return until_committed.enter_context(self._liveness.holding_if_dead(runner_id))

    def data_version(self) -> int:
        """A number that changes whenever another process commits to the database.

        Read on the writer connection, so this process's own commits do not
        change it: ``PRAGMA data_version`` counts other connections' commits.
        """
        with translated(), self._db.writer() as conn:
            return int(conn.execute("PRAGMA data_version").fetchone()[0])

    def data_version_after_commits_in_flight(self) -> int:
        """``data_version`` once a commit another process has in flight is visible.

        A writer holds SQLite's write lock from its first write until its
        commit is visible to readers (after the WAL's fsync at synchronous
        FULL). Taking that lock and letting it go at once (``BEGIN
        IMMEDIATE``, ``ROLLBACK``: nothing is written, so no file event
        follows) waits for such a commit to end; the reading after it sees it.
        """
        with translated(), self._db.writer() as conn:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("ROLLBACK")
            return int(conn.execute("PRAGMA data_version").fetchone()[0])

    def watch_jobs(self, on_change: Callable[[str | None], None]) -> DataVersionWatcher:
        """Call ``on_change(None)`` soon after another process commits: any job may have
        changed (a file event names none)."""
        return self.watch(lambda: on_change(None))

    def watch(self, on_change: Callable[[], None]) -> DataVersionWatcher:
        """Call ``on_change`` soon after another process commits (a millisecond with inotify)."""
        return DataVersionWatcher(
            self.data_version,
            on_change,
            database_path=self._db.path,
            read_settled=self.data_version_after_commits_in_flight,
        ).start()

    def close(self) -> None:
        self._liveness.release_all()
        self._db.close()
