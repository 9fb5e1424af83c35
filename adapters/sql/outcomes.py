"""Decided outcomes as the parameters of the two statements that record them.

``end_attempts`` ends jobs for good (Succeed, Fail), a batch in one statement;
``requeue_job`` puts a job back in line (RunAgain, or a claim put back unrun).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from jobtable.adapters.sql.engine import Connection, Cursor, SqlEngine
from jobtable.core.jobs import Claim, Recovered
from jobtable.core.outcome import Fail, Outcome, RunAgain, Succeed
from jobtable.core.status import Status


def fence(claim: Claim) -> dict[str, Any]:
    """The parameters that restrict a write to the job running under exactly this claim.

    A row that records no owner is fenced by an empty ``runner_id`` (``HeldJob``'s).
    """
    return {"id": claim.job_id, "runner_id": claim.runner_id, "attempt": claim.attempt}


def ended_rows(ended: Iterable[tuple[Claim, Succeed | Fail]]) -> str:
    """``end_attempts``' ``rows``: a JSON array, one object per attempt ending its job."""
    return json.dumps(
        [
            {
                **fence(claim),
                "status": Status.SUCCEEDED.value
                if isinstance(outcome, Succeed)
                else Status.FAILED.value,
                "result": outcome.result if isinstance(outcome, Succeed) else None,
                "code": None if isinstance(outcome, Succeed) else outcome.code,
            }
            for claim, outcome in ended
        ]
    )


def requeue_parameters(
    claim: Claim,
    again: RunAgain | None,
    *,
    now: Any,
    stamp: Callable[[Any], Any] = lambda time: time,
) -> dict[str, Any]:
    """``requeue_job``'s parameters: the attempt ran and runs ``again``, or (None) its claim is
    put back unrun. ``now`` is already stamped; ``stamp`` stamps ``again.run_at``."""
    if again is None:
        return {**fence(claim), "ran": 0, "run_at": now, "code": None, "uncounted": 0, "now": now}
    return {
        **fence(claim),
        "ran": 1,
        "run_at": stamp(again.run_at),
        "code": again.code,
        "uncounted": 0 if again.counts_attempt else 1,
        "now": now,
    }


def recovered(outcomes: Iterable[Outcome]) -> Recovered:
    """What settling dead runners' jobs came to: how many failed, how many run again."""
    failed = requeued = 0
    for outcome in outcomes:
        failed += isinstance(outcome, Fail)
        requeued += isinstance(outcome, RunAgain)
    return Recovered(failed=failed, requeued=requeued)


def send_outcomes(
    engine: SqlEngine,
    conn: Connection,
    outcomes: Sequence[tuple[Claim, Outcome]],
    now: datetime.datetime,
) -> tuple[Cursor | None, list[Cursor]]:
    """Send the statements that record ``outcomes``; their cursors, to read with ``landed``."""
    stamp = engine.stamp(now)
    ending = [
        (claim, outcome) for claim, outcome in outcomes if isinstance(outcome, Succeed | Fail)
    ]
    ended = None
    if ending:
        params = {"rows": ended_rows(ending), "now": stamp}
        ended = conn.execute(engine.sql("end_attempts"), params)
    requeued = [
        conn.execute(
            engine.sql("requeue_job"),
            requeue_parameters(claim, outcome, now=stamp, stamp=engine.stamp),
        )
        for claim, outcome in outcomes
        if isinstance(outcome, RunAgain)
    ]
    if requeued:
        engine.announce(conn)  # it may be due at once: other processes' workers may claim it
    return ended, requeued


def landed(
    outcomes: Sequence[tuple[Claim, Outcome]], ended: Cursor | None, requeued: list[Cursor]
) -> list[bool]:
    """Whether each outcome ``send_outcomes`` sent landed, in order (False: a stale claim)."""
    ended_ids = {row[0] for row in ended.fetchall()} if ended is not None else set()
    moved = iter([cursor.rowcount == 1 for cursor in requeued])
    return [
        next(moved) if isinstance(outcome, RunAgain) else claim.job_id in ended_ids
        for claim, outcome in outcomes
    ]
