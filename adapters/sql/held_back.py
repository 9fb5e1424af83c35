"""What limits hold back now, on the shared SQL body: a limited queue's use, and the due
jobs each limit keeps from starting (core/held_back.py decides which slots are full)."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Collection, Mapping
from typing import Any

from jobtable.adapters.sql.engine import Connection, SqlPart
from jobtable.adapters.sql.slots import declared_limits, send_registered_limits
from jobtable.adapters.sql_rows import queue_limits
from jobtable.core.held_back import (
    FullSlots,
    HeldBack,
    QueueUse,
    full_slots,
    held_back_of_kind,
)
from jobtable.core.limits import QueueLimit, RateLimit, RunningLimit


class SqlHeldBack(SqlPart):
    def queue_use(self, name: str, *, now: datetime.datetime) -> QueueUse | None:
        """The queue's limits and their use now; None when it has none."""

        def read(conn: Connection) -> QueueUse | None:
            found = queue_limits(conn.execute(self._engine.sql("queue_limit"), {"name": name}))
            limit = found.get(name)
            return None if limit is None else self._use(conn, name, limit, now)

        return self._engine.read(read)

    def held_back(
        self,
        limits: Mapping[str, RunningLimit],
        rates: Mapping[str, RateLimit],
        *,
        now: datetime.datetime,
    ) -> list[HeldBack]:
        """Due jobs held back now, by kind, queue and the limit holding them (each once)."""
        engine = self._engine

        def settings(conn: Connection) -> tuple[set[str], dict[str, QueueLimit]]:
            paused = {name for (name,) in conn.execute(engine.sql("paused_queues"), {})}
            return paused, queue_limits(conn.execute(engine.sql("limited_queues"), {}))

        # Read apart from the counts: a change of a queue's limits waits for every reader of
        # the queues table (and claims wait behind it), so none may hold it while counting.
        paused, limited = engine.read(settings)

        def read(conn: Connection) -> list[HeldBack]:
            counts: list[HeldBack] = []
            passed = set(paused)  # a paused queue's jobs wait for its resume, not a limit
            for name, limit in sorted(limited.items()):
                why = None if name in passed else self._use(conn, name, limit, now).full
                if why is None:
                    continue
                passed.add(name)
                for kind, count in conn.execute(
                    engine.sql("due_in_queue_by_kind"), {"queue": name}
                ):
                    counts.append(HeldBack(kind=kind, queue=name, limit=why, count=int(count)))
            lowest = declared_limits(limits, send_registered_limits(engine, conn, limits))
            for kind in sorted(lowest.keys() | rates.keys()):
                by_limit = full_slots(lowest.get(kind), self._running(conn, kind))
                rate = rates.get(kind)
                by_rate = full_slots(
                    rate, {} if rate is None else self._started(conn, kind, rate, now)
                )
                if by_limit.none and by_rate.none:
                    continue
                params = {
                    "kind": kind,
                    **_slots_params(engine.names, "limit", by_limit),
                    **_slots_params(engine.names, "rate", by_rate),
                    "passed_queues": engine.names(passed),
                }
                rows = conn.execute(engine.sql("held_back_of_kind"), params).fetchall()
                by_queue = {queue: (int(a or 0), int(b or 0)) for queue, a, b in rows}
                counts += held_back_of_kind(kind, by_queue)
            return counts

        return engine.read(read)

    def _use(
        self, conn: Connection, name: str, limit: QueueLimit, now: datetime.datetime
    ) -> QueueUse:
        engine = self._engine
        (running,) = conn.execute(engine.sql("running_in_queue"), {"queue": name}).fetchone()
        starts: list[datetime.datetime] = []
        if limit.rate is not None:
            since = engine.stamp(now - datetime.timedelta(seconds=limit.rate.per))
            rows = conn.execute(engine.sql("queue_starts_since"), {"queue": name, "since": since})
            starts = [engine.parse_time(at) for (at,) in rows]
        return QueueUse(limit=limit, running=int(running), starts=starts)

    def _running(self, conn: Connection, kind: str) -> dict[str | None, int]:
        rows = conn.execute(self._engine.sql("running_by_limit_key"), {"kind": kind})
        return {key: int(count) for key, count in rows}

    def _started(
        self, conn: Connection, kind: str, rate: RateLimit, now: datetime.datetime
    ) -> dict[str | None, int]:
        since = self._engine.stamp(now - datetime.timedelta(seconds=rate.per))
        rows = conn.execute(self._engine.sql("starts_by_rate_key"), {"kind": kind, "since": since})
        return {key: int(count) for key, count, _ in rows}


def _slots_params(
    names: Callable[[Collection[str] | None], Any], prefix: str, slots: FullSlots
) -> dict[str, object]:
    return {f"{prefix}_all": slots.every, f"{prefix}_keys": names(sorted(slots.keys))}
