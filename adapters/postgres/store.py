"""The PostgreSQL JobStore: many worker processes on many hosts.

Claims use ``FOR UPDATE SKIP LOCKED`` in one statement; connections come
from a psycopg pool. The database URL (and its password) is never logged or
put in an error: errors carry only the core's fixed categories.

Liveness (core/liveness.py): each runner holds an advisory lock in a
transaction of its own (lock_session.py), whose absence on the server it was
taken on shows a crash within a second, and raises a beat in
``jobtable_runners`` every sweep, which survives a failover and a pooler. A
runner whose beat stops for ``liveness_timeout`` seconds is dead; its lock
session is ended by the server after as long without a word.

Behind PgBouncer in transaction mode (``pooler=True``): no prepared
statements, and LISTEN cannot work through it, so wakes come from a direct
``listen_url`` or, without one, from a look every second.
"""

from __future__ import annotations

import contextlib
import datetime
import importlib.resources
import os
import threading
import time
import weakref
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Any

import psycopg
from psycopg.conninfo import make_conninfo
from psycopg_pool import ConnectionPool

from jobtable.adapters.postgres.errors import translated
from jobtable.adapters.postgres.listener import (
    FALLBACK_INTERVAL,
    EventListener,
    NotifyListener,
    PollingWatcher,
)
from jobtable.adapters.postgres.lock_session import LockSession, neuter_descriptor
from jobtable.adapters.postgres.migrate import migrate
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
from jobtable.core.errors import StoreError
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

DEFAULT_POOL_SIZE = 10
CONNECT_TIMEOUT = 5.0
POOL_WAIT = 2.0
"""Seconds a call waits for a pooled connection: while the server is down, a POST answers
503 after this long instead of hanging (every query takes milliseconds, so a healthy pool
never makes a caller wait this long)."""
LIVENESS_TIMEOUT = 20.0
"""Seconds of silence after which the server ends a runner's lock session and others may
judge it dead by its beat: the bound on settling the jobs of a host that vanished."""
MIN_LIVENESS_TIMEOUT = 5.0
"""Below this the owner's margin (at least 2 s) and a check's deadline leave it no time."""
LOCK_CONNECT_TIMEOUT = 2.0
POOLER_POLL_INTERVAL = 1.0
"""Behind a transaction pooler with no direct URL to LISTEN on: look for new jobs this often."""


def _query(name: str) -> str:
    return (
        importlib.resources.files("jobtable.adapters.postgres")
        .joinpath(f"queries/{name}.sql")
        .read_text()
    )


_CREATE = _query("create_job")
_CLAIM = _query("claim_next_job")
_CLAIM_ANY = _query("claim_any_job")
_PUBLISH = _query("publish_job_result")
_SUCCEED_MANY = _query("succeed_jobs")
_FAIL = _query("fail_job")
_RUN_AGAIN = _query("run_job_again")
_RELEASE = _query("release_claim")
_RUNNING_JOBS = _query("running_jobs")
_RUNNING_UNOWNED = _RUNNING_JOBS.replace("claimed_by = %(owner)s", "claimed_by IS NULL")
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
_FIND_UNIQUE = "SELECT id FROM jobs WHERE kind = %(kind)s AND unique_key = %(unique_key)s"
_NEXT_DUE = (  # a time Python cannot hold (infinity, past year 9999) is passed over
    "SELECT min(run_at) FROM jobs WHERE status = 'scheduled'"
    " AND run_at >= '0001-01-02' AND run_at < '9999-12-30'"
)
_RECORD_SCHEDULE = (
    "INSERT INTO jobtable_schedules (name, first_seen) VALUES (%(name)s, %(now)s)"
    " ON CONFLICT (name) DO NOTHING"
)
_FIRST_SEEN = "SELECT first_seen FROM jobtable_schedules WHERE name = %(name)s"
_FORGET_STALE_KEY = (
    "DELETE FROM jobtable_idempotency WHERE key = %(key)s AND ("
    "created_at < %(answered_before)s"
    " OR (status IS NULL AND created_at < %(unanswered_before)s))"
)
_TAKE_KEY = (
    "INSERT INTO jobtable_idempotency (key, request_hash, created_at)"
    " VALUES (%(key)s, %(hash)s, %(now)s) ON CONFLICT (key) DO NOTHING"
)
_KEPT_ANSWER = (
    "SELECT request_hash, status, body, created_at FROM jobtable_idempotency WHERE key = %(key)s"
)
_ANSWER_KEY = (
    "UPDATE jobtable_idempotency SET status = %(status)s, body = %(body)s WHERE key = %(key)s"
)
UNIQUE_TRIES = 5
"""Inserts tried while a unique key's holder keeps letting it go in between (it never does
twice in a row in practice)."""
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
_SIGHT = _query("sight_runners")
_TAKE_DEAD_LOCK = (
    "SELECT pg_try_advisory_xact_lock("
    "hashtextextended(coalesce(%(owner)s, ''), 0) & 4611686018427387903)"
)
_RUNNERS = _query("runners")
_GET = _query("get_job")
_NOTIFY = "SELECT pg_notify(%(channel)s, '')"
RELEASE_TIMEOUT = 1.0
"""Seconds a runner letting go of its lock waits for the server to say it has."""


def _names(names: Collection[str] | None) -> list[str] | None:
    """Kinds or queues a claim may take, as the text[] the claim query reads (None: any)."""
    return None if names is None else sorted(names)


def _claim_parameters(
    runner_id: str,
    now: datetime.datetime,
    kinds: Collection[str] | None,
    queues: Collection[str] | None,
    limit: int = 1,
) -> tuple[str, dict[str, Any]]:
    params = {
        "runner_id": runner_id,
        "now": now,
        "kinds": _names(kinds),
        "queues": _names(queues),
        "limit": limit,
    }
    return (_CLAIM_ANY if kinds is None else _CLAIM), params


def _successes(outcomes: Sequence[tuple[Claim, Outcome]], now: datetime.datetime) -> dict[str, Any]:
    """The succeed_jobs arrays: one row per successful outcome, with its claim's fence."""
    done = [(claim, outcome) for claim, outcome in outcomes if isinstance(outcome, Succeed)]
    return {
        "ids": [claim.job_id for claim, _ in done],
        "runners": [claim.runner_id for claim, _ in done],
        "attempts": [claim.attempt for claim, _ in done],
        "results": [outcome.result for _, outcome in done],
        "now": now,
    }


@contextlib.contextmanager
def _one_round_trip(conn: psycopg.Connection) -> Iterator[None]:
    """Send every statement of the block at once, as one transaction, with one Sync.

    In a pipeline, statements up to a Sync are one transaction when no BEGIN
    precedes them: the server commits them together at the Sync, or (one
    failing) runs none of the rest and rolls back them all. psycopg's own
    transaction() waits for the server at BEGIN and at COMMIT: three round
    trips where this takes one, most of a small batch's time on loopback.
    The statements' results are read after the block. Should the block raise
    before its end (in the client: a value that cannot be sent, an
    interrupt), the connection is closed before any Sync, so the server
    rolls back what was sent instead of committing half a batch. The pooled
    connection goes back out of autocommit; one that cannot (a closed one)
    is closed, so the pool drops it instead of handing it out changed.
    """
    conn.autocommit = True
    try:
        with conn.pipeline():
            try:
                yield
            except BaseException:
                conn.close()  # no Sync: nothing of the block commits
                raise
    finally:
        try:
            conn.autocommit = False
        except psycopg.Error:
            conn.close()


def _outcome_statement(
    claim: Claim, outcome: Outcome, now: datetime.datetime
) -> tuple[str, dict[str, Any]]:
    """The statement that records ``outcome`` (one per shape) and its parameters."""
    if isinstance(outcome, Succeed):
        return _SUCCEED_MANY, _successes([(claim, outcome)], now)
    return (_FAIL if isinstance(outcome, Fail) else _RUN_AGAIN), outcome_parameters(
        claim, outcome, now
    )


def _named(name: str) -> str:
    return f"%({name})s"


def _same(value: Any) -> Any:
    return value


def _as_time(value: Any) -> datetime.datetime:
    """A timestamptz column (a datetime) or a time inside jsonb (ISO text)."""
    if isinstance(value, datetime.datetime):
        return value
    return datetime.datetime.fromisoformat(str(value))


_open_stores: weakref.WeakSet[PostgresStore] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for store in list(_open_stores):
        store.forget_after_fork()


os.register_at_fork(after_in_child=_after_fork_in_child)


class PostgresStore:
    def __init__(
        self,
        pool: ConnectionPool,
        conninfo: str = "",
        *,
        options: str = "",
        listen_conninfo: str | None = None,
        pooler: bool = False,
        liveness_timeout: float = LIVENESS_TIMEOUT,
    ) -> None:
        if liveness_timeout < MIN_LIVENESS_TIMEOUT:
            raise ValueError(f"liveness_timeout must be at least {MIN_LIVENESS_TIMEOUT} s")
        self._pool = pool
        self._conninfo = make_conninfo(conninfo, options=options) if options else conninfo
        self._listen_conninfo = listen_conninfo
        self._pooler = pooler
        self._pid = os.getpid()
        self._liveness_timeout = liveness_timeout
        self.liveness_terms = LivenessTerms(lease=liveness_timeout, lock_timeout=liveness_timeout)
        self._guard = threading.Lock()
        self._sessions: dict[str, LockSession] = {}  # runner id -> the session holding its lock
        self._locked_on: dict[str, str] = {}  # runner id -> the server its lock is on
        self._listeners: list[NotifyListener] = []
        self.channel = "jobtable_jobs_public"
        """The NOTIFY channel of this store's jobs table: one per schema."""
        self.events_channel = "jobtable_events_public"
        """The channel the jobs_changed trigger tells of each job's changes on."""
        self.applied_at_open: list[str] = []
        _open_stores.add(self)

    @classmethod
    def open(
        cls,
        url: str,
        *,
        now: datetime.datetime,
        schema: str | None = None,
        pool_size: int = DEFAULT_POOL_SIZE,
        pooler: bool = False,
        listen_url: str | None = None,
        liveness_timeout: float = LIVENESS_TIMEOUT,
    ) -> PostgresStore:
        """Connect, and bring the schema up to date. Raises StoreError when it cannot.

        ``schema`` puts the tables in that schema (it must exist), as tests
        do to get a fresh database each. ``pooler`` says ``url`` goes through
        PgBouncer in transaction mode; ``listen_url``, a direct URL to the
        same database, then keeps wakes instant.
        """
        options = f"-c search_path={schema}" if schema else ""
        kwargs: dict[str, Any] = {"connect_timeout": int(CONNECT_TIMEOUT)}
        if options:
            kwargs["options"] = options
        if pooler:
            kwargs["prepare_threshold"] = None  # PgBouncer 1.18 keeps no prepared statements
        pool = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            kwargs=kwargs,
            timeout=POOL_WAIT,
            open=False,
            name="jobtable",
        )
        listen = None
        if listen_url:
            listen = make_conninfo(listen_url, options=options) if options else listen_url
        store = cls(
            pool,
            url,
            options=options,
            listen_conninfo=listen,
            pooler=pooler,
            liveness_timeout=liveness_timeout,
        )
        try:
            # Migrate first, on a connection of its own: an unreachable server
            # fails here at once, not after the pool's retries.
            store.applied_at_open = store.migrate(now=now)
            with translated():
                pool.open(wait=True, timeout=CONNECT_TIMEOUT)
        except BaseException:
            store.close()
            raise
        return store

    def migrate(self, *, now: datetime.datetime) -> list[str]:
        """Apply pending migrations; returns the versions applied (none when up to date)."""
        with translated(), self._own_connection() as conn:
            applied = migrate(conn, now=now)
            row = conn.execute("SELECT current_schema()").fetchone()
        # The channel follows the schema the tables are in, however it was chosen
        # (the schema argument, options in the URL, the user's default search_path).
        schema = row[0] if row and row[0] else "public"
        self.channel = f"jobtable_jobs_{schema}"[:63]
        self.events_channel = f"jobtable_events_{schema}"[:63]  # as the jobs_changed trigger
        return applied

    def create(
        self, job: NewJob, *, now: datetime.datetime, keep: KeepAnswer | None = None
    ) -> Enqueued:
        """One round trip when the job has no unique key (the insert and its wake, one
        transaction); with one, the holder is read when the key is taken."""
        if keep is not None:
            (enqueued,) = self._create_kept([job], now, keep)
            return enqueued
        with translated(), self._pool.connection() as conn:
            if job.unique_key is None:
                with _one_round_trip(conn):
                    conn.execute(_CREATE, new_job_parameters(job, now, stamp=_same))
                    self._notify(conn)
                return Enqueued(job.id)
            return self._insert(conn, job, now)

    def create_many(
        self, jobs: Collection[NewJob], *, now: datetime.datetime, keep: KeepAnswer | None = None
    ) -> list[Enqueued]:
        """Store every job in one transaction: all of them, or (on an error) none."""
        if keep is not None:
            return self._create_kept(jobs, now, keep)
        if not any(job.unique_key for job in jobs):  # none can conflict: one round trip
            params = [new_job_parameters(job, now, stamp=_same) for job in jobs]
            with (
                translated(),
                self._pool.connection() as conn,
                _one_round_trip(conn),
                conn.cursor() as cursor,
            ):
                cursor.executemany(_CREATE, params)
                self._notify(conn)
            return [Enqueued(job.id) for job in jobs]
        with translated(), self._pool.connection() as conn, conn.transaction():
            enqueued = [self._insert(conn, job, now, notify=False) for job in jobs]
            self._notify(conn)
            return enqueued

    def _create_kept(
        self, jobs: Collection[NewJob], now: datetime.datetime, keep: KeepAnswer
    ) -> list[Enqueued]:
        """The jobs and the idempotency key's answer, in one transaction."""
        with translated(), self._pool.connection() as conn, conn.transaction():
            enqueued = [self._insert(conn, job, now, notify=False) for job in jobs]
            self._notify(conn)
            status, body = keep.answer(enqueued)
            conn.execute(_ANSWER_KEY, {"key": keep.key, "status": status, "body": body})
            return enqueued

    def create_in(
        self, connection: psycopg.Connection, job: NewJob, *, now: datetime.datetime
    ) -> Enqueued:
        """Store ``job`` on the application's own psycopg connection, inside its transaction.

        Nothing is committed here: the job exists once the application
        commits, and not at all if it rolls back; the wake (NOTIFY) is
        delivered at that commit too.
        """
        if not isinstance(connection, psycopg.Connection):
            raise TypeError("connection must be a psycopg.Connection to this database")
        with translated():
            return self._insert(connection, job, now)

    def _insert(
        self, conn: psycopg.Connection, job: NewJob, now: datetime.datetime, *, notify: bool = True
    ) -> Enqueued:
        """Insert one job; with a unique key already held, the holder's id instead."""
        params = new_job_parameters(job, now, stamp=_same)
        for _ in range(UNIQUE_TRIES):
            if conn.execute(_CREATE, params).fetchone() is not None:
                if notify:
                    self._notify(conn)
                return Enqueued(job.id)
            holder = conn.execute(_FIND_UNIQUE, params).fetchone()
            if holder is not None:
                return Enqueued(holder[0], duplicate=True)
            # The holder finished and let its key go in between: try the insert again.
        raise StoreError("database error")

    def _notify(self, conn: psycopg.Connection) -> None:
        conn.execute(_NOTIFY, {"channel": self.channel})  # delivered at commit

    def watch(
        self, on_change: Callable[[], None], *, fallback_interval: float = FALLBACK_INTERVAL
    ) -> NotifyListener | PollingWatcher:
        """Call ``on_change`` when any process enqueues here (and every few seconds anyway).

        Behind a transaction pooler LISTEN cannot work: without a direct
        ``listen_url`` this looks every second instead, and says so.
        """
        if self._pooler and self._listen_conninfo is None:
            return PollingWatcher(on_change, interval=POOLER_POLL_INTERVAL).start()
        listener = NotifyListener(
            self._listen_connection, self.channel, on_change, fallback_interval=fallback_interval
        ).start()
        self._listeners.append(listener)
        return listener

    def _own_connection(self) -> psycopg.Connection:
        """An autocommit connection outside the pool, for migrating."""
        return psycopg.connect(
            self._conninfo,
            autocommit=True,
            connect_timeout=int(CONNECT_TIMEOUT),
            prepare_threshold=None,
        )

    def _listen_connection(self) -> psycopg.Connection:
        return psycopg.connect(
            self._listen_conninfo or self._conninfo,
            autocommit=True,
            connect_timeout=int(CONNECT_TIMEOUT),
        )

    def claim_next(
        self,
        *,
        runner_id: str,
        now: datetime.datetime,
        kinds: Collection[str] | None = None,
        queues: Collection[str] | None = None,
    ) -> ClaimedJob | None:
        sql, params = _claim_parameters(runner_id, now, kinds, queues)
        with translated(), self._pool.connection() as conn:
            jobs, unreadable = claim_readable_rows(
                conn.execute, sql, params, fail_sql=_FAIL, now=now, stamp=_same, parse_time=_as_time
            )
        log_set_aside(unreadable)
        return jobs[0] if jobs else None

    def promote_due(self, *, now: datetime.datetime) -> int:
        """Make scheduled jobs that are due claimable; how many it moved."""
        params = {"now": now, "limit": PROMOTE_BATCH}
        moved = 0
        while True:
            with translated(), self._pool.connection() as conn:
                count = conn.execute(_PROMOTE_DUE, params).rowcount
                if count:
                    self._notify(conn)  # other processes' workers may claim them too
            moved += count
            if count < PROMOTE_BATCH:
                return moved

    def next_due(self) -> datetime.datetime | None:
        """When the earliest scheduled job falls due (None: none is scheduled)."""
        with translated(), self._pool.connection() as conn:
            row = conn.execute(_NEXT_DUE).fetchone()
        return None if row is None else row[0]

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
        """One round trip and one commit for the whole batch: its successes in one
        statement, any other outcome in one each, and the claim."""
        successes = _successes(outcomes, now)
        others = [
            _outcome_statement(claim, outcome, now)
            for claim, outcome in outcomes
            if not isinstance(outcome, Succeed)
        ]
        claim_sql, next_claims = _claim_parameters(runner_id, now, kinds, queues, limit)
        with translated(), self._pool.connection() as conn:
            with _one_round_trip(conn):
                succeeding = conn.execute(_SUCCEED_MANY, successes) if successes["ids"] else None
                recorded = [conn.execute(sql, params) for sql, params in others]
                claiming = conn.execute(claim_sql, next_claims) if limit > 0 else None
            succeeded = {row[0] for row in succeeding.fetchall()} if succeeding else set()
            jobs: list[ClaimedJob] = []
            unreadable: list[Unreadable] = []
            if claiming is not None:  # rows it cannot read: failed, and others claimed, after
                rows = claiming.fetchall()
                jobs, unreadable = claim_readable_rows(
                    conn.execute,
                    claim_sql,
                    next_claims,
                    fail_sql=_FAIL,
                    now=now,
                    stamp=_same,
                    parse_time=_as_time,
                    claimed=rows,
                )
        log_set_aside(unreadable)
        counts = iter([cursor.rowcount == 1 for cursor in recorded])
        held = [
            claim.job_id in succeeded if isinstance(outcome, Succeed) else next(counts)
            for claim, outcome in outcomes
        ]
        return held, jobs

    def publish(self, claim: Claim, *, result: str, now: datetime.datetime) -> bool:
        return self._fenced(_PUBLISH, claim, result=result, now=now)

    def record(self, claim: Claim, outcome: Outcome, *, now: datetime.datetime) -> bool:
        """One statement; a job queued again wakes the listeners (it may be due at once)."""
        sql, params = _outcome_statement(claim, outcome, now)
        with translated(), self._pool.connection() as conn:
            changed = conn.execute(sql, params).rowcount == 1
            if changed and isinstance(outcome, RunAgain):
                self._notify(conn)
        return changed

    def release_claims(self, claims: Collection[Claim], *, now: datetime.datetime) -> int:
        if not claims:
            return 0
        moved = 0
        with translated(), self._pool.connection() as conn:
            for claim in claims:
                moved += conn.execute(_RELEASE, {**fence(claim), "now": now}).rowcount
            if moved:
                conn.execute(_NOTIFY, {"channel": self.channel})
        return moved

    def running_jobs(self, owner: str | None) -> list[HeldJob]:
        sql = _RUNNING_UNOWNED if owner is None else _RUNNING_JOBS
        with translated(), self._pool.connection() as conn:
            rows = conn.execute(sql, {"owner": owner}).fetchall()
        return [held_job(row, owner) for row in rows]

    # -- liveness and the runners table ----------------------------------

    def register_runner(self, info: RunnerInfo, *, now: datetime.datetime) -> None:
        """Take the lock (or keep the one this store holds already) and write the row."""
        self._check_not_forked()
        self.confirm_liveness(info.id, timeout=CONNECT_TIMEOUT)
        params = {**runner_parameters(info), "now": now, "locked_on": self._locked_on[info.id]}
        try:
            with translated(), self._pool.connection() as conn:
                conn.execute(_REGISTER, params)
        except BaseException:
            self._drop_lock(info.id)
            raise

    def _take_lock(self, runner_id: str, *, timeout: float) -> None:
        session = LockSession(self._conninfo, runner_id, session_timeout=self._liveness_timeout)
        incarnation = session.open(timeout)
        with self._guard:
            previous = self._sessions.pop(runner_id, None)
            self._sessions[runner_id] = session
            self._locked_on[runner_id] = incarnation
        if previous is not None:
            previous.close()

    def _drop_lock(self, runner_id: str) -> None:
        with self._guard:
            session = self._sessions.pop(runner_id, None)
            self._locked_on.pop(runner_id, None)
        if session is not None:
            session.release(RELEASE_TIMEOUT)  # let go before returning: a sweep may look next

    def confirm_liveness(self, runner_id: str, *, timeout: float) -> bool:
        """A round trip on the lock session; a new session and lock if it is gone.

        Each with ``timeout``: a silent network (a partition) fails the check
        instead of hanging it.
        """
        self._check_not_forked()
        deadline = time.monotonic() + timeout  # one budget for the check and a re-take
        with self._guard:
            session = self._sessions.get(runner_id)
        if session is not None:
            try:
                session.check(min(timeout, LOCK_CONNECT_TIMEOUT))
                return True
            except StoreError:
                pass  # the session ended (killed, restarted, failed over): take the lock again
        self._take_lock(runner_id, timeout=max(0.0, deadline - time.monotonic()))
        return False

    def lock_backend_pid(self, runner_id: str) -> int | None:
        """The server process holding ``runner_id``'s lock, for operators and tests."""
        with self._guard:
            session = self._sessions.get(runner_id)
        return None if session is None else session.backend_pid

    def beat(self, runner_id: str, *, busy: int, now: datetime.datetime) -> bool:
        with self._guard:
            locked_on = self._locked_on.get(runner_id)
        params = {"id": runner_id, "busy": busy, "now": now, "locked_on": locked_on}
        with translated(), self._pool.connection() as conn:
            return bool(conn.execute(_BEAT, params).rowcount == 1)

    def sight_runners(self) -> list[RunnerSighting]:
        with translated(), self._pool.connection() as conn:
            rows = conn.execute(_SIGHT).fetchall()
        sightings = []
        for runner_id, registered, beat, on_this_server, lock_held in rows:
            if lock_held:
                lock = LockState.HELD
            elif registered and on_this_server:
                lock = LockState.ABSENT
            else:
                lock = LockState.UNKNOWN  # taken on another server, or no row to say where
            sightings.append(
                RunnerSighting(runner_id=runner_id, registered=registered, beat=beat, lock=lock)
            )
        return sightings

    def settle_dead(
        self, settlements: Collection[Settlement], *, now: datetime.datetime
    ) -> Recovered:
        recorded: list[tuple[HeldJob, Outcome]] = []
        for settlement in settlements:
            verdict = settlement.verdict
            with translated(), self._pool.connection() as conn, conn.transaction():
                if not self._evidence_holds(conn, verdict):
                    continue
                if verdict.lock_absent or not verdict.registered:
                    # Hold the dead runner's lock until commit: an owner that comes back
                    # waits, and finds which jobs are still its own only after this.
                    taken = conn.execute(_TAKE_DEAD_LOCK, {"owner": verdict.runner_id}).fetchone()
                    if not (taken and taken[0]):
                        continue
                landed = []
                for job, outcome in settlement.outcomes:
                    sql, params = _outcome_statement(job.claim, outcome, now)
                    params["runner_id"] = verdict.runner_id  # None: a row with no owner
                    if conn.execute(sql, params).rowcount == 1:
                        landed.append((job, outcome))
                conn.execute(
                    "DELETE FROM jobtable_runners WHERE id IS NOT DISTINCT FROM %s",
                    (verdict.runner_id,),
                )
                if any(isinstance(outcome, RunAgain) for _, outcome in landed):
                    self._notify(conn)
            recorded.extend(landed)
        log_settled_unreadable([job for job, _ in recorded])
        return recovered(outcome for _, outcome in recorded)

    def _evidence_holds(self, conn: psycopg.Connection, verdict: DeadRunner) -> bool:
        """Re-read the evidence with the runner's row locked: a settler at a time, and no beat
        can land between the check and the settling."""
        row = conn.execute(
            "SELECT beat FROM jobtable_runners WHERE id IS NOT DISTINCT FROM %s FOR UPDATE",
            (verdict.runner_id,),
        ).fetchone()
        if verdict.registered != (row is not None):
            return False
        return row is None or row[0] == verdict.beat

    def unregister_runner(self, runner_id: str) -> None:
        try:
            with translated(), self._pool.connection() as conn:
                conn.execute("DELETE FROM jobtable_runners WHERE id = %s", (runner_id,))
        finally:
            self._drop_lock(runner_id)

    def runners(self) -> list[RunnerRecord]:
        with translated(), self._pool.connection() as conn:
            rows = conn.execute(_RUNNERS).fetchall()
        return [runner_record(row, parse_time=lambda value: value) for row in rows]

    # -- cancellation, queues, detail ----------------------------------------

    def cancel(self, job_id: str, *, now: datetime.datetime) -> CancelOutcome | None:
        """Cancel a job not yet running at once; ask a running one's runner to stop it.

        None when there is no such job.
        """
        params = {"id": job_id, "now": now}
        with translated(), self._pool.connection() as conn, conn.transaction():
            if conn.execute(_CANCEL_QUEUED, params).rowcount:
                return CancelOutcome.CANCELLED
            if conn.execute(_CANCEL_RUNNING, params).rowcount:
                return CancelOutcome.REQUESTED
            row = conn.execute("SELECT error FROM jobs WHERE id = %(id)s", params).fetchone()
        if row is None:
            return None
        return CancelOutcome.CANCELLED if row[0] == "cancelled" else CancelOutcome.REFUSED

    def cancel_requests(self, runner_id: str) -> list[Claim]:
        """Jobs running under ``runner_id`` that someone asked to cancel."""
        with translated(), self._pool.connection() as conn:
            rows = conn.execute(_CANCEL_REQUESTS, {"runner_id": runner_id}).fetchall()
        return [
            Claim(job_id=job_id, runner_id=runner_id, attempt=attempt) for job_id, attempt in rows
        ]

    def set_queue_paused(self, name: str, *, paused: bool, now: datetime.datetime) -> None:
        """Pause or resume a queue for every process: claims pass a paused queue's jobs by."""
        with translated(), self._pool.connection() as conn:
            sql = _SET_PAUSED if paused else _RESUME  # a resumed queue keeps no row
            conn.execute(sql, {"name": name, "paused": paused, "now": now})
            if not paused:
                self._notify(conn)  # its jobs may run now

    def queues(self) -> list[QueueState]:
        """Every queue that holds jobs or is paused, with its jobs counted by status."""
        with translated(), self._pool.connection() as conn:
            counted = conn.execute(_QUEUES).fetchall()
            paused = conn.execute(_PAUSED).fetchall()
        return queue_states(counted, [name for (name,) in paused])

    def paused_queues(self) -> frozenset[str]:
        with translated(), self._pool.connection() as conn:
            rows = conn.execute(_PAUSED).fetchall()
        return frozenset(name for (name,) in rows)

    def begin_idempotent(
        self, key: str, request_hash: str, *, now: datetime.datetime
    ) -> KeptAnswer | None:
        params = idempotency_parameters(key, request_hash, now, stamp=_same)
        for _ in range(UNIQUE_TRIES):
            with translated(), self._pool.connection() as conn, conn.transaction():
                conn.execute(_FORGET_STALE_KEY, params)
                if conn.execute(_TAKE_KEY, params).rowcount == 1:
                    return None  # taken: this request answers
                row = conn.execute(_KEPT_ANSWER, params).fetchone()
            if row is not None:
                return kept_answer(row, _as_time)
            # The holder let it go between the two statements: try to take it again.
        raise StoreError("database error")

    def finish_idempotent(self, key: str, *, status: int, body: str) -> None:
        params = {"key": key, "status": status, "body": body}
        with translated(), self._pool.connection() as conn:
            conn.execute(_ANSWER_KEY, params)

    def drop_idempotent(self, key: str) -> None:
        with translated(), self._pool.connection() as conn:
            conn.execute(
                "DELETE FROM jobtable_idempotency WHERE key = %s AND status IS NULL", (key,)
            )

    def record_schedule(self, name: str, *, now: datetime.datetime) -> datetime.datetime:
        params = {"name": name, "now": now}
        with translated(), self._pool.connection() as conn:
            conn.execute(_RECORD_SCHEDULE, params)
            row = conn.execute(_FIRST_SEEN, params).fetchone()
        assert row is not None
        return _as_time(row[0])

    def detail(self, job_id: str) -> JobDetail | None:
        """Everything about the job that may be shown, or None when there is none."""
        with translated(), self._pool.connection() as conn:
            row = conn.execute(_DETAIL, {"id": job_id}).fetchone()
        return None if row is None else job_detail(row, parse_time=_as_time)

    def jobs_ahead(self, detail: JobDetail) -> int:
        """Due jobs of the same kind and queue that come before this one in claim order."""
        params = {
            "kind": detail.job.kind,
            "queue": detail.queue,
            "priority": detail.priority,
            "run_at": detail.run_at,
            "id": detail.job.id,
        }
        with translated(), self._pool.connection() as conn:
            row = conn.execute(_AHEAD, params).fetchone()
        return int(row[0]) if row else 0

    # -- reading -----------------------------------------------------------

    def get(self, job_id: str) -> Job | None:
        with translated(), self._pool.connection() as conn:
            row = conn.execute(_GET, {"id": job_id}).fetchone()
        return None if row is None else public_job(row)

    # -- observing and operating ----------------------------------------------

    def list_jobs(self, which: JobFilter, *, limit: int, after: str | None) -> list[Job]:
        sql, params = list_statement(which, limit=limit, after=after, placeholder=_named)
        with translated(), self._pool.connection() as conn:
            rows = conn.execute(sql.encode("utf-8"), params).fetchall()
        return [public_job(row) for row in rows]

    def events(self, job_id: str, *, after: int | None) -> JobEvents | None:
        params = {"id": job_id, "after": 0 if after is None else after}
        with translated(), self._pool.connection() as conn:
            rows = conn.execute(_JOB_EVENTS, params).fetchall()
        return job_events(rows, job_id, after=after)

    def retry(self, job_id: str, *, now: datetime.datetime) -> RetryOutcome | None:
        params = {"id": job_id, "now": now}
        with translated(), self._pool.connection() as conn, conn.transaction():
            if conn.execute(_RETRY_FAILED, params).rowcount:
                self._notify(conn)  # due at once: other processes' workers may claim it
                return RetryOutcome.RETRIED
            found = conn.execute("SELECT 1 FROM jobs WHERE id = %(id)s", params).fetchone()
        return None if found is None else RetryOutcome.REFUSED

    def take_lease(
        self, name: str, *, holder: str, until: datetime.datetime, now: datetime.datetime
    ) -> bool:
        params = {"name": name, "holder": holder, "until": until, "now": now}
        with translated(), self._pool.connection() as conn:
            return bool(conn.execute(_TAKE_LEASE, params).rowcount)

    def prune(
        self, cutoffs: Mapping[str, datetime.datetime], *, now: datetime.datetime, limit: int
    ) -> Pruned:
        answered_before, _ = stale_before(now)
        deleted = 0
        with translated(), self._pool.connection() as conn, conn.transaction():
            for status, cutoff in cutoffs.items():
                if deleted < limit:
                    params = {"cutoff": cutoff, "now": now, "limit": limit - deleted}
                    deleted += conn.execute(_PRUNE[status], params).rowcount
            kept_past = {"answered_before": answered_before, "limit": limit}
            keys = conn.execute(_PRUNE_IDEMPOTENCY, kept_past).rowcount
        return Pruned(jobs=deleted, keys=keys)

    def job_counts(self) -> list[JobCount]:
        with translated(), self._pool.connection() as conn:
            rows = conn.execute(_JOB_COUNTS).fetchall()
        return [
            JobCount(queue=queue, kind=kind, status=status, count=count)
            for queue, kind, status, count in rows
        ]

    def watch_jobs(
        self,
        on_change: Callable[[str | None], None],
        *,
        fallback_interval: float = FALLBACK_INTERVAL,
    ) -> EventListener | PollingWatcher:
        """Call ``on_change`` with a job's id soon after any process changes it (NOTIFY from
        the jobs_changed trigger); with None when a change may have gone unheard (after a
        reconnect, and every ``fallback_interval`` seconds)."""
        if self._pooler and self._listen_conninfo is None:
            return PollingWatcher(lambda: on_change(None), interval=POOLER_POLL_INTERVAL).start()
        listener = EventListener(
            self._listen_connection,
            self.events_channel,
            on_change,
            fallback_interval=fallback_interval,
        )
        listener.start()
        self._listeners.append(listener)
        return listener

    def row(self, job_id: str) -> dict[str, Any] | None:
        """Every column of the job's row, for inspection and tests."""
        with translated(), self._pool.connection() as conn:
            cursor = conn.execute("SELECT * FROM jobs WHERE id = %s", (job_id,))
            found = cursor.fetchone()
            names = [column.name for column in cursor.description or ()]
        return None if found is None else dict(zip(names, found, strict=True))

    # -- closing, and forks ------------------------------------------------

    def close(self) -> None:
        if os.getpid() != self._pid:
            return  # a forked child: what it inherited is the parent's (forget_after_fork)
        with self._guard:
            held = list(self._sessions)
        for runner_id in held:
            self._drop_lock(runner_id)
        for listener in self._listeners:
            listener.stop()
        self._pool.close()

    def forget_after_fork(self) -> None:
        """In a forked child: let go of every inherited connection without ending it.

        The child keeping a lock session's socket would keep a dead parent
        "alive"; the child closing it would end the parent's session (and its
        lock) under the parent. Each socket is pointed at /dev/null instead.
        """
        self._guard = threading.Lock()
        sessions, self._sessions = self._sessions, {}
        for session in sessions.values():
            session.forget_after_fork()
        idle = list(getattr(self._pool, "_pool", ()))  # psycopg_pool's idle connections
        for conn in idle + [listener.connection for listener in self._listeners]:
            if conn is not None and not conn.closed:
                neuter_descriptor(conn.pgconn.socket)

    def _check_not_forked(self) -> None:
        if os.getpid() != self._pid:
            raise StoreError("database closed")  # a store does not cross fork(): open another

    def _fenced(self, sql: str, claim: Claim, **values: Any) -> bool:
        with translated(), self._pool.connection() as conn:
            return bool(conn.execute(sql, {**fence(claim), **values}).rowcount == 1)
