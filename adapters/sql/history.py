"""The dashboard's history: the runners' per-minute counts, and each queue's oldest waiting job."""

from __future__ import annotations

import datetime
from collections.abc import Collection, Sequence

from jobtable.adapters.sql.engine import Connection, SqlPart
from jobtable.core.minutes import KEEP_MINUTES, MinuteCounts


class SqlHistory(SqlPart):
    def add_minutes(self, rows: Sequence[MinuteCounts], *, now: datetime.datetime) -> None:
        stamp = self._engine.stamp
        counts = [
            {
                "minute": stamp(row.minute),
                "queue": row.queue,
                "kind": row.kind,
                "succeeded": row.succeeded,
                "failed": row.failed,
            }
            for row in sorted(rows, key=_key)
            if row.succeeded or row.failed
        ]
        waits = [
            {
                "minute": stamp(row.minute),
                "queue": row.queue,
                "kind": row.kind,
                "bucket": bucket,
                "jobs": jobs,
            }
            for row in sorted(rows, key=_key)
            for bucket, jobs in row.waits
        ]
        before = {"before": stamp(now - datetime.timedelta(minutes=KEEP_MINUTES))}

        # Rows in one order whoever writes them: two runners' upserts never wait on each other
        # in a cycle (a deadlock on PostgreSQL).

        def add(conn: Connection) -> None:
            cursor = conn.cursor()
            if counts:
                cursor.executemany(self._engine.sql("add_minute"), counts)
            if waits:
                cursor.executemany(self._engine.sql("add_minute_wait"), waits)
            conn.execute(self._engine.sql("forget_minutes"), before)
            conn.execute(self._engine.sql("forget_minute_waits"), before)

        self._engine.write(add)

    def minutes(self, since: datetime.datetime) -> list[MinuteCounts]:
        rows = self._rows("minutes_since", {"since": self._engine.stamp(since)})
        finished: dict[tuple[datetime.datetime, str, str], tuple[int, int]] = {}
        waits: dict[tuple[datetime.datetime, str, str], dict[int, int]] = {}
        for minute, queue, kind, succeeded, failed, bucket, jobs in rows:
            key = (self._engine.parse_time(minute), queue, kind)
            if bucket is None:
                finished[key] = (int(succeeded), int(failed))
            else:
                waits.setdefault(key, {})[int(bucket)] = int(jobs)
        return [
            MinuteCounts(
                minute=minute,
                queue=queue,
                kind=kind,
                succeeded=finished.get((minute, queue, kind), (0, 0))[0],
                failed=finished.get((minute, queue, kind), (0, 0))[1],
                waits=tuple(sorted(waits.get((minute, queue, kind), {}).items())),
            )
            for minute, queue, kind in {**finished, **waits}
        ]

    def oldest_waiting(self, queues: Collection[str]) -> dict[str, datetime.datetime]:
        def read(conn: Connection) -> dict[str, datetime.datetime]:
            found = {}
            for queue in queues:
                row = conn.execute(self._engine.sql("oldest_waiting"), {"queue": queue}).fetchone()
                if row is not None and row[0] is not None:
                    found[queue] = self._engine.parse_time(row[0])
            return found

        return self._engine.read(read)


def _key(row: MinuteCounts) -> tuple[datetime.datetime, str, str]:
    return (row.minute, row.queue, row.kind)
