"""The statements that list and count jobs: a filtered page newest first (or oldest first for
the page before), how many match, and the counts by queue, kind and state; both engines run
them, with their own placeholders. Written here rather than in query files because their
conditions depend on the filter, and the states' tests come from ``core.states`` (one rule).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

from jobtable.core.jobs import JobFilter
from jobtable.core.states import (
    SQL_FAILED_STATE,
    SQL_SCHEDULED_STATE,
    SQL_STATE,
    SQL_TEST,
    State,
)

VERSION = "coalesce((SELECT max(version) FROM job_events WHERE job_id = jobs.id), 0)"
"""A job row's version: its newest change's number (0: never changed)."""

_SHOWN = "CASE status WHEN 'scheduled' THEN 'queued' ELSE status END"
_LISTED = (
    f"SELECT id, kind, {_SHOWN} AS shown, result, error, {VERSION} AS version, "
    f"{SQL_STATE} AS state FROM jobs"
)


_IN_INDEX = {
    status: f"status = '{status}'" + ("" if status == "running" else " AND status <> 'running'")
    for status in ("queued", "scheduled", "running", "succeeded", "failed")
}
"""Each stored status as a list's branch selects it, in the words of the partial index that
holds it (migration 0010): SQLite uses a partial index only for a query that repeats its
predicate, and a literal status, never a parameter."""


def list_statement(
    which: JobFilter,
    *,
    limit: int,
    after: str | None,
    placeholder: Callable[[str], str],
    stamp: Callable[[datetime.datetime], Any] = str,
    columns: str | None = None,
    before: str | None = None,
) -> tuple[str, dict[str, Any]]:
    """A list's statement: one index range per stored status, newest first, merged; with
    ``before``, the ``limit`` jobs just newer than it, oldest first (a previous page).

    Each branch reads at most ``limit`` rows from ``jobs_by_status``,
    ``jobs_by_kind`` or ``jobs_by_queue`` (whichever its filters pin), so a
    page costs the same however deep the table is; running jobs, which those
    indexes leave out, come from ``jobs_running`` in id order (they are few:
    one per busy worker). ``placeholder`` spells a named parameter in the
    engine's style, ``stamp`` a time in its form; ``columns`` (default: a listed job's)
    are what each row gives.
    """
    head = _LISTED if columns is None else f"SELECT {columns} FROM jobs"
    params, common = _common_conditions(which, placeholder, stamp)
    if after is not None:
        params["after"] = after
        common.append(f"id < {placeholder('after')}")
    if before is not None:
        params["before"] = before
        common.append(f"id > {placeholder('before')}")
    params["limit"] = limit
    tail = f" ORDER BY id {'DESC' if before is None else 'ASC'} LIMIT {placeholder('limit')}"
    unfiltered = which.status is None and which.state is None and which.stored is None
    if unfiltered and which.kind is None and which.queue is None:
        where = f" WHERE {' AND '.join(common)}" if common else ""
        return head + where + tail, params
    statuses = which.stored_statuses()
    if not statuses:  # a state no job of that status can be in
        return f"{head} WHERE 1 = 0{tail}", params
    branches = []
    for number, status in enumerate(statuses):
        conditions = [_IN_INDEX[status], *common]
        branch = f"{head} WHERE {' AND '.join(conditions)}{tail}"
        branches.append(f"SELECT * FROM ({branch}) AS branch{number}")
    return " UNION ALL ".join(branches) + tail, params


def count_statement(
    which: JobFilter,
    *,
    placeholder: Callable[[str], str],
    stamp: Callable[[datetime.datetime], Any],
) -> tuple[str, dict[str, Any]]:
    """How many jobs ``which`` matches, one count per stored status (each from its index)
    summed: a statement whose one row is the count."""
    params, common = _common_conditions(which, placeholder, stamp)
    statuses = which.stored_statuses()
    if not statuses:
        return "SELECT 0", params
    counts = [
        f"(SELECT count(*) FROM jobs WHERE {' AND '.join([_IN_INDEX[status], *common])})"
        for status in statuses
    ]
    return "SELECT " + " + ".join(counts), params


def _common_conditions(
    which: JobFilter, placeholder: Callable[[str], str], stamp: Callable[[datetime.datetime], Any]
) -> tuple[dict[str, Any], list[str]]:
    """The conditions every branch of a list or count shares, and their parameters."""
    params: dict[str, Any] = {}
    common: list[str] = []
    for name in ("kind", "queue"):
        value = getattr(which, name)
        if value is not None:
            params[name] = value
            common.append(f"{name} = {placeholder(name)}")
    if which.through is not None:
        params["through"] = which.through
        common.append(f"id <= {placeholder('through')}")
    if which.created_after is not None:
        params["created_after"] = stamp(which.created_after)
        common.append(f"created_at >= {placeholder('created_after')}")
    if which.created_before is not None:
        params["created_before"] = stamp(which.created_before)
        common.append(f"created_at < {placeholder('created_before')}")
    if which.id_part is not None:
        params["id_start"] = which.id_part + "%"
        params["id_end"] = "%" + which.id_part
        common.append(f"(id LIKE {placeholder('id_start')} OR id LIKE {placeholder('id_end')})")
    if which.state is not None and which.state in SQL_TEST:
        common.append(SQL_TEST[which.state])
    return params, common


JOB_COUNTS = (
    "SELECT queue, kind, status, count(*), retrying FROM ("
    " SELECT queue, kind, status,"
    f" CASE WHEN status = 'scheduled' AND {SQL_TEST[State.RETRYING]} THEN 1 ELSE 0 END"
    " AS retrying FROM jobs WHERE status IN ('queued', 'scheduled') AND status <> 'running'"
    " UNION ALL SELECT queue, kind, status, 0 FROM jobs WHERE status = 'running'"
    ") AS waiting_or_running GROUP BY queue, kind, status, retrying"
    " ORDER BY queue, kind, status, retrying"
)
"""Jobs waiting or running, by queue, kind, stored status and (for the scheduled) whether
they are retrying: only rows in these states are read (jobs_by_status for the waiting,
jobs_running for the running), however many finished jobs the table keeps."""

QUEUE_STATES = " UNION ALL ".join(
    f"SELECT queue, {told}, count(*) FROM jobs WHERE status = '{stored}' GROUP BY queue, 2"
    for stored, told in (("failed", SQL_FAILED_STATE), ("scheduled", SQL_SCHEDULED_STATE))
)
"""The states a stored status does not tell by itself, by queue: the rows of the scheduled and
failed jobs are told apart (the others' states are their statuses, counted from indexes
alone): the failed ones from ``jobs_failed_by_queue`` alone (migration 0016), the scheduled
ones (few: those due later) from their rows."""


def counts_and_states(counts_by_status: str) -> str:
    """The queues' counts by status (``queues.sql``) and ``QUEUE_STATES`` in one statement,
    each row tagged ``status`` or ``state``: one snapshot, on PostgreSQL too (two statements
    at READ COMMITTED see two moments)."""
    return (
        f"SELECT 'status', counted.* FROM ({counts_by_status}) AS counted "
        f"UNION ALL SELECT 'state', split.* FROM ({QUEUE_STATES}) AS split"
    )
