"""Settling a dead runner's jobs with the outcomes the core decided for them.

Each dead runner in a transaction of its own, and only while the evidence of its death
still holds there: its beat unchanged, and (where its lock was found absent) its lock
taken by the settler until commit, so an owner that comes back finds its jobs settled.
"""

from __future__ import annotations

import abc
import contextlib
import datetime
from collections.abc import Collection

from jobtable.adapters.readable_rows import log_settled_unreadable
from jobtable.adapters.sql.engine import Connection, SqlPart
from jobtable.adapters.sql.outcomes import landed, recovered, send_outcomes
from jobtable.core.jobs import HeldJob, Recovered
from jobtable.core.liveness import Settlement
from jobtable.core.outcome import Outcome


class SqlSettling(SqlPart):
    def settle_dead(
        self, settlements: Collection[Settlement], *, now: datetime.datetime
    ) -> Recovered:
        recorded: list[tuple[HeldJob, Outcome]] = []
        for settlement in settlements:
            with contextlib.ExitStack() as until_committed:

                def settle(
                    conn: Connection, settlement: Settlement = settlement
                ) -> list[tuple[HeldJob, Outcome]]:
                    return self._settle(conn, settlement, now, until_committed)

                recorded.extend(self._engine.write(settle))
        log_settled_unreadable([job for job, _ in recorded])
        return recovered(outcome for _, outcome in recorded)

    def _settle(
        self,
        conn: Connection,
        settlement: Settlement,
        now: datetime.datetime,
        until_committed: contextlib.ExitStack,
    ) -> list[tuple[HeldJob, Outcome]]:
        verdict = settlement.verdict
        row = conn.execute(self._engine.sql("runner_beat"), {"id": verdict.runner_id}).fetchone()
        if verdict.registered != (row is not None) or (row is not None and row[0] != verdict.beat):
            return []  # it beat again, came back, or another settled it first
        lock_needed = verdict.lock_absent or not verdict.registered
        if lock_needed and not self._hold_dead_runners_lock(
            conn, verdict.runner_id, until_committed
        ):
            return []  # its owner holds its lock again
        outcomes = [(job.claim, outcome) for job, outcome in settlement.outcomes]
        held = landed(send_outcomes(self._engine, conn, outcomes, now))
        if outcomes:
            self._engine.announce(conn)  # slots of limited kinds may be free: others look
        conn.execute(self._engine.sql("give_back_held_jobs"), {"runner_id": verdict.runner_id})
        conn.execute(self._engine.sql("unregister_runner"), {"id": verdict.runner_id})
        return [pair for pair, done in zip(settlement.outcomes, held, strict=True) if done]

    @abc.abstractmethod
    def _hold_dead_runners_lock(
        self, conn: Connection, runner_id: str | None, until_committed: contextlib.ExitStack
    ) -> bool:
        """Take a dead runner's liveness lock, to hold until the settling transaction
        commits (``until_committed`` closes after it); False when its owner holds it."""
