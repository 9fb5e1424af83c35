"""The SQLite JobStore: the embedded default.

Durability: WAL with ``synchronous=FULL`` by default, so a job whose
``create`` returned survives power loss (``normal`` trades that for speed:
it survives a crash of the process, not of the machine).
"""

from __future__ import annotations

import datetime
import importlib.resources
import os
import sqlite3
import time
from collections.abc import Callable, Collection, Mapping
from typing import Any

from jobtable.adapters.sql_rows import claimed, fence, finish_parameters
from jobtable.adapters.sqlite.connections import BUSY_TIMEOUT_MS, Connections
from jobtable.adapters.sqlite.errors import translated
from jobtable.adapters.sqlite.liveness import LivenessLocks
from jobtable.adapters.sqlite.migrate import migrate
from jobtable.adapters.sqlite.watcher import DataVersionWatcher
from jobtable.core.errors import StoreUnavailableError
from jobtable.core.jobs import Claim, ClaimedJob, Job, NewJob, Recovered
from jobtable.core.outcome import Fail, Succeed
from jobtable.core.status import Status

_OPEN_RETRY_DELAYS = (0.05, 0.1, 0.2, 0.4, 0.8)


def _query(name: str) -> str:
    return (
        importlib.resources.files("jobtable.adapters.sqlite")
        .joinpath(f"queries/{name}.sql")
        .read_text()
    )


_CREATE = _query("create_job")
_CLAIM = _query("claim_next_job")
_PUBLISH = _query("publish_job_result")
_SUCCEED = _query("succeed_job")
_FAIL = _query("fail_job")
_RUNNING = _query("running_jobs")
_RUNNING_CLAIMS = _query("running_claims")
_REQUEUE = _query("requeue_orphan")
_FAIL_ORPHAN = _query("fail_orphan")
_GET = _query("get_job")


def _stamp(now: datetime.datetime) -> str:
    return now.astimezone(datetime.UTC).isoformat(timespec="microseconds")


class SqliteStore:
    def __init__(self, connections: Connections) -> None:
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
            return migrate(conn, now=now)

    def create(self, job: NewJob, *, now: datetime.datetime) -> None:
        params = {"id": job.id, "kind": job.kind, "payload": job.payload, "now": _stamp(now)}
        with translated():
            self._db.write(lambda conn: conn.execute(_CREATE, params))

    def claim_next(self, *, runner_id: str, now: datetime.datetime) -> ClaimedJob | None:
        params = {"runner_id": runner_id, "now": _stamp(now)}
        with translated():
            row = self._db.write(lambda conn: conn.execute(_CLAIM, params).fetchone())
        return claimed(row, runner_id)

    def finish_and_claim_next(
        self, claim: Claim, outcome: Succeed | Fail, *, runner_id: str, now: datetime.datetime
    ) -> tuple[bool, ClaimedJob | None]:
        stamp = _stamp(now)
        finish_sql, finish = finish_parameters(
            claim, outcome, stamp, succeed_sql=_SUCCEED, fail_sql=_FAIL
        )
        next_claim = {"runner_id": runner_id, "now": stamp}

        def work(conn: sqlite3.Connection) -> tuple[bool, Any]:
            held = conn.execute(finish_sql, finish).rowcount == 1
            return held, conn.execute(_CLAIM, next_claim).fetchone()

        with translated():
            held, row = self._db.write(work)
        return held, claimed(row, runner_id)

    def publish(self, claim: Claim, *, result: str, now: datetime.datetime) -> bool:
        return self._fenced(_PUBLISH, claim, result=result, now=_stamp(now))

    def succeed(self, claim: Claim, *, result: str, now: datetime.datetime) -> bool:
        return self._fenced(_SUCCEED, claim, result=result, now=_stamp(now))

    def fail(self, claim: Claim, *, code: str, now: datetime.datetime) -> bool:
        return self._fenced(_FAIL, claim, code=code, now=_stamp(now))

    def hold_liveness(self, runner_id: str) -> None:
        self._liveness.hold(runner_id)

    def release_liveness(self, runner_id: str) -> None:
        self._liveness.release(runner_id)

    def recover_orphans(
        self, *, code: str, max_attempts: Mapping[str, int], now: datetime.datetime
    ) -> Recovered:
        with translated():
            running = self._db.reader().execute(_RUNNING).fetchall()
        alive = {owner: self._liveness.is_alive(owner) for owner in {row[3] for row in running}}
        orphans = [row for row in running if not alive[row[3]]]
        if not orphans:
            return Recovered()
        stamp = _stamp(now)

        def settle(conn: sqlite3.Connection) -> Recovered:
            failed = requeued = 0
            for job_id, kind, attempt, owner in orphans:
                fence = {"id": job_id, "owner": owner, "attempt": attempt, "now": stamp}
                if attempt < max_attempts.get(kind, 1):
                    requeued += conn.execute(_REQUEUE, fence).rowcount
                else:
                    failed += conn.execute(_FAIL_ORPHAN, {**fence, "code": code}).rowcount
            return Recovered(failed=failed, requeued=requeued)

        with translated():
            return self._db.write(settle)

    def running_claims(self, runner_id: str) -> list[Claim]:
        with translated():
            rows = self._db.reader().execute(_RUNNING_CLAIMS, {"runner_id": runner_id}).fetchall()
        return [
            Claim(job_id=job_id, runner_id=runner_id, attempt=attempt) for job_id, attempt in rows
        ]

    def requeue_claims(self, claims: Collection[Claim], *, now: datetime.datetime) -> int:
        if not claims:
            return 0
        stamp = _stamp(now)

        def requeue(conn: sqlite3.Connection) -> int:
            return sum(
                conn.execute(
                    _REQUEUE,
                    {"id": c.job_id, "owner": c.runner_id, "attempt": c.attempt, "now": stamp},
                ).rowcount
                for c in claims
            )

        with translated():
            return self._db.write(requeue)

    def get(self, job_id: str) -> Job | None:
        with translated():
            row = self._db.reader().execute(_GET, {"id": job_id}).fetchone()
        if row is None:
            return None
        job_id, kind, status, result, error = row
        return Job(id=job_id, kind=kind, status=Status(status), result=result, error=error)

    def row(self, job_id: str) -> dict[str, Any] | None:
        """Every column of the job's row, for inspection and tests."""
        with translated():
            cursor = self._db.reader().execute("SELECT * FROM jobs WHERE id = ?", (job_id,))
            found = cursor.fetchone()
        if found is None:
            return None
        return dict(zip([column[0] for column in cursor.description], found, strict=True))

    def data_version(self) -> int:
        """A number that changes whenever another process commits to the database.

        Read on the writer connection, so this process's own commits do not
        change it: ``PRAGMA data_version`` counts other connections' commits.
        """
        with translated(), self._db.writer() as conn:
            return int(conn.execute("PRAGMA data_version").fetchone()[0])

    def watch(self, on_change: Callable[[], None]) -> DataVersionWatcher:
        """Call ``on_change`` soon after another process commits (a millisecond with inotify)."""
        return DataVersionWatcher(self.data_version, on_change, database_path=self._db.path).start()

    def close(self) -> None:
        self._liveness.release_all()
        self._db.close()

    def _fenced(self, sql: str, claim: Claim, **values: Any) -> bool:
        params = {**fence(claim), **values}
        with translated():
            changed = self._db.write(lambda conn: conn.execute(sql, params).rowcount)
        return bool(changed == 1)
