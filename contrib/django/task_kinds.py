"""A Django task as a jobtable kind: named by its module path, its payload the call's
arguments, its result the return value. The handler sends Django's ``task_started`` and
``task_finished`` signals around the call, as Django's own backends do.

A task's exception is never logged or stored with its text: the job records its class
path, and ``task_finished`` is sent outside the ``except`` block, so Django's own
receiver logs no traceback.
"""

from __future__ import annotations

import datetime
from inspect import iscoroutinefunction
from typing import TYPE_CHECKING, Any

import attrs
from django.db import close_old_connections
from django.tasks import Task, TaskContext, TaskResult, TaskResultStatus
from django.tasks.base import TaskError
from django.tasks.signals import task_finished, task_started
from django.utils import timezone
from django.utils.json import normalize_json

from jobtable.core import JobContext, Kind, KindRegistry
from jobtable.core.handling import class_path

if TYPE_CHECKING:
    from jobtable.contrib.django.backend import JobtableBackend


@attrs.frozen
class TaskCall:
    """A task's arguments, as the job's payload."""

    args: list[Any] = attrs.Factory(list)
    kwargs: dict[str, Any] = attrs.Factory(dict)


@attrs.frozen
class TaskReturn:
    """A task's return value, as the job's result (all of it is public: Django shows it)."""

    return_value: Any = None

    def public(self) -> dict[str, Any]:
        return {"return_value": self.return_value}


def register_task(kinds: KindRegistry, task: Task, backend: JobtableBackend) -> Kind[TaskCall]:
    """Register ``task`` as the kind named by its module path; its handle."""
    runs = (
        _async_handler(task, backend) if iscoroutinefunction(task.func) else _handler(task, backend)
    )
    return kinds.register(task.module_path, runs, payload=TaskCall, result=TaskReturn)


def _running(task: Task, backend: JobtableBackend, ctx: JobContext, call: TaskCall) -> TaskResult:
    now = timezone.now()
    return TaskResult(
        task=task,
        id=ctx.job_id,
        status=TaskResultStatus.RUNNING,
        enqueued_at=None,
        started_at=now,
        last_attempted_at=now,
        finished_at=None,
        args=call.args,
        kwargs=call.kwargs,
        backend=backend.alias,
        errors=[],
        worker_ids=backend.worker_ids(ctx),
    )


def _arguments(task: Task, result: TaskResult, call: TaskCall) -> tuple[list[Any], dict[str, Any]]:
    args = [TaskContext(task_result=result), *call.args] if task.takes_context else list(call.args)
    return args, dict(call.kwargs)


def _failed(result: TaskResult, error: BaseException) -> None:
    object.__setattr__(result, "finished_at", timezone.now())
    object.__setattr__(result, "status", TaskResultStatus.FAILED)
    result.errors.append(TaskError(exception_class_path=class_path(error), traceback=""))


def _succeeded(result: TaskResult, value: Any) -> TaskReturn:
    returned = normalize_json(value)  # TypeError for a value JSON cannot hold: the task fails
    object.__setattr__(result, "_return_value", returned)
    object.__setattr__(result, "finished_at", timezone.now())
    object.__setattr__(result, "status", TaskResultStatus.SUCCESSFUL)
    return TaskReturn(return_value=returned)


def _handler(task: Task, backend: JobtableBackend) -> Any:
    sender = type(backend)

    def run_task(ctx: JobContext, call: TaskCall) -> TaskReturn:
        close_old_connections()  # as Django does around a request
        try:
            result = _running(task, backend, ctx, call)
            task_started.send(sender, task_result=result)
            args, kwargs = _arguments(task, result, call)
            failure: BaseException | None = None
            try:
                returned = _succeeded(result, task.func(*args, **kwargs))
            except Exception as error:
                failure = error
                _failed(result, error)
            task_finished.send(sender, task_result=result)  # outside except: no traceback logged
            if failure is not None:
                raise failure
            return returned
        finally:
            close_old_connections()

    return run_task


def _async_handler(task: Task, backend: JobtableBackend) -> Any:
    sender = type(backend)

    async def run_task(ctx: JobContext, call: TaskCall) -> TaskReturn:
        result = _running(task, backend, ctx, call)
        await task_started.asend(sender, task_result=result)
        args, kwargs = _arguments(task, result, call)
        failure: BaseException | None = None
        try:
            returned = _succeeded(result, await task.func(*args, **kwargs))
        except Exception as error:
            failure = error
            _failed(result, error)
        await task_finished.asend(sender, task_result=result)
        if failure is not None:
            raise failure
        return returned

    return run_task


def as_aware(when: datetime.datetime | None) -> datetime.datetime | None:
    """A task's ``run_after`` as jobtable takes it: aware (a naive one, allowed when
    ``USE_TZ`` is off, is in Django's default time zone)."""
    if when is None or timezone.is_aware(when):
        return when
    return timezone.make_aware(when, timezone.get_default_timezone())
