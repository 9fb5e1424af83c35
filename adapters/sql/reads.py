"""Reading jobs: one job, its detail and place in line, its changes, lists and counts."""

from __future__ import annotations

import datetime
from typing import Any

from jobtable.adapters.sql.engine import Connection, SqlPart
from jobtable.adapters.sql.listing import JOB_COUNTS, count_statement, list_statement
from jobtable.adapters.sql_rows import job_detail, job_events, listed_job, public_job
from jobtable.core.job_history import JobEvents
from jobtable.core.jobs import Job, JobCount, JobDetail, JobFilter
from jobtable.core.states import job_state


class SqlReads(SqlPart):
    def get(self, job_id: str) -> Job | None:
        rows = self._rows("get_job", {"id": job_id})
        return public_job(rows[0]) if rows else None

    def detail(self, job_id: str) -> JobDetail | None:
        """Everything about the job that may be shown, or None when there is none."""
        rows = self._rows("job_detail", {"id": job_id})
        return job_detail(rows[0], parse_time=self._engine.parse_time) if rows else None

    def jobs_ahead(self, detail: JobDetail) -> int:
        """Due jobs of the same kind and queue that come before this one in claim order."""
        params = {
            "kind": detail.job.kind,
            "queue": detail.queue,
            "priority": detail.priority,
            "run_at": self._engine.stamp(detail.run_at),
            "id": detail.job.id,
        }
        rows = self._rows("jobs_ahead", params)
        return int(rows[0][0]) if rows else 0

    def starts_alike(
        self, job_id: str, *, since: datetime.datetime
    ) -> tuple[list[datetime.datetime], list[datetime.datetime]]:
        rows = self._rows("starts_alike", {"id": job_id, "since": self._engine.stamp(since)})
        of_kind = [self._engine.parse_time(at) for at, _ in rows]
        of_key = [at for at, (_, same) in zip(of_kind, rows, strict=True) if same]
        return of_kind, of_key

    def running_alike(self, job_id: str) -> tuple[int, int]:
        rows = self._rows("running_alike", {"id": job_id})
        return (int(rows[0][0]), int(rows[0][1])) if rows else (0, 0)

    def list_jobs(
        self, which: JobFilter, *, limit: int, after: str | None, before: str | None = None
    ) -> list[Job]:
        sql, params = list_statement(
            which,
            limit=limit,
            after=after,
            before=before,
            placeholder=self._engine.placeholder,
            stamp=self._engine.stamp,
        )
        rows = self._engine.read(lambda conn: conn.execute(sql, params).fetchall())
        return [listed_job(row) for row in rows]

    def count_jobs(self, which: JobFilter) -> int:
        sql, params = count_statement(
            which, placeholder=self._engine.placeholder, stamp=self._engine.stamp
        )
        return int(self._engine.read(lambda conn: conn.execute(sql, params).fetchone()[0]))

    def events(self, job_id: str, *, after: int | None) -> JobEvents | None:
        params = {"id": job_id, "after": 0 if after is None else after}
        return job_events(self._rows("job_events", params), job_id, after=after)

    def job_counts(self) -> list[JobCount]:
        return [
            JobCount(
                queue=queue,
                kind=kind,
                status=status,
                count=count,
                state=job_state(status, "failed" if retrying else None, None).value,
            )
            for queue, kind, status, count, retrying in self._engine.read(
                lambda conn: conn.execute(JOB_COUNTS).fetchall()
            )
        ]

    def row(self, job_id: str) -> dict[str, Any] | None:
        """Every column of the job's row, for inspection and tests."""

        def read(conn: Connection) -> dict[str, Any] | None:
            cursor = conn.execute(self._engine.sql("job_row"), {"id": job_id})
            found = cursor.fetchall()
            names = [column[0] for column in cursor.description or ()]
            return dict(zip(names, found[0], strict=True)) if found else None

        return self._engine.read(read)
