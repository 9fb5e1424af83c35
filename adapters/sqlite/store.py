"""The SQLite JobStore: the embedded default, on the shared SQL body (adapters/sql).

What is SQLite's own: opening and migrating the file, file-lock liveness,
watching the file for other processes' commits, and the claim and settle path.

Durability: WAL with ``synchronous=FULL`` by default, so a job whose
``create`` returned survives power loss (``normal`` trades that for speed:
it survives a crash of the process, not of the machine).
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import json
import os
import sqlite3
import time
from collections.abc import Callable, Collection, Sequence
from typing import Any

from jobtable.adapters.readable_rows import (
    Unreadable,
    held_job,
    log_set_aside,
    log_settled_unreadable,
)
from jobtable.adapters.sql.store import SqlStore
from jobtable.adapters.sql_rows import (
    claim_readable_rows,
    fence,
    outcome_parameters,
    recovered,
)
from jobtable.adapters.sqlite.connections import BUSY_TIMEOUT_MS, Connections
from jobtable.adapters.sqlite.engine import QUERIES, SqliteEngine
from jobtable.adapters.sqlite.engine import parse_stamp as _parse_stamp
from jobtable.adapters.sqlite.engine import stamp as _stamp
from jobtable.adapters.sqlite.errors import translated
from jobtable.adapters.sqlite.liveness import LivenessLocks
from jobtable.adapters.sqlite.migrate import migrate
from jobtable.adapters.sqlite.watcher import DataVersionWatcher
from jobtable.core.errors import LivenessLockLostError, StoreUnavailableError
from jobtable.core.jobs import (
    CancelOutcome,
    Claim,
    ClaimedJob,
    HeldJob,
    Recovered,
    RetryOutcome,
)
from jobtable.core.liveness import (
    DeadRunner,
    LivenessTerms,
    LockState,
    RunnerSighting,
    Settlement,
)
from jobtable.core.outcome import Fail, Outcome, RunAgain, Succeed

_OPEN_RETRY_DELAYS = (0.05, 0.1, 0.2, 0.4, 0.8)


def _query(name: str) -> str:
    return QUERIES[name]


_CLAIM = _query("claim_next_job")
_CLAIM_ANY = _query("claim_any_job")
_PUBLISH = _query("publish_job_result")
_SUCCEED = _query("succeed_job")
_FAIL = _query("fail_job")
_RUN_AGAIN = _query("run_job_again")
_RECORD = {Succeed: _SUCCEED, Fail: _FAIL, RunAgain: _RUN_AGAIN}
_RELEASE = _query("release_claim")
_RUNNING_JOBS = _query("running_jobs")
_RUNNING_UNOWNED = _RUNNING_JOBS.replace("claimed_by = :owner", "claimed_by IS NULL")
_RUNNING_OWNERS = _query("running_owners")
_CANCEL_QUEUED = _query("cancel_queued")
_CANCEL_RUNNING = _query("cancel_running")
_RETRY_FAILED = _query("retry_failed_job")


def _names(names: Collection[str] | None) -> str | None:
    """Kinds or queues a claim may take, as the JSON array the claim query reads (None: any)."""
    if names is None:
        return None
    return _names_json(names if isinstance(names, frozenset) else frozenset(names))


@functools.lru_cache(maxsize=64)
def _names_json(names: frozenset[str]) -> str:
    """Cached: a runner passes the same sets on every claim."""
    return json.dumps(sorted(names))


def _claim_parameters(
    runner_id: str,
    stamp: str,
    kinds: Collection[str] | None,
    queues: Collection[str] | None,
    limit: int = 1,
) -> tuple[str, dict[str, Any]]:
    params = {
        "runner_id": runner_id,
        "now": stamp,
        "kinds": _names(kinds),
        "queues": _names(queues),
        "limit": limit,
    }
    return (_CLAIM_ANY if kinds is None else _CLAIM), params


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
            return migrate(conn, now=now)

    def claim_next(
        self,
        *,
        runner_id: str,
        now: datetime.datetime,
        kinds: Collection[str] | None = None,
        queues: Collection[str] | None = None,
    ) -> ClaimedJob | None:
        sql, params = _claim_parameters(runner_id, _stamp(now), kinds, queues)
        with translated():
            jobs, unreadable = self._db.write(lambda conn: _claim(conn, sql, params, now))
        log_set_aside(unreadable)
        return jobs[0] if jobs else None

    def record_and_claim(
        self,
        outcomes: Sequence[tuple[Claim, Outcome]],
        *,
        limit: int,
        runner_id: str,
        now: datetime.datetime,
        kinds: Collection[str] | None = None,
        queues: Collection[str] | None = None,
    ) -> tuple[list[bool], list[ClaimedJob]]:
        finishes = [_outcome_statement(claim, outcome, now) for claim, outcome in outcomes]
        claim_sql, next_claims = _claim_parameters(runner_id, _stamp(now), kinds, queues, limit)

        def work(
            conn: sqlite3.Connection,
        ) -> tuple[list[bool], list[ClaimedJob], list[Unreadable]]:
            held = [conn.execute(sql, params).rowcount == 1 for sql, params in finishes]
            if limit <= 0:
                return held, [], []
            jobs, unreadable = _claim(conn, claim_sql, next_claims, now)
            return held, jobs, unreadable

        with translated():
            held, jobs, unreadable = self._db.write(work)
        log_set_aside(unreadable)
        return held, jobs

    def publish(self, claim: Claim, *, result: str, now: datetime.datetime) -> bool:
        return self._fenced(_PUBLISH, claim, result=result, now=_stamp(now))

    def record(self, claim: Claim, outcome: Outcome, *, now: datetime.datetime) -> bool:
        sql, params = _outcome_statement(claim, outcome, now)
        with translated():
            changed = self._db.write(lambda conn: conn.execute(sql, params).rowcount)
        return bool(changed == 1)

    def put_back(self, claims: Collection[Claim], *, now: datetime.datetime) -> int:
        if not claims:
            return 0
        stamp = _stamp(now)

        def release(conn: sqlite3.Connection) -> int:
            return sum(
                conn.execute(_RELEASE, {**fence(claim), "now": stamp}).rowcount for claim in claims
            )

        with translated():
            return self._db.write(release)

    def running_jobs(self, owner: str | None) -> list[HeldJob]:
        sql = _RUNNING_UNOWNED if owner is None else _RUNNING_JOBS
        with translated(), self._db.reader() as conn:
            rows = conn.execute(sql, {"owner": owner}).fetchall()
        return [held_job(row, owner) for row in rows]

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

    def _lock_state(self, runner_id: str | None) -> LockState:
        return LockState.HELD if self._liveness.is_alive(runner_id) else LockState.ABSENT

    def settle_dead(
        self, settlements: Collection[Settlement], *, now: datetime.datetime
    ) -> Recovered:
        held = contextlib.ExitStack()  # dead runners' locks, kept until the settling commits

        def settle(conn: sqlite3.Connection) -> list[tuple[HeldJob, Outcome]]:
            recorded = []
            for settlement in settlements:
                verdict = settlement.verdict
                # Under the write lock: the evidence cannot change before the jobs do.
                if not self._evidence_holds(conn, verdict):
                    continue
                if (verdict.lock_absent or not verdict.registered) and not held.enter_context(
                    self._liveness.holding_if_dead(verdict.runner_id)
                ):
                    continue  # its owner holds its lock again
                for job, outcome in settlement.outcomes:
                    sql, params = _outcome_statement(job.claim, outcome, now)
                    params["runner_id"] = verdict.runner_id  # None: a row with no owner
                    if conn.execute(sql, params).rowcount == 1:
                        recorded.append((job, outcome))
                conn.execute("DELETE FROM jobtable_runners WHERE id IS ?", (verdict.runner_id,))
            return recorded

        with held, translated():
            recorded = self._db.write(settle)
        log_settled_unreadable([job for job, _ in recorded])
        return recovered(outcome for _, outcome in recorded)

    def _evidence_holds(self, conn: sqlite3.Connection, verdict: DeadRunner) -> bool:
        row = conn.execute(
            "SELECT beat FROM jobtable_runners WHERE id IS ?", (verdict.runner_id,)
        ).fetchone()
        if verdict.registered != (row is not None):
            return False
        return row is None or row[0] == verdict.beat

    # -- cancellation, queues, detail ----------------------------------------

    def cancel(self, job_id: str, *, now: datetime.datetime) -> CancelOutcome | None:
        """Cancel a job not yet running at once; ask a running one's runner to stop it.

        None when there is no such job.
        """
        params = {"id": job_id, "now": _stamp(now)}

        def work(conn: sqlite3.Connection) -> CancelOutcome | None:
            if conn.execute(_CANCEL_QUEUED, params).rowcount:
                return CancelOutcome.CANCELLED
            if conn.execute(_CANCEL_RUNNING, params).rowcount:
                return CancelOutcome.REQUESTED
            row = conn.execute("SELECT error FROM jobs WHERE id = :id", params).fetchone()
            if row is None:
                return None
            return CancelOutcome.CANCELLED if row[0] == "cancelled" else CancelOutcome.REFUSED

        with translated():
            return self._db.write(work)

    # -- observing and operating ----------------------------------------------

    def retry(self, job_id: str, *, now: datetime.datetime) -> RetryOutcome | None:
        params = {"id": job_id, "now": _stamp(now)}

        def work(conn: sqlite3.Connection) -> RetryOutcome | None:
            if conn.execute(_RETRY_FAILED, params).rowcount:
                return RetryOutcome.RETRIED
            found = conn.execute("SELECT 1 FROM jobs WHERE id = :id", params).fetchone()
            return None if found is None else RetryOutcome.REFUSED

        with translated():
            return self._db.write(work)

    def data_version(self) -> int:
        """A number that changes whenever another process commits to the database.

        Read on the writer connection, so this process's own commits do not
        change it: ``PRAGMA data_version`` counts other connections' commits.
        """
        with translated(), self._db.writer() as conn:
            return int(conn.execute("PRAGMA data_version").fetchone()[0])

    def watch_jobs(self, on_change: Callable[[str | None], None]) -> DataVersionWatcher:
        """Call ``on_change(None)`` soon after another process commits: any job may have
        changed (a file event names none)."""
        return self.watch(lambda: on_change(None))

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


def _claim(
    conn: sqlite3.Connection, sql: str, params: dict[str, Any], now: datetime.datetime
) -> tuple[list[ClaimedJob], list[Unreadable]]:
    """Claim in this transaction; a row that cannot be read is failed in it too."""
    return claim_readable_rows(
        conn.execute, sql, params, fail_sql=_FAIL, now=now, stamp=_stamp, parse_time=_parse_stamp
    )


def _outcome_statement(
    claim: Claim, outcome: Outcome, now: datetime.datetime
) -> tuple[str, dict[str, Any]]:
    """The statement that records ``outcome`` (one per shape) and its parameters."""
    return _RECORD[type(outcome)], outcome_parameters(claim, outcome, now, stamp=_stamp)
