"""Queues as operators see them (paused or not, jobs counted) and cancels asked of a runner."""

from __future__ import annotations

import datetime

from jobtable.adapters.sql.engine import Connection, SqlPart
from jobtable.adapters.sql_rows import queue_states
from jobtable.core.jobs import Claim, QueueState


class SqlQueues(SqlPart):
    def set_queue_paused(self, name: str, *, paused: bool, now: datetime.datetime) -> None:
        """Pause or resume a queue for every process: claims pass a paused queue's jobs by."""
        params = {"name": name, "paused": paused, "now": self._engine.stamp(now)}

        def change(conn: Connection) -> None:
            if paused:
                conn.execute(self._engine.sql("set_queue_paused"), params)
            else:
                conn.execute(self._engine.sql("resume_queue"), params)  # it keeps no row
                self._engine.announce(conn)  # its jobs may run now

        self._engine.write(change)

    def queues(self) -> list[QueueState]:
        """Every queue that holds jobs or is paused, with its jobs counted by status."""

        def read(conn: Connection) -> list[QueueState]:
            counted = conn.execute(self._engine.sql("queues")).fetchall()
            paused = conn.execute(self._engine.sql("paused_queues")).fetchall()
            return queue_states(counted, [name for (name,) in paused])

        return self._engine.read(read)

    def paused_queues(self) -> frozenset[str]:
        return frozenset(name for (name,) in self._rows("paused_queues"))

    def cancel_requests(self, runner_id: str) -> list[Claim]:
        """Jobs running under ``runner_id`` that someone asked to cancel."""
        rows = self._rows("cancel_requests", {"runner_id": runner_id})
        return [
            Claim(job_id=job_id, runner_id=runner_id, attempt=attempt) for job_id, attempt in rows
        ]
