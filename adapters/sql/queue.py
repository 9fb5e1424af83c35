"""The queue's hot path on the shared SQL body: claims, outcomes, put-backs, partial results.

A runner's batch (its workers' outcomes and their next claims) is one transaction:
a statement for each outcome, and the claim, sent in one round trip where the engine can.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Collection, Mapping
from typing import Any

import attrs

from jobtable.adapters.batched_calls import BatchedCalls
from jobtable.adapters.readable_rows import Unreadable, claim_readable, held_job, log_set_aside
from jobtable.adapters.sql.engine import Connection, Cursor, SqlEngine, SqlPart
from jobtable.adapters.sql.fair_order import forget_lists
from jobtable.adapters.sql.limits import LimitedClaim, claim_limited
from jobtable.adapters.sql.outcomes import fence, landed, requeue_parameters, send_outcomes
from jobtable.adapters.sql.rate_windows import forget_windows
from jobtable.core.batch import Batch, BatchDone
from jobtable.core.codes import INTERNAL_ERROR
from jobtable.core.jobs import Claim, ClaimedJob, HeldJob
from jobtable.core.outcome import Fail, Outcome


@attrs.frozen
class _Limited:
    """What a batch's claim of limited kinds came to."""

    claimed: list[ClaimedJob]
    unreadable: list[Unreadable]
    opens_at: datetime.datetime | None
    limited_queues: frozenset[str] | None
    kept_once_committed: tuple[Callable[[], None], ...] = ()
    """What its claims read of rate windows and left of fair rounds (limits.py)."""


_NOTHING_LIMITED = _Limited(claimed=[], unreadable=[], opens_at=None, limited_queues=None)

_Sent = tuple[list[Cursor], list[Cursor], Cursor | None, Cursor | None, _Limited, Cursor | None]


class SqlQueue(BatchedCalls, SqlPart):
    def record(self, claim: Claim, outcome: Outcome, *, now: datetime.datetime) -> bool:
        (held,), _ = self.record_and_claim([(claim, outcome)], limit=0, runner_id="", now=now)
        return held

    def run_batch(
        self,
        batch: Batch,
        *,
        runner_id: str,
        now: datetime.datetime,
        kinds: Collection[str] | None = None,
        queues: Collection[str] | None = None,
    ) -> BatchDone:
        engine = self._engine
        stamp = engine.stamp(now)
        rules = batch.served_rules(kinds, queues)
        served = kinds
        if rules is not None and kinds is not None:  # claimed apart, and never held ahead
            apart = rules.kinds_apart
            kinds = [kind for kind in kinds if kind not in apart]
        every_kind = kinds is None
        claim_sql = engine.sql("claim_any_job" if every_kind else "claim_next_job")
        hold_sql = (
            engine.sql("hold_any_jobs" if every_kind else "hold_next_jobs") if batch.hold else ""
        )
        picking = {
            "runner_id": runner_id,
            "now": stamp,
            "kinds": engine.names(kinds),
            "queues": engine.names(queues),
        }

        kept_once_committed: list[Callable[[], None]] = []  # what the claims read

        def send(conn: Connection) -> _Sent:
            recorded = send_outcomes(engine, conn, batch.outcomes, now)
            if batch.outcomes and (batch.limits or batch.rates or batch.limited_queues):
                engine.announce(conn)  # a limited kind's slot may be free: others look again
            elif batch.outcomes:  # or a queue's this runner has not learnt is limited
                engine.announce_if_queues_limited(conn)
            if batch.give_backs:
                give_back = engine.sql("give_back_held_job")
                for claim in batch.give_backs:
                    conn.execute(give_back, {"id": claim.job_id, "runner_id": runner_id})
            started = [_start(engine, conn, claim, stamp) for claim in batch.starts]
            limited = _NOTHING_LIMITED
            if rules is not None and batch.claim:  # limited kinds first, up to their free
                # slots: counted, then claimed, reading results as it goes (in the transaction)
                limited = self._claim_limited(
                    conn, rules, picking, batch.claim, now, kinds=served, queues=queues
                )
                kept_once_committed[:] = limited.kept_once_committed
            claiming = batch.claim - len(limited.claimed) if kinds != [] else 0
            claimed = (
                conn.execute(claim_sql, {**picking, "limit": claiming}) if claiming > 0 else None
            )
            holding = batch.hold if kinds != [] else 0
            held = conn.execute(hold_sql, {**picking, "limit": holding}) if holding else None
            # A queue limited since the runner last looked is passed over above; this tells it.
            looking = batch.claim and limited.limited_queues is None
            seen = conn.execute(engine.sql("limited_queues"), {}) if looking else None
            return recorded, started, claimed, held, limited, seen

        def read(conn: Connection, sent: _Sent) -> BatchDone:
            recorded, started, claimed, held, limited, seen = sent
            done = BatchDone(
                recorded=landed(recorded),
                started=landed(started),
                claimed=list(limited.claimed),
                rate_opens_at=limited.opens_at,
                limited_queues=limited.limited_queues
                if seen is None
                else frozenset(name for name, *_ in seen.fetchall()),
            )
            log_set_aside(limited.unreadable)

            def failed(claim: Claim) -> None:
                send_outcomes(engine, conn, [(claim, Fail(code=INTERNAL_ERROR))], now)

            def started_and_failed(claim: Claim) -> None:
                _start(engine, conn, claim, stamp)
                failed(claim)

            for cursor, sql, into, limit, set_aside in (
                (claimed, claim_sql, done.claimed, batch.claim, failed),
                (held, hold_sql, done.held, batch.hold, started_and_failed),
            ):
                if cursor is not None:
                    limit -= len(into)  # a batch's claims of limited kinds came first
                    into.extend(self._readable(conn, cursor, sql, picking, limit, set_aside))
            return done

        if rules is None:
            return engine.send_then_read(send, read, durable=batch.durable)
        try:
            done = engine.send_then_read(send, read, durable=batch.durable)
        except BaseException:
            forget_windows(engine)  # what it read of a rate's window may have rolled back
            forget_lists(engine)  # and the fair keys it listed, or found dry
            raise
        for keep in kept_once_committed:
            keep()
        return done

    def _claim_limited(
        self,
        conn: Connection,
        rules: Batch,
        picking: dict[str, Any],
        wanted: int,
        now: datetime.datetime,
        *,
        kinds: Collection[str] | None,
        queues: Collection[str] | None,
    ) -> _Limited:
        """Up to ``wanted`` readable jobs of the limited kinds and queues
        (adapters/sql/limits.py); an unreadable row is failed and another claimed in its
        place."""
        engine = self._engine

        openings: list[datetime.datetime] = []
        kept: list[Callable[[], None]] = []  # of every claim: window reads, fair rounds

        def claim(count: int) -> LimitedClaim:
            taken = claim_limited(
                engine, conn, rules, picking, count, now, kinds=kinds, queues=queues
            )
            kept.extend(taken.kept_once_committed)  # more than once: keeping is idempotent
            if taken.opens_at is not None:  # a claim again (after an unreadable row) counts
                openings.append(taken.opens_at)
            return taken

        taken = claim(wanted)
        jobs, unreadable = claim_readable(
            lambda count: claim(count).rows,
            lambda claim: send_outcomes(engine, conn, [(claim, Fail(code=INTERNAL_ERROR))], now),
            limit=len(taken.rows),
            runner_id=picking["runner_id"],
            parse_time=engine.parse_time,
            claimed=taken.rows,
        )
        return _Limited(
            claimed=jobs,
            unreadable=unreadable,
            opens_at=min(openings) if openings else None,
            limited_queues=taken.limited_queues,
            kept_once_committed=tuple(kept),
        )

    def _readable(
        self,
        conn: Connection,
        cursor: Cursor,
        sql: str,
        picking: dict[str, Any],
        limit: int,
        set_aside: Callable[[Claim], None],
    ) -> list[ClaimedJob]:
        """The readable jobs a claim or a hold returned, each unreadable row set aside (failed)
        and another taken in its place."""

        def more(count: int) -> list[Any]:
            return conn.execute(sql, {**picking, "limit": count}).fetchall()

        jobs, unreadable = claim_readable(
            more,
            set_aside,
            limit=limit,
            runner_id=picking["runner_id"],
            parse_time=self._engine.parse_time,
            claimed=cursor.fetchall(),
        )
        log_set_aside(unreadable)  # a row set aside is failed with the claim, or after it
        return jobs

    def give_back_held(self, runner_id: str) -> int:
        return self._change("give_back_held_jobs", {"runner_id": runner_id})

    def put_back(
        self,
        claims: Collection[Claim],
        *,
        now: datetime.datetime,
        started: Mapping[Claim, object] | None = None,
    ) -> int:
        if not claims:
            return 0
        stamp = self._engine.stamp(now)
        sql = self._engine.sql("requeue_job")
        fenced = f"{sql} AND started_at = {self._engine.placeholder('started_at')}"

        def put(conn: Connection) -> int:
            moved = 0
            for claim in claims:
                params = requeue_parameters(claim, None, now=stamp)
                if started is None:
                    moved += conn.execute(sql, params).rowcount
                else:
                    params["started_at"] = started.get(claim)
                    moved += conn.execute(fenced, params).rowcount
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


def _start(engine: SqlEngine, conn: Connection, claim: Claim, stamp: Any) -> Cursor:
    """Start a job held ahead under ``claim`` (its cursor's rowcount: 1 when it started)."""
    return conn.execute(engine.sql("start_held_job"), {**fence(claim), "now": stamp})
