"""Jobs due later: making them claimable when due, the next due time, schedules' first sightings."""

from __future__ import annotations

import contextlib
import datetime

from jobtable.adapters.sql.engine import Connection, SqlPart
from jobtable.core.schedules import StoredSchedule, tick_of_key

PROMOTE_BATCH = 1000
"""Scheduled jobs made due per statement: a backlog is promoted in bounded steps."""


class SqlSchedules(SqlPart):
    def promote_due(self, *, now: datetime.datetime) -> int:
        """Make scheduled jobs that are due claimable; how many it moved."""
        params = {"now": self._engine.stamp(now), "limit": PROMOTE_BATCH}

        def promote(conn: Connection) -> int:
            count = conn.execute(self._engine.sql("promote_due"), params).rowcount
            if count:
                self._engine.announce(conn)  # other processes' workers may claim them too
            return count

        moved = 0
        while True:
            count = self._engine.write(promote)
            moved += count
            if count < PROMOTE_BATCH:
                return moved

    def next_due(self) -> datetime.datetime | None:
        """When the earliest scheduled job falls due (None: none is scheduled).

        A time that cannot be read is passed over: it must not hide the jobs due after it.
        """

        def earliest(conn: Connection) -> datetime.datetime | None:
            cursor = conn.execute(self._engine.sql("next_due"))
            try:
                for (run_at,) in cursor:
                    if run_at is not None:
                        with contextlib.suppress(ValueError):
                            return self._engine.parse_time(run_at)
            finally:
                cursor.close()  # no statement left open: it would hold a read transaction
            return None

        return self._engine.read(earliest)

    def record_schedule(
        self, schedule: StoredSchedule, *, now: datetime.datetime
    ) -> datetime.datetime:
        params = {
            "name": schedule.name,
            "kind": schedule.kind,
            "expression": schedule.expression,
            "timezone": schedule.timezone,
            "queue": schedule.queue,
            "now": self._engine.stamp(now),
        }

        def first_seen(conn: Connection) -> object:
            conn.execute(self._engine.sql("record_schedule"), params)
            return conn.execute(self._engine.sql("schedule_first_seen"), params).fetchone()[0]

        return self._engine.parse_time(self._engine.write(first_seen))

    def schedules(self) -> list[StoredSchedule]:
        return [
            StoredSchedule(
                name=name,
                kind=kind,
                expression=expression,
                timezone=timezone,
                queue=queue,
                queue_paused=bool(paused),
                last_tick=tick_of_key(name, key),
            )
            for name, kind, expression, timezone, queue, paused, key in self._engine.read(
                lambda conn: conn.execute(self._engine.sql("schedules")).fetchall()
            )
        ]
