"""A jobtable job as Django's ``TaskResult``: status, times, arguments, return value,
errors (each a failed attempt's exception class path, with an empty traceback: the
message is never stored) and the workers that ran it."""

from __future__ import annotations

import json
from typing import Any

from django.tasks import Task, TaskResult, TaskResultStatus
from django.tasks.base import TaskError

from jobtable.core import Status
from jobtable.core.codes import CANCELLED, TIMED_OUT
from jobtable.core.jobs import JobDetail

STATUSES = {
    Status.QUEUED: TaskResultStatus.READY,
    Status.RUNNING: TaskResultStatus.RUNNING,
    Status.SUCCEEDED: TaskResultStatus.SUCCESSFUL,
    Status.FAILED: TaskResultStatus.FAILED,
}

NOT_FAILED = frozenset({"succeeded", "running", "snoozed", "given back"})

CODE_CLASSES = {
    TIMED_OUT: "builtins.TimeoutError",
    CANCELLED: "asyncio.CancelledError",
}
"""The exception class a failed attempt that raised none is told by, by its code; any
other code (a declared failure, ``interrupted``) is a ``jobtable.core.errors.Failure``."""


def task_result(task: Task, detail: JobDetail, backend: str) -> TaskResult:
    """``detail`` (whose kind is ``task``) as the result Django's ``get_result`` returns."""
    call = json.loads(detail.payload or "{}")
    attempts = detail.attempts
    result = TaskResult(
        task=task,
        id=detail.job.id,
        status=STATUSES[detail.job.status],
        enqueued_at=detail.created_at,
        started_at=next((a.started_at for a in attempts if a.started_at is not None), None),
        last_attempted_at=attempts[-1].started_at if attempts else None,
        finished_at=detail.finished_at,
        args=list(call.get("args", [])),
        kwargs=dict(call.get("kwargs", {})),
        backend=backend,
        errors=[
            TaskError(exception_class_path=_error_class(a.outcome, a.error_class), traceback="")
            for a in attempts
            if a.outcome not in NOT_FAILED
        ],
        worker_ids=[a.runner_id for a in attempts if a.runner_id and a.outcome != "given back"],
    )
    if detail.job.status is Status.SUCCEEDED:
        returned: Any = (detail.job.result or {}).get("return_value")
        object.__setattr__(result, "_return_value", returned)
    return result


def _error_class(outcome: str, error_class: str | None) -> str:
    if error_class is not None:
        return error_class
    return CODE_CLASSES.get(outcome, "jobtable.core.errors.Failure")
