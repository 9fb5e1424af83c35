"""What the SQL stores share: claim fences as query parameters, and rows as claimed jobs.

Both stores name their parameters the same (``id``, ``runner_id``,
``attempt``; ``result`` or ``code``; ``now``), so these helpers serve both.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable
from typing import Any

from jobtable.core.jobs import Claim, ClaimedJob
from jobtable.core.liveness import RunnerInfo, RunnerRecord
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


def runner_parameters(info: RunnerInfo) -> dict[str, Any]:
    """A runner's row as query parameters (``started_at`` as given; each store stamps it)."""
    return {
        "id": info.id,
        "host": info.host,
        "pid": info.pid,
        "started_at": info.started_at,
        "kinds": json.dumps(list(info.kinds)),
        "queues": None if info.queues is None else json.dumps(list(info.queues)),
        "workers": info.workers,
    }


def runner_record(row: Any, *, parse_time: Callable[[Any], datetime.datetime]) -> RunnerRecord:
    """A ``SELECT id, host, pid, started_at, kinds, queues, workers, busy, last_seen`` row."""
    runner_id, host, pid, started_at, kinds, queues, workers, busy, last_seen = row
    info = RunnerInfo(
        id=runner_id,
        host=host,
        pid=pid,
        started_at=parse_time(started_at),
        kinds=tuple(json.loads(kinds)),
        queues=None if queues is None else tuple(json.loads(queues)),
        workers=workers,
    )
    return RunnerRecord(info=info, busy=busy, last_seen=parse_time(last_seen))
