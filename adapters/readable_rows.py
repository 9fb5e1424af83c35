"""A claim's rows read one by one: a row that cannot be read is set aside, not raised.

A row written by a tool or an older version may hold what jobtable cannot
read: a time that does not parse, a retry policy or checkpoint that is not
JSON, a number stored as text. Raising for it would fail the whole claim,
which is given back and tried again a second later, forever, with every
job behind it waiting. Instead the stores fail such a row
``internal_error`` (fenced, in the claim's transaction or right after) and
claim again in its place; ``log_set_aside`` tells of each once, by id and
column, never by value.
"""

from __future__ import annotations

import datetime
import json
import logging
import math
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from jobtable.core.codes import INTERNAL_ERROR
from jobtable.core.jobs import Claim, ClaimedJob, HeldJob
from jobtable.core.policies import RetryPolicy

_log = logging.getLogger("jobtable.store")


class UnreadableRowError(ValueError):
    """A stored row's ``column`` holds a value jobtable cannot read."""

    def __init__(self, column: str) -> None:
        super().__init__(f"unreadable {column}")
        self.column = column


@attrs.frozen(kw_only=True)
class Unreadable:
    """A row a claim marked running but could not read: to fail under ``claim``."""

    claim: Claim
    kind: str
    column: str


def whole(column: str, value: Any) -> int:
    """A stored count (an attempt, a budget) as an int; UnreadableRowError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise UnreadableRowError(column)
    return value


def stored_policy(max_attempts: Any, retry: Any) -> RetryPolicy:
    """The retry policy a row stores; UnreadableRowError when either column cannot be read."""
    budget = whole("max_attempts", max_attempts)
    if retry is not None and not isinstance(retry, str):
        raise UnreadableRowError("retry")
    try:
        return RetryPolicy.stored(budget, retry)
    except Exception:
        raise UnreadableRowError("retry") from None


def _time(value: Any, parse_time: Callable[[Any], datetime.datetime]) -> datetime.datetime:
    if value is None:  # PostgreSQL's claim returns NULL for a time Python cannot hold
        raise UnreadableRowError("run_at")
    try:
        return parse_time(value)
    except Exception:
        raise UnreadableRowError("run_at") from None


def _timeout(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise UnreadableRowError("timeout")
    return float(value)


def _checkpoint(value: Any) -> str | None:
    """The last partial result: JSON text, as the handler's context decodes it."""
    if value is None:
        return None
    try:
        if not isinstance(value, str):
            raise TypeError
        json.loads(value)
    except Exception:
        raise UnreadableRowError("result") from None
    return value


def _claimed(
    row: Any, runner_id: str, parse_time: Callable[[Any], datetime.datetime]
) -> ClaimedJob:
    (
        job_id,
        kind,
        payload,
        attempt,
        max_attempts,
        retry,
        timeout,
        result,
        run_at,
        _,
        queue,
        trace,
    ) = row
    return ClaimedJob(
        claim=Claim(job_id=job_id, runner_id=runner_id, attempt=whole("attempt", attempt)),
        kind=kind,
        payload=payload,
        policy=stored_policy(max_attempts, retry),
        timeout=_timeout(timeout),
        checkpoint=_checkpoint(result),
        due_at=_time(run_at, parse_time),
        queue=queue,
        trace_context=trace if isinstance(trace, str) else None,
    )


def held_job(row: Any, owner: str | None) -> HeldJob:
    """A ``running_jobs`` row (``id, kind, attempt, max_attempts, retry, started_at``) of
    ``owner``'s.

    One whose policy or attempt cannot be read comes with no policy, its column named.
    """
    job_id, kind, attempt, max_attempts, retry, started = row
    claim = Claim(job_id=job_id, runner_id=owner or "", attempt=attempt)
    try:
        policy = stored_policy(max_attempts, retry)
        whole("attempt", attempt)
    except UnreadableRowError as error:
        return HeldJob(
            claim=claim, kind=str(kind), policy=None, unreadable=error.column, started=started
        )
    return HeldJob(claim=claim, kind=kind, policy=policy, started=started)


def log_settled_unreadable(recorded: Sequence[HeldJob]) -> None:
    """Tell of each settled job whose row could not be read, once (after it committed)."""
    for job in recorded:
        if job.unreadable is not None:
            log_unreadable(job.claim.job_id, job.unreadable, kind=job.kind)


def read_claims(
    rows: Sequence[Any], runner_id: str, *, parse_time: Callable[[Any], datetime.datetime]
) -> tuple[list[ClaimedJob], list[Unreadable]]:
    """A claim's ``RETURNING id, kind, payload, attempt, max_attempts, retry, timeout,
    result, run_at, priority, queue`` rows: the jobs read, in claim order (RETURNING keeps none),
    and the rows that could not be."""
    read: list[tuple[Any, ClaimedJob]] = []
    unreadable: list[Unreadable] = []
    for row in rows:
        try:
            read.append((row[9], _claimed(row, runner_id, parse_time)))
        except UnreadableRowError as error:
            claim = Claim(job_id=row[0], runner_id=runner_id, attempt=row[3])
            unreadable.append(Unreadable(claim=claim, kind=str(row[1]), column=error.column))
    read.sort(key=lambda each: (each[0], each[1].due_at, each[1].id))
    return [job for _, job in read], unreadable


def claim_readable(
    claim: Callable[[int], Sequence[Any]],
    set_aside: Callable[[Claim], Any],
    *,
    limit: int,
    runner_id: str,
    parse_time: Callable[[Any], datetime.datetime],
    claimed: Sequence[Any] | None = None,
) -> tuple[list[ClaimedJob], list[Unreadable]]:
    """Up to ``limit`` readable jobs: ``claim(n)`` claims n more rows; each unreadable one is
    failed by ``set_aside(claim)`` and another claimed in its place.

    ``claimed``: rows a claim already returned (a claim sent ahead in a pipeline). Ends:
    each round marks what it claims running, so none is claimed twice.
    """
    jobs: list[ClaimedJob] = []
    unreadable: list[Unreadable] = []
    rows = claim(limit) if claimed is None else claimed
    while True:
        read, skipped = read_claims(rows, runner_id, parse_time=parse_time)
        jobs.extend(read)
        unreadable.extend(skipped)
        for row in skipped:
            set_aside(row.claim)
        if not skipped or len(jobs) >= limit:
            return jobs, unreadable
        rows = claim(limit - len(jobs))


def log_set_aside(unreadable: Sequence[Unreadable]) -> None:
    """Tell of each row set aside, once (after its failure committed)."""
    for row in unreadable:
        log_unreadable(row.claim.job_id, row.column, kind=row.kind)


def log_unreadable(job_id: str, column: str, *, kind: str | None = None) -> None:
    """One line for a job failed because its row could not be read: id and column, no value."""
    fields = {"job_id": str(job_id), "code": INTERNAL_ERROR}
    named = ""
    if kind is not None:
        fields["kind"] = kind
        named = f" kind={kind}"
    _log.error(
        "job failed job_id=%s%s code=%s reason=unreadable row column=%s",
        job_id,
        named,
        INTERNAL_ERROR,
        column,
        extra=fields,
    )
