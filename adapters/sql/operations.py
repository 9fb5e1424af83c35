"""Operators' actions on one job: cancel it, or retry it once it failed."""

from __future__ import annotations

import datetime

from jobtable.adapters.sql.engine import Connection, SqlPart
from jobtable.core.codes import CANCELLED
from jobtable.core.jobs import CancelOutcome, RetryOutcome
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
