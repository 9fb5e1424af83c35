"""Retention: finished jobs and idempotency keys pruned in batches, under a lease."""

from __future__ import annotations

import datetime
from collections.abc import Mapping

from jobtable.adapters.sql.engine import Connection, SqlPart
from jobtable.core.idempotency import stale_before
from jobtable.core.jobs import Pruned


class SqlRetention(SqlPart):
    def take_lease(
        self, name: str, *, holder: str, until: datetime.datetime, now: datetime.datetime
    ) -> bool:
        stamp = self._engine.stamp
        params = {"name": name, "holder": holder, "until": stamp(until), "now": stamp(now)}
        return bool(self._change("take_lease", params))

    def prunable(self, cutoffs: Mapping[str, datetime.datetime], *, now: datetime.datetime) -> bool:
        stamp = self._engine.stamp
        answered_before, _ = stale_before(now)
        params: dict[str, object] = {"answered_before": stamp(answered_before), "now": stamp(now)}
        for status in ("succeeded", "failed"):
            cutoff = cutoffs.get(status)
            params[f"{status}_cutoff"] = None if cutoff is None else stamp(cutoff)
        return any(row[0] for row in self._rows("prunable", params))

    def prune(
        self, cutoffs: Mapping[str, datetime.datetime], *, now: datetime.datetime, limit: int
    ) -> Pruned:
        """Up to ``limit`` jobs finished before their status's cutoff, and up to ``limit``
        idempotency keys kept past their time, in one transaction."""
        stamp = self._engine.stamp
        answered_before, _ = stale_before(now)

        def prune(conn: Connection) -> Pruned:
            deleted = 0
            for status, cutoff in cutoffs.items():
                if deleted < limit:
                    params = {"cutoff": stamp(cutoff), "now": stamp(now), "limit": limit - deleted}
                    params["status"] = status
                    deleted += len(
                        conn.execute(self._engine.sql("prune_finished"), params).fetchall()
                    )
            kept_past = {"answered_before": stamp(answered_before), "limit": limit}
            keys = conn.execute(self._engine.sql("prune_idempotency"), kept_past).rowcount
            return Pruned(jobs=deleted, keys=keys)

        return self._engine.write(prune)
