"""Decided outcomes as the parameters of the two statements that record them.

``end_attempt`` ends a job for good (Succeed, Fail); ``requeue_job`` puts a job back
in line (RunAgain, or a claim put back unrun).
"""

from __future__ import annotations

import datetime
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


def end_parameters(claim: Claim, outcome: Succeed | Fail, *, now: Any) -> dict[str, Any]:
    """``end_attempt``'s parameters: ``now`` is already stamped."""
    if isinstance(outcome, Succeed):
        return {
            **fence(claim),
            "status": "succeeded",
            "result": outcome.result,
            "code": None,
            "error_class": None,
            "now": now,
        }
    return {
        **fence(claim),
        "status": Status.FAILED.value,
        "result": None,
        "code": outcome.code,
        "error_class": outcome.error_class,
        "now": now,
    }


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
        return {
            **fence(claim),
            "ran": 0,
            "run_at": now,
            "code": None,
            "error_class": None,
            "uncounted": 0,
            "now": now,
        }
    return {
        **fence(claim),
        "ran": 1,
        "run_at": stamp(again.run_at),
        "code": again.code,
        "error_class": again.error_class,
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
) -> list[Cursor]:
    """Send the statements that record ``outcomes``, one each, in order; their cursors, to
    read with ``landed``."""
    stamp = engine.stamp(now)
    sent = []
    for claim, outcome in outcomes:
        if isinstance(outcome, RunAgain):
            params = requeue_parameters(claim, outcome, now=stamp, stamp=engine.stamp)
            sent.append(conn.execute(engine.sql("requeue_job"), params))
        else:
            sent.append(
                conn.execute(engine.sql("end_attempt"), end_parameters(claim, outcome, now=stamp))
            )
    if any(isinstance(outcome, RunAgain) for _, outcome in outcomes):
        engine.announce(conn)  # it may be due at once: other processes' workers may claim it
    return sent


def landed(sent: list[Cursor]) -> list[bool]:
    """Whether each outcome ``send_outcomes`` sent landed, in order (False: a stale claim)."""
    return [cursor.rowcount == 1 for cursor in sent]
