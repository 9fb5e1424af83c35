"""What the SQL stores share: claim fences as query parameters, and rows as claimed jobs.

Both stores name their parameters the same (``id``, ``runner_id``,
``attempt``; ``result`` or ``code``; ``now``), so these helpers serve both.
"""

from __future__ import annotations

from typing import Any

from jobtable.core.jobs import Claim, ClaimedJob
from jobtable.core.outcome import Fail, Succeed


def fence(claim: Claim) -> dict[str, Any]:
    """The parameters that restrict a write to the job running under exactly this claim."""
    return {"id": claim.job_id, "runner_id": claim.runner_id, "attempt": claim.attempt}


def finish_parameters(
    claim: Claim, outcome: Succeed | Fail, now: Any, *, succeed_sql: str, fail_sql: str
) -> tuple[str, dict[str, Any]]:
    """The statement and parameters that record ``outcome`` under ``claim``."""
    if isinstance(outcome, Succeed):
        return succeed_sql, {**fence(claim), "result": outcome.result, "now": now}
    return fail_sql, {**fence(claim), "code": outcome.code, "now": now}


def claimed(row: Any, runner_id: str) -> ClaimedJob | None:
    """A ``RETURNING id, kind, payload, attempt`` row as a claimed job; None for no row."""
    if row is None:
        return None
    job_id, kind, payload, attempt = row
    return ClaimedJob(
        claim=Claim(job_id=job_id, runner_id=runner_id, attempt=attempt), kind=kind, payload=payload
    )
