"""The queue's hot path on the shared SQL body: claims, outcomes, put-backs, partial results.

A runner's batch (its workers' outcomes and their next claims) is one transaction:
a statement for each outcome, and the claim, sent in one round trip where the engine can.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection, Sequence

from jobtable.adapters.readable_rows import claim_readable, held_job, log_set_aside
from jobtable.adapters.sql.engine import Connection, Cursor, SqlPart
from jobtable.adapters.sql.outcomes import fence, landed, requeue_parameters, send_outcomes
from jobtable.core.codes import INTERNAL_ERROR
from jobtable.core.jobs import Claim, ClaimedJob, HeldJob
from jobtable.core.outcome import Fail, Outcome

_Sent = tuple[list[Cursor], Cursor | None]


class SqlQueue(SqlPart):
    def claim_next(
        self,
        *,
        runner_id: str,
        now: datetime.datetime,
        kinds: Collection[str] | None = None,
        queues: Collection[str] | None = None,
    ) -> ClaimedJob | None:
        _, jobs = self.record_and_claim(
            [], limit=1, runner_id=runner_id, now=now, kinds=kinds, queues=queues
        )
        return jobs[0] if jobs else None

    def record(self, claim: Claim, outcome: Outcome, *, now: datetime.datetime) -> bool:
        (held,), _ = self.record_and_claim([(claim, outcome)], limit=0, runner_id="", now=now)
        return held

    def record_and_claim(
        self,
        outcomes: Sequence[tuple[Claim, Outcome]],
        *,
        limit: int,
        runner_id: str,
        now: datetime.datetime,
        kinds: Collection[str] | None = None,
        queues: Collection[str] | None = None,
    ) -> tuple[list[bool], list[ClaimedJob]]:
        stamp = self._engine.stamp(now)
        claim_sql = self._engine.sql("claim_any_job" if kinds is None else "claim_next_job")
        claiming = {
            "runner_id": runner_id,
            "now": stamp,
            "kinds": self._engine.names(kinds),
            "queues": self._engine.names(queues),
            "limit": limit,
        }

        def send(conn: Connection) -> _Sent:
            recorded = send_outcomes(self._engine, conn, outcomes, now)
            return recorded, conn.execute(claim_sql, claiming) if limit > 0 else None

        def read(conn: Connection, sent: _Sent) -> tuple[list[bool], list[ClaimedJob]]:
            recorded, claimed = sent
            held = landed(recorded)
            if claimed is None:
                return held, []
            jobs, unreadable = claim_readable(
                lambda more: conn.execute(claim_sql, {**claiming, "limit": more}).fetchall(),
                lambda claim: send_outcomes(
                    self._engine, conn, [(claim, Fail(code=INTERNAL_ERROR))], now
                ),
                limit=limit,
                runner_id=runner_id,
                parse_time=self._engine.parse_time,
                claimed=claimed.fetchall(),
            )
            log_set_aside(unreadable)  # a row set aside is failed with the claim, or after it
            return held, jobs

        return self._engine.send_then_read(send, read)

    def put_back(self, claims: Collection[Claim], *, now: datetime.datetime) -> int:
        if not claims:
            return 0
        stamp = self._engine.stamp(now)
        sql = self._engine.sql("requeue_job")

        def put(conn: Connection) -> int:
            moved = sum(
                conn.execute(sql, requeue_parameters(claim, None, now=stamp)).rowcount
                for claim in claims
            )
            if moved:
                self._engine.announce(conn)
            return moved

        return self._engine.write(put)

    def publish(self, claim: Claim, *, result: str, now: datetime.datetime) -> bool:
        params = {**fence(claim), "result": result, "now": self._engine.stamp(now)}
        return self._change("publish_job_result", params) == 1

    def running_jobs(self, owner: str | None) -> list[HeldJob]:
        sql = self._engine.sql("running_jobs")
        if owner is None:
            sql = sql.replace(
                f"claimed_by = {self._engine.placeholder('owner')}", "claimed_by IS NULL"
            )
        rows = self._engine.read(lambda conn: conn.execute(sql, {"owner": owner}).fetchall())
        return [held_job(row, owner) for row in rows]
