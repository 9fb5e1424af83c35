"""The PostgreSQL JobStore: many worker processes on many hosts.

Claims use ``FOR UPDATE SKIP LOCKED`` in one statement; connections come
from a psycopg pool. The database URL (and its password) is never logged or
put in an error: errors carry only the core's fixed categories.
"""

from __future__ import annotations

import datetime
import importlib.resources
import threading
from collections.abc import Callable, Collection, Mapping
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from jobtable.adapters.postgres.errors import translated
from jobtable.adapters.postgres.listener import NotifyListener
from jobtable.adapters.postgres.migrate import migrate
from jobtable.adapters.sql_rows import claimed, fence, finish_parameters
from jobtable.core.jobs import Claim, ClaimedJob, Job, NewJob, Recovered
from jobtable.core.outcome import Fail, Succeed
from jobtable.core.status import Status

DEFAULT_POOL_SIZE = 10
CONNECT_TIMEOUT = 5.0
POOL_WAIT = 2.0
"""Seconds a call waits for a pooled connection: while the server is down, a POST answers
503 after this long instead of hanging (every query takes milliseconds, so a healthy pool
never makes a caller wait this long)."""


def _query(name: str) -> str:
    return (
        importlib.resources.files("jobtable.adapters.postgres")
        .joinpath(f"queries/{name}.sql")
        .read_text()
    )


_CREATE = _query("create_job")
_CLAIM = _query("claim_next_job")
_PUBLISH = _query("publish_job_result")
_SUCCEED = _query("succeed_job")
_FAIL = _query("fail_job")
_ORPHANS = _query("orphaned_jobs")
_REQUEUE = _query("requeue_orphan")
_FAIL_ORPHAN = _query("fail_orphan")
_GET = _query("get_job")
_RUNNING_CLAIMS = _query("running_claims")


# A runner's advisory lock key: its id hashed into 62 bits, computed by the
# server both when locking and when checking, so the two always agree.
_KEY = "(hashtextextended(%(runner_id)s, 0) & 4611686018427387903)"
_LOCK = f"SELECT pg_advisory_lock({_KEY})"
_NOTIFY = "SELECT pg_notify(%(channel)s, '')"


class PostgresStore:
    def __init__(self, pool: ConnectionPool, conninfo: str = "", options: str = "") -> None:
        self._pool = pool
        self._conninfo = conninfo
        self._options = options
        self._liveness_guard = threading.Lock()
        self._liveness: dict[str, psycopg.Connection] = {}  # runner id -> session holding its lock
        self.applied_at_open: list[str] = []

    @classmethod
    def open(
        cls,
        url: str,
        *,
        now: datetime.datetime,
        schema: str | None = None,
        pool_size: int = DEFAULT_POOL_SIZE,
    ) -> PostgresStore:
        """Connect, and bring the schema up to date. Raises StoreError when it cannot.

        ``schema`` puts the tables in that schema (it must exist), as tests
        do to get a fresh database each.
        """
        options = {"options": f"-c search_path={schema}"} if schema else {}
        pool = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            kwargs={"connect_timeout": int(CONNECT_TIMEOUT), **options},
            timeout=POOL_WAIT,
            open=False,
            name="jobtable",
        )
        store = cls(pool, url, options.get("options", ""))
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
            return migrate(conn, now=now)

    def create(self, job: NewJob, *, now: datetime.datetime) -> None:
        params = {"id": job.id, "kind": job.kind, "payload": job.payload, "now": now}
        with translated(), self._pool.connection() as conn:
            conn.execute(_CREATE, params)
            conn.execute(_NOTIFY, {"channel": self.channel})  # delivered at commit

    @property
    def channel(self) -> str:
        """The NOTIFY channel of this store's jobs table (one per schema)."""
        schema = self._options.removeprefix("-c search_path=") or "public"
        return f"jobtable_jobs_{schema}"[:63]

    def watch(self, on_change: Callable[[], None]) -> NotifyListener:
        """Call ``on_change`` when any process enqueues here (and every few seconds anyway)."""
        return NotifyListener(self._own_connection, self.channel, on_change).start()

    def _own_connection(self) -> psycopg.Connection:
        """An autocommit connection outside the pool: for migrating, liveness and LISTEN."""
        kwargs: dict[str, Any] = {"autocommit": True, "connect_timeout": int(CONNECT_TIMEOUT)}
        if self._options:
            kwargs["options"] = self._options
        return psycopg.connect(self._conninfo, **kwargs)

    def claim_next(self, *, runner_id: str, now: datetime.datetime) -> ClaimedJob | None:
        with translated(), self._pool.connection() as conn:
            row = conn.execute(_CLAIM, {"runner_id": runner_id, "now": now}).fetchone()
        return claimed(row, runner_id)

    def finish_and_claim_next(
        self, claim: Claim, outcome: Succeed | Fail, *, runner_id: str, now: datetime.datetime
    ) -> tuple[bool, ClaimedJob | None]:
        finish_sql, finish = finish_parameters(
            claim, outcome, now, succeed_sql=_SUCCEED, fail_sql=_FAIL
        )
        with translated(), self._pool.connection() as conn:
            held = conn.execute(finish_sql, finish).rowcount == 1
            row = conn.execute(_CLAIM, {"runner_id": runner_id, "now": now}).fetchone()
        return held, claimed(row, runner_id)

    def publish(self, claim: Claim, *, result: str, now: datetime.datetime) -> bool:
        return self._fenced(_PUBLISH, claim, result=result, now=now)

    def succeed(self, claim: Claim, *, result: str, now: datetime.datetime) -> bool:
        return self._fenced(_SUCCEED, claim, result=result, now=now)

    def fail(self, claim: Claim, *, code: str, now: datetime.datetime) -> bool:
        return self._fenced(_FAIL, claim, code=code, now=now)

    def hold_liveness(self, runner_id: str) -> None:
        """A session advisory lock on a connection of its own, kept for the runner's life.

        Called again, it checks that session with a round trip and, when the
        session is gone (the server restarted, the session was killed), takes
        the lock again on a new one.
        """
        with self._liveness_guard:
            held = self._liveness.get(runner_id)
        if held is not None:
            try:
                held.execute("SELECT 1")
                return
            except psycopg.Error:
                with self._liveness_guard:
                    self._liveness.pop(runner_id, None)
                held.close()
        with translated():
            conn = self._own_connection()
            try:
                conn.execute(_LOCK, {"runner_id": runner_id})
            except BaseException:
                conn.close()
                raise
        with self._liveness_guard:
            self._liveness[runner_id] = conn

    def release_liveness(self, runner_id: str) -> None:
        with self._liveness_guard:
            conn = self._liveness.pop(runner_id, None)
        if conn is not None:
            conn.close()  # ending the session releases its advisory locks

    def recover_orphans(
        self, *, code: str, max_attempts: Mapping[str, int], now: datetime.datetime
    ) -> Recovered:
        failed = requeued = 0
        with translated(), self._pool.connection() as conn:
            for job_id, kind, attempt, owner in conn.execute(_ORPHANS).fetchall():
                fence = {"id": job_id, "owner": owner, "attempt": attempt, "now": now}
                if attempt < max_attempts.get(kind, 1):
                    requeued += conn.execute(_REQUEUE, fence).rowcount
                else:
                    failed += conn.execute(_FAIL_ORPHAN, {**fence, "code": code}).rowcount
            if requeued:
                conn.execute(_NOTIFY, {"channel": self.channel})
        return Recovered(failed=failed, requeued=requeued)

    def running_claims(self, runner_id: str) -> list[Claim]:
        with translated(), self._pool.connection() as conn:
            rows = conn.execute(_RUNNING_CLAIMS, {"runner_id": runner_id}).fetchall()
        return [
            Claim(job_id=job_id, runner_id=runner_id, attempt=attempt) for job_id, attempt in rows
        ]

    def requeue_claims(self, claims: Collection[Claim], *, now: datetime.datetime) -> int:
        if not claims:
            return 0
        moved = 0
        with translated(), self._pool.connection() as conn:
            for claim in claims:
                fence = {"id": claim.job_id, "owner": claim.runner_id, "attempt": claim.attempt}
                moved += conn.execute(_REQUEUE, {**fence, "now": now}).rowcount
            if moved:
                conn.execute(_NOTIFY, {"channel": self.channel})
        return moved

    def get(self, job_id: str) -> Job | None:
        with translated(), self._pool.connection() as conn:
            row = conn.execute(_GET, {"id": job_id}).fetchone()
        if row is None:
            return None
        job_id, kind, status, result, error = row
        return Job(id=job_id, kind=kind, status=Status(status), result=result, error=error)

    def row(self, job_id: str) -> dict[str, Any] | None:
        """Every column of the job's row, for inspection and tests."""
        with translated(), self._pool.connection() as conn:
            cursor = conn.execute("SELECT * FROM jobs WHERE id = %s", (job_id,))
            found = cursor.fetchone()
            names = [column.name for column in cursor.description or ()]
        return None if found is None else dict(zip(names, found, strict=True))

    def close(self) -> None:
        with self._liveness_guard:
            held = list(self._liveness)
        for runner_id in held:
            self.release_liveness(runner_id)
        self._pool.close()

    def _fenced(self, sql: str, claim: Claim, **values: Any) -> bool:
        with translated(), self._pool.connection() as conn:
            return bool(conn.execute(sql, {**fence(claim), **values}).rowcount == 1)
