"""The SQLite JobStore: the embedded default.

Durability: WAL with ``synchronous=FULL`` by default, so a job whose
``create`` returned survives power loss (``normal`` trades that for speed:
it survives a crash of the process, not of the machine).
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import importlib.resources
import json
import os
import sqlite3
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from jobtable.adapters.readable_rows import (
    Unreadable,
    held_job,
    log_set_aside,
    log_settled_unreadable,
)
from jobtable.adapters.sql_rows import (
    claim_readable_rows,
    fence,
    idempotency_parameters,
    job_detail,
    job_events,
    kept_answer,
    list_statement,
    new_job_parameters,
    outcome_parameters,
    public_job,
    queue_states,
    recovered,
    runner_parameters,
    runner_record,
)
from jobtable.adapters.sqlite.connections import BUSY_TIMEOUT_MS, Connections
from jobtable.adapters.sqlite.errors import translated
from jobtable.adapters.sqlite.liveness import LivenessLocks
from jobtable.adapters.sqlite.migrate import migrate
from jobtable.adapters.sqlite.watcher import DataVersionWatcher
from jobtable.core.errors import LivenessLockLostError, StoreUnavailableError
from jobtable.core.idempotency import KeepAnswer, KeptAnswer, stale_before
from jobtable.core.jobs import (
    CancelOutcome,
    Claim,
    ClaimedJob,
    Enqueued,
    HeldJob,
    Job,
    JobCount,
    JobDetail,
    JobEvents,
    JobFilter,
    NewJob,
    Pruned,
    QueueState,
    Recovered,
    RetryOutcome,
)
from jobtable.core.liveness import (
    DeadRunner,
    LivenessTerms,
    LockState,
    RunnerInfo,
    RunnerRecord,
    RunnerSighting,
    Settlement,
)
from jobtable.core.outcome import Fail, Outcome, RunAgain, Succeed

_OPEN_RETRY_DELAYS = (0.05, 0.1, 0.2, 0.4, 0.8)


def _query(name: str) -> str:
    return (
        importlib.resources.files("jobtable.adapters.sqlite")
        .joinpath(f"queries/{name}.sql")
        .read_text()
    )


_CREATE = _query("create_job")
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
_PROMOTE_DUE = _query("promote_due")
_DETAIL = _query("job_detail")
_AHEAD = _query("jobs_ahead")
_CANCEL_QUEUED = _query("cancel_queued")
_CANCEL_RUNNING = _query("cancel_running")
_CANCEL_REQUESTS = _query("cancel_requests")
_QUEUES = _query("queues")
_SET_PAUSED = _query("set_queue_paused")
_RESUME = _query("resume_queue")
_PAUSED = "SELECT name FROM jobtable_queues WHERE paused"
_FIND_UNIQUE = "SELECT id FROM jobs WHERE kind = :kind AND unique_key = :unique_key"
_SCHEDULED_TIMES = "SELECT run_at FROM jobs WHERE status = 'scheduled' ORDER BY run_at"
_RECORD_SCHEDULE = (
    "INSERT INTO jobtable_schedules (name, first_seen) VALUES (:name, :now)"
    " ON CONFLICT (name) DO NOTHING"
)
_FIRST_SEEN = "SELECT first_seen FROM jobtable_schedules WHERE name = :name"
_FORGET_STALE_KEY = (
    "DELETE FROM jobtable_idempotency WHERE key = :key AND ("
    "created_at < :answered_before OR (status IS NULL AND created_at < :unanswered_before))"
)
_TAKE_KEY = (
    "INSERT INTO jobtable_idempotency (key, request_hash, created_at) VALUES (:key, :hash, :now)"
    " ON CONFLICT (key) DO NOTHING"
)
_KEPT_ANSWER = (
    "SELECT request_hash, status, body, created_at FROM jobtable_idempotency WHERE key = :key"
)
_ANSWER_KEY = "UPDATE jobtable_idempotency SET status = :status, body = :body WHERE key = :key"
_DROP_UNANSWERED_KEY = "DELETE FROM jobtable_idempotency WHERE key = ? AND status IS NULL"
PROMOTE_BATCH = 1000
"""Scheduled jobs made due per statement: a backlog is promoted in bounded steps."""
_JOB_EVENTS = _query("job_events")
_RETRY_FAILED = _query("retry_failed_job")
_PRUNE = {status: _query(f"prune_{status}") for status in ("succeeded", "failed")}
_PRUNE_IDEMPOTENCY = _query("prune_idempotency")
_TAKE_LEASE = _query("take_lease")
_JOB_COUNTS = _query("job_counts")
_REGISTER = _query("register_runner")
_BEAT = _query("beat_runner")
_RUNNERS = _query("runners")
_GET = _query("get_job")


def _stamp(now: datetime.datetime) -> str:
    return now.astimezone(datetime.UTC).isoformat(timespec="microseconds")


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


def _named(name: str) -> str:
    return f":{name}"


def _parse_stamp(text: Any) -> datetime.datetime:
    """A stored time; one written without an offset (by a tool, say) is UTC, as ours are."""
    parsed = datetime.datetime.fromisoformat(str(text))
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=datetime.UTC)


class SqliteStore:
    liveness_terms = LivenessTerms()
    """One host, OS file locks: a lock is absent only when its process is gone (or its file
    was removed, which the owner notices within a tenth of a second). No lease needed."""

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

    def create(
        self, job: NewJob, *, now: datetime.datetime, keep: KeepAnswer | None = None
    ) -> Enqueued:
        def work(conn: sqlite3.Connection) -> Enqueued:
            enqueued = _insert(conn, job, now)
            _keep(conn, keep, [enqueued])
            return enqueued

        with translated():
            return self._db.write(work)

    def create_many(
        self, jobs: Collection[NewJob], *, now: datetime.datetime, keep: KeepAnswer | None = None
    ) -> list[Enqueued]:
        """Store every job in one transaction: all of them, or (on an error) none.

        Jobs without a unique key (nothing to look up on a conflict) go in as one
        statement run over every row.
        """

        def work(conn: sqlite3.Connection) -> list[Enqueued]:
            if any(job.unique_key for job in jobs):
                enqueued = [_insert(conn, job, now) for job in jobs]
            else:
                params = [new_job_parameters(job, now, stamp=_stamp) for job in jobs]
                conn.executemany(_CREATE, params)
                enqueued = [Enqueued(job.id) for job in jobs]
            _keep(conn, keep, enqueued)
            return enqueued

        with translated():
            return self._db.write(work)

    def create_in(
        self, connection: sqlite3.Connection, job: NewJob, *, now: datetime.datetime
    ) -> Enqueued:
        """Store ``job`` on the application's own connection, inside its transaction.

        Nothing is committed here: the job exists once the application
        commits, and not at all if it rolls back. Runners in this and other
        processes notice the commit through the database file, as they do
        any other process's enqueue.
        """
        if not isinstance(connection, sqlite3.Connection):
            raise TypeError("connection must be a sqlite3.Connection to this database")
        with translated():
            return _insert(connection, job, now)

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

    def promote_due(self, *, now: datetime.datetime) -> int:
        """Make scheduled jobs that are due claimable; how many it moved."""
        params = {"now": _stamp(now), "limit": PROMOTE_BATCH}
        moved = 0
        while True:
            with translated():
                count = self._db.write(lambda conn: conn.execute(_PROMOTE_DUE, params).rowcount)
            moved += count
            if count < PROMOTE_BATCH:
                return moved

    def next_due(self) -> datetime.datetime | None:
        """When the earliest scheduled job falls due (None: none is scheduled).

        A time that cannot be read is passed over: it must not hide the jobs due after it.
        """
        with translated(), self._db.reader() as conn:
            cursor = conn.execute(_SCHEDULED_TIMES)
            try:
                for (run_at,) in cursor:
                    with contextlib.suppress(ValueError):
                        return _parse_stamp(run_at)
            finally:
                cursor.close()  # no statement left open: it would hold a read transaction
        return None

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

    def release_claims(self, claims: Collection[Claim], *, now: datetime.datetime) -> int:
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

    # -- liveness and the runners table ----------------------------------

    def register_runner(self, info: RunnerInfo, *, now: datetime.datetime) -> None:
        try:
            self._liveness.hold(info.id)
        except OSError:
            raise StoreUnavailableError("database unavailable") from None
        params = {**runner_parameters(info), "started_at": _stamp(info.started_at)}
        params["now"] = _stamp(now)
        try:
            with translated():
                self._db.write(lambda conn: conn.execute(_REGISTER, params))
        except BaseException:
            self._liveness.release(info.id)
            raise

    def confirm_liveness(self, runner_id: str, *, timeout: float) -> bool:
        try:
            return self._liveness.confirm(runner_id)
        except OSError:
            raise LivenessLockLostError() from None

    def beat(self, runner_id: str, *, busy: int, now: datetime.datetime) -> bool:
        params = {"id": runner_id, "busy": busy, "now": _stamp(now)}
        with translated():
            changed = self._db.write(lambda conn: conn.execute(_BEAT, params).rowcount)
        return bool(changed == 1)

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

    def unregister_runner(self, runner_id: str) -> None:
        try:
            with translated():
                self._db.write(
                    lambda conn: conn.execute(
                        "DELETE FROM jobtable_runners WHERE id = ?", (runner_id,)
                    )
                )
        finally:
            self._liveness.release(runner_id)

    def runners(self) -> list[RunnerRecord]:
        with translated(), self._db.reader() as conn:
            rows = conn.execute(_RUNNERS).fetchall()
        return [runner_record(row, parse_time=_parse_stamp) for row in rows]

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

    def cancel_requests(self, runner_id: str) -> list[Claim]:
        """Jobs running under ``runner_id`` that someone asked to cancel."""
        with translated(), self._db.reader() as conn:
            rows = conn.execute(_CANCEL_REQUESTS, {"runner_id": runner_id}).fetchall()
        return [
            Claim(job_id=job_id, runner_id=runner_id, attempt=attempt) for job_id, attempt in rows
        ]

    def set_queue_paused(self, name: str, *, paused: bool, now: datetime.datetime) -> None:
        """Pause or resume a queue for every process: claims pass a paused queue's jobs by."""
        params = {"name": name, "paused": int(paused), "now": _stamp(now)}
        sql = _SET_PAUSED if paused else _RESUME  # a resumed queue keeps no row
        with translated():
            self._db.write(lambda conn: conn.execute(sql, params))

    def queues(self) -> list[QueueState]:
        """Every queue that holds jobs or is paused, with its jobs counted by status."""
        with translated(), self._db.reader() as conn:
            counted = conn.execute(_QUEUES).fetchall()
            paused = conn.execute(_PAUSED).fetchall()
        return queue_states(counted, [name for (name,) in paused])

    def paused_queues(self) -> frozenset[str]:
        with translated(), self._db.reader() as conn:
            rows = conn.execute(_PAUSED).fetchall()
        return frozenset(name for (name,) in rows)

    def begin_idempotent(
        self, key: str, request_hash: str, *, now: datetime.datetime
    ) -> KeptAnswer | None:
        params = idempotency_parameters(key, request_hash, now, stamp=_stamp)

        def work(conn: sqlite3.Connection) -> Any:
            conn.execute(_FORGET_STALE_KEY, params)
            if conn.execute(_TAKE_KEY, params).rowcount == 1:
                return None
            return conn.execute(_KEPT_ANSWER, params).fetchone()

        with translated():
            row = self._db.write(work)
        return None if row is None else kept_answer(row, _parse_stamp)

    def finish_idempotent(self, key: str, *, status: int, body: str) -> None:
        params = {"key": key, "status": status, "body": body}
        with translated():
            self._db.write(lambda conn: conn.execute(_ANSWER_KEY, params))

    def drop_idempotent(self, key: str) -> None:
        with translated():
            self._db.write(lambda conn: conn.execute(_DROP_UNANSWERED_KEY, (key,)))

    def record_schedule(self, name: str, *, now: datetime.datetime) -> datetime.datetime:
        params = {"name": name, "now": _stamp(now)}

        def work(conn: sqlite3.Connection) -> Any:
            conn.execute(_RECORD_SCHEDULE, params)
            return conn.execute(_FIRST_SEEN, params).fetchone()[0]

        with translated():
            return _parse_stamp(self._db.write(work))

    def detail(self, job_id: str) -> JobDetail | None:
        """Everything about the job that may be shown, or None when there is none."""
        with translated(), self._db.reader() as conn:
            rows = conn.execute(_DETAIL, {"id": job_id}).fetchall()
        return job_detail(rows[0], parse_time=_parse_stamp) if rows else None

    def jobs_ahead(self, detail: JobDetail) -> int:
        """Due jobs of the same kind and queue that come before this one in claim order."""
        params = {
            "kind": detail.job.kind,
            "queue": detail.queue,
            "priority": detail.priority,
            "run_at": _stamp(detail.run_at),
            "id": detail.job.id,
        }
        with translated(), self._db.reader() as conn:
            ((count,),) = conn.execute(_AHEAD, params).fetchall()  # every row: no open read
        return int(count)

    def get(self, job_id: str) -> Job | None:
        with translated(), self._db.reader() as conn:
            rows = conn.execute(_GET, {"id": job_id}).fetchall()
        return public_job(rows[0]) if rows else None

    # -- observing and operating ----------------------------------------------

    def list_jobs(self, which: JobFilter, *, limit: int, after: str | None) -> list[Job]:
        sql, params = list_statement(which, limit=limit, after=after, placeholder=_named)
        with translated(), self._db.reader() as conn:
            rows = conn.execute(sql, params).fetchall()
        return [public_job(row) for row in rows]

    def events(self, job_id: str, *, after: int | None) -> JobEvents | None:
        params = {"id": job_id, "after": 0 if after is None else after}
        with translated(), self._db.reader() as conn:
            rows = conn.execute(_JOB_EVENTS, params).fetchall()
        return job_events(rows, job_id, after=after)

    def retry(self, job_id: str, *, now: datetime.datetime) -> RetryOutcome | None:
        params = {"id": job_id, "now": _stamp(now)}

        def work(conn: sqlite3.Connection) -> RetryOutcome | None:
            if conn.execute(_RETRY_FAILED, params).rowcount:
                return RetryOutcome.RETRIED
            found = conn.execute("SELECT 1 FROM jobs WHERE id = :id", params).fetchone()
            return None if found is None else RetryOutcome.REFUSED

        with translated():
            return self._db.write(work)

    def take_lease(
        self, name: str, *, holder: str, until: datetime.datetime, now: datetime.datetime
    ) -> bool:
        params = {"name": name, "holder": holder, "until": _stamp(until), "now": _stamp(now)}
        with translated():
            taken = self._db.write(lambda conn: conn.execute(_TAKE_LEASE, params).rowcount)
        return bool(taken)

    def prune(
        self, cutoffs: Mapping[str, datetime.datetime], *, now: datetime.datetime, limit: int
    ) -> Pruned:
        answered_before, _ = stale_before(now)

        def work(conn: sqlite3.Connection) -> Pruned:
            deleted = 0
            for status, cutoff in cutoffs.items():
                if deleted < limit:
                    params = {
                        "cutoff": _stamp(cutoff),
                        "now": _stamp(now),
                        "limit": limit - deleted,
                    }
                    deleted += conn.execute(_PRUNE[status], params).rowcount
            kept_past = {"answered_before": _stamp(answered_before), "limit": limit}
            keys = conn.execute(_PRUNE_IDEMPOTENCY, kept_past).rowcount
            return Pruned(jobs=deleted, keys=keys)

        with translated():
            return self._db.write(work)

    def job_counts(self) -> list[JobCount]:
        with translated(), self._db.reader() as conn:
            rows = conn.execute(_JOB_COUNTS).fetchall()
        return [
            JobCount(queue=queue, kind=kind, status=status, count=count)
            for queue, kind, status, count in rows
        ]

    def row(self, job_id: str) -> dict[str, Any] | None:
        """Every column of the job's row, for inspection and tests."""
        with translated(), self._db.reader() as conn:
            cursor = conn.execute("SELECT * FROM jobs WHERE id = ?", (job_id,))
            found = cursor.fetchall()
        if not found:
            return None
        return dict(zip([column[0] for column in cursor.description], found[0], strict=True))

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


def _insert(conn: sqlite3.Connection, job: NewJob, now: datetime.datetime) -> Enqueued:
    """Insert one job; with a unique key already held, the holder's id instead."""
    params = new_job_parameters(job, now, stamp=_stamp)
    if conn.execute(_CREATE, params).rowcount == 1:
        return Enqueued(job.id)
    row = conn.execute(_FIND_UNIQUE, params).fetchone()
    return Enqueued(row[0], duplicate=True)


def _keep(conn: sqlite3.Connection, keep: KeepAnswer | None, enqueued: list[Enqueued]) -> None:
    """Keep the idempotency key's answer in the enqueue's transaction."""
    if keep is not None:
        status, body = keep.answer(enqueued)
        conn.execute(_ANSWER_KEY, {"key": keep.key, "status": status, "body": body})


def _outcome_statement(
    claim: Claim, outcome: Outcome, now: datetime.datetime
) -> tuple[str, dict[str, Any]]:
    """The statement that records ``outcome`` (one per shape) and its parameters."""
    return _RECORD[type(outcome)], outcome_parameters(claim, outcome, now, stamp=_stamp)
