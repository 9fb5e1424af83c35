"""Queues as operators see them (paused or not, jobs counted) and cancels asked of a runner."""

from __future__ import annotations

import datetime
from typing import Any

from jobtable.adapters.sql.engine import Connection, SqlPart
from jobtable.adapters.sql.listing import counts_and_states
from jobtable.adapters.sql_rows import queue_limits, queue_states
from jobtable.core.jobs import Claim, QueueState
from jobtable.core.limits import QueueLimit


class SqlQueues(SqlPart):
    def set_queue_paused(self, name: str, *, paused: bool, now: datetime.datetime) -> None:
        """Pause or resume a queue for every process: claims pass a paused queue's jobs by."""
        params = {"name": name, "paused": paused, "now": self._engine.stamp(now)}

        def change(conn: Connection) -> None:
            if paused:
                conn.execute(self._engine.sql("set_queue_paused"), params)
            else:
                conn.execute(self._engine.sql("resume_queue"), params)
                conn.execute(self._engine.sql("forget_plain_queue"), params)
                self._engine.announce(conn)  # its jobs may run now

        self._engine.write(change)

    def set_queue_limit(self, name: str, limit: QueueLimit, *, now: datetime.datetime) -> None:
        """Limit a queue's running jobs and starts across every runner (``QueueLimit()``: no
        limits); its pause stays as it was."""
        rate = limit.rate
        params = {
            "name": name,
            "now": self._engine.stamp(now),
            "running_limit": limit.running,
            "rate_n": None if rate is None else rate.n,
            "rate_per": None if rate is None else rate.per,
        }

        def change(conn: Connection) -> None:
            conn.execute(self._engine.sql("bound_lock_wait"), {})  # else StoreError
            conn.execute(self._engine.sql("lock_queue_settings"), {})
            conn.execute(self._engine.sql("set_queue_limit"), params)
            conn.execute(self._engine.sql("forget_plain_queue"), params)
            self._engine.announce(conn)  # runners learn of it as they claim next

        self._engine.write(change)

    def queues(self) -> list[QueueState]:
        """Every queue that holds jobs or is paused, with its jobs counted by status."""

        def settings(conn: Connection) -> tuple[list[Any], list[Any]]:
            paused = conn.execute(self._engine.sql("paused_queues")).fetchall()
            return paused, conn.execute(self._engine.sql("limited_queues")).fetchall()

        # Apart from the count (a whole-table read): a change of a queue's limits waits for
        # every reader of the queues table, and claims wait behind it.
        paused, limited = self._engine.read(settings)
        # One statement, so the counts by status and by state are of one moment.
        sql = counts_and_states(self._engine.sql("queues"))
        rows = self._engine.read(lambda conn: conn.execute(sql).fetchall())
        counted = [row[1:] for row in rows if row[0] == "status"]
        split = [row[1:] for row in rows if row[0] == "state"]
        return queue_states(counted, [name for (name,) in paused], queue_limits(limited), split)

    def paused_queues(self) -> frozenset[str]:
        return frozenset(name for (name,) in self._rows("paused_queues"))

    def cancel_requests(self, runner_id: str) -> list[Claim]:
        """Jobs running under ``runner_id`` that someone asked to cancel."""
        rows = self._rows("cancel_requests", {"runner_id": runner_id})
        return [
            Claim(job_id=job_id, runner_id=runner_id, attempt=attempt) for job_id, attempt in rows
        ]
