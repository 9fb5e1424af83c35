"""Operators' actions on jobs: cancel one, or retry it once it failed; or a batch of those a
filter matches, in one transaction (the same statements, job by job)."""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable

from jobtable.adapters.sql.engine import Connection, SqlPart
from jobtable.adapters.sql.listing import list_statement
from jobtable.core.bulk import BulkBatch
from jobtable.core.codes import CANCELLED
from jobtable.core.jobs import CancelOutcome, JobFilter, RetryOutcome
from jobtable.core.status import Status


class SqlOperations(SqlPart):
    def cancel(self, job_id: str, *, now: datetime.datetime) -> CancelOutcome | None:
        """Cancel a job not yet running at once; ask a running one's runner to stop it.

        None when there is no such job.
        """
        params = {"id": job_id, "now": self._engine.stamp(now)}

        def cancel(conn: Connection) -> CancelOutcome | None:
            if conn.execute(self._engine.sql("cancel_queued"), params).rowcount:
                return CancelOutcome.CANCELLED
            if conn.execute(self._engine.sql("cancel_running"), params).rowcount:
                return CancelOutcome.REQUESTED
            row = conn.execute(self._engine.sql("job_state"), params).fetchone()
            if row is None:
                return None
            if row[0] == Status.RUNNING.value:
                return CancelOutcome.REQUESTED  # asked already: still stopping
            return CancelOutcome.CANCELLED if row[1] == CANCELLED else CancelOutcome.REFUSED

        return self._engine.write(cancel)

    def retry(self, job_id: str, *, now: datetime.datetime) -> RetryOutcome | None:
        params = {"id": job_id, "now": self._engine.stamp(now)}

        def retry(conn: Connection) -> RetryOutcome | None:
            if conn.execute(self._engine.sql("retry_failed_job"), params).rowcount:
                self._engine.announce(conn)  # due at once: other processes' workers may claim it
                return RetryOutcome.RETRIED
            row = conn.execute(self._engine.sql("job_state"), params).fetchone()
            if row is None:
                return None
            failed = row[0] == Status.FAILED.value  # failed still: its key is held by another
            return RetryOutcome.KEY_HELD if failed else RetryOutcome.REFUSED

        return self._engine.write(retry)

    def cancel_jobs(
        self, which: JobFilter, *, after: str | None, limit: int, now: datetime.datetime
    ) -> BulkBatch:
        ids = self._matching(which, after=after, limit=limit)
        stamp = self._engine.stamp(now)

        def cancel(conn: Connection) -> BulkBatch:
            changed, stop_requested = [], []
            for job_id in ids:
                params = {"id": job_id, "now": stamp}
                if conn.execute(self._engine.sql("cancel_queued"), params).rowcount:
                    changed.append(job_id)
                elif conn.execute(self._engine.sql("cancel_running"), params).rowcount:
                    stop_requested.append(job_id)
            return BulkBatch.of(ids, changed, stop_requested)

        return self._batch(cancel)

    def retry_jobs(
        self, which: JobFilter, *, after: str | None, limit: int, now: datetime.datetime
    ) -> BulkBatch:
        ids = self._matching(which, after=after, limit=limit)
        stamp = self._engine.stamp(now)

        def retry(conn: Connection) -> BulkBatch:
            statement = self._engine.sql("retry_failed_job")
            changed = tuple(
                job_id
                for job_id in ids
                if conn.execute(statement, {"id": job_id, "now": stamp}).rowcount
            )
            if changed:
                self._engine.announce(conn)
            return BulkBatch.of(ids, changed)

        return self._batch(retry)

    def _batch(self, work: Callable[[Connection], BulkBatch]) -> BulkBatch:
        """One batch of a bulk action, in a transaction of its own; then other writers'
        turn."""
        began = time.monotonic()
        batch = self._engine.write(work)
        self._engine.let_others_write(time.monotonic() - began)
        return batch

    def _matching(self, which: JobFilter, *, after: str | None, limit: int) -> list[str]:
        """The ids of the next ``limit`` jobs ``which`` matches, older than ``after``, newest
        first: read before the batch's transaction (whose statements check each job's state
        again), so a slow search never holds the write lock."""
        sql, params = list_statement(
            which,
            limit=limit,
            after=after,
            placeholder=self._engine.placeholder,
            stamp=self._engine.stamp,
            columns="id",
        )
        return [
            row[0] for row in self._engine.read(lambda conn: conn.execute(sql, params).fetchall())
        ]
