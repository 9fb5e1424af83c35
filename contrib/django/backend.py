"""``JobtableBackend``: Django's tasks enqueued as jobtable jobs, their results read back.

Options (``TASKS[alias]["OPTIONS"]``): ``database``, a SQLite path or a
``postgresql://`` URL (default: Django's ``default`` database, shared: a task
enqueued inside ``transaction.atomic()`` commits or rolls back with it).
"""

from __future__ import annotations

import importlib
import json
import sys
import threading
from typing import Any

import attrs
from django.apps import apps
from django.db import connections, transaction
from django.tasks import Task, TaskResult, TaskResultStatus
from django.tasks.backends.base import BaseTaskBackend
from django.tasks.exceptions import TaskResultDoesNotExist
from django.tasks.signals import task_enqueued
from django.utils import timezone
from django.utils.json import normalize_json

from jobtable.adapters.system_clock import SystemClock
from jobtable.contrib.django import databases
from jobtable.contrib.django.results import task_result
from jobtable.contrib.django.task_kinds import TaskCall, as_aware, register_task
from jobtable.core import JobContext, Kind
from jobtable.core.client import Client
from jobtable.core.ids import could_exist
from jobtable.entrypoints.wiring import Store, open_store

DJANGO_DATABASE = "default"


def jobtable_priority(priority: int) -> int:
    """Django's priority (-100 to 100, higher first) as jobtable's (0 first to 9 last)."""
    return round((100 - priority) * 9 / 200)


class JobtableBackend(BaseTaskBackend):
    supports_defer = True
    supports_async_task = True
    supports_get_result = True
    supports_priority = True

    def __init__(self, alias: str, params: dict[str, Any]) -> None:
        super().__init__(alias, params)
        given = self.options.get("database")
        if given is None:
            databases.check_usable(DJANGO_DATABASE)  # psycopg2, memory: refused at start
        self._given: str | None = None if given is None else str(given)

    # -- the database --------------------------------------------------------

    @property
    def database(self) -> str:
        """The database jobs go to: the option, or Django's default database's path or URL."""
        return self._given if self._given is not None else databases.locate(DJANGO_DATABASE)

    @property
    def shares_django_database(self) -> bool:
        """Whether jobs are written on Django's own connection, in its transaction."""
        return self._given is None

    def client(self) -> Client:
        """The jobtable client over the database, opened (and migrated) on first use: one per
        database for the whole process, whichever thread's backend asks (Django makes one
        backend per thread)."""
        return _opened(self.database).client

    def close(self) -> None:
        """Close the database's connections (the worker and tests; Django never asks)."""
        _close(self.database)

    # -- enqueue ---------------------------------------------------------------

    def enqueue(self, task: Task, args: Any, kwargs: Any) -> TaskResult:
        self.validate_task(task)
        call = _call(task, args, kwargs)  # TypeError before anything is stored
        kind = self._kind(task)
        connection = None
        if self.shares_django_database:
            django_connection = connections[DJANGO_DATABASE]
            django_connection.ensure_connection()
            connection = django_connection.connection
        job_id = kind.enqueue(
            call,
            run_at=as_aware(task.run_after),
            queue=task.queue_name,
            priority=jobtable_priority(task.priority),
            connection=connection,
        )
        result = TaskResult(
            task=task,
            id=str(job_id),
            status=TaskResultStatus.READY,
            enqueued_at=timezone.now(),
            started_at=None,
            last_attempted_at=None,
            finished_at=None,
            args=call.args,
            kwargs=call.kwargs,
            backend=self.alias,
            errors=[],
            worker_ids=[],
        )
        if self.shares_django_database:  # told once it commits; never when it rolls back
            transaction.on_commit(
                lambda: task_enqueued.send(type(self), task_result=result), using=DJANGO_DATABASE
            )
        else:
            task_enqueued.send(type(self), task_result=result)
        return result

    def _kind(self, task: Task) -> Kind[TaskCall]:
        """The handle that enqueues ``task``, registered on first use."""
        if self.shares_django_database and self.database not in _OPENED:
            databases.check_tables_inside_transaction(DJANGO_DATABASE)
        opened = _opened(self.database)
        with opened.lock:
            kind = opened.kinds.get(task.module_path)
            if kind is None:
                kind = register_task(opened.client.kinds, task, self)
                opened.kinds[task.module_path] = kind
            return kind

    # -- results -----------------------------------------------------------------

    def get_result(self, result_id: str) -> TaskResult:
        detail = self.client().detail(result_id) if could_exist(str(result_id)) else None
        if detail is None:
            raise TaskResultDoesNotExist(result_id)
        task = _task_named(detail.job.kind)
        if task is None:
            raise TaskResultDoesNotExist(f"{result_id} is a job of {detail.job.kind}, not a task")
        return task_result(task, detail, self.alias)

    def worker_ids(self, ctx: JobContext) -> list[str]:
        """The runners that ran ``ctx``'s job, this one last (read only after a first attempt)."""
        if ctx.attempt <= 1:
            return [ctx.runner_id]
        detail = self.client().detail(ctx.job_id)
        earlier = (
            [] if detail is None else [a.runner_id for a in detail.attempts[:-1] if a.runner_id]
        )
        return [*earlier, ctx.runner_id]


@attrs.define
class _Opened:
    client: Client
    store: Store
    lock: threading.Lock = attrs.Factory(threading.Lock)
    kinds: dict[str, Kind[TaskCall]] = attrs.Factory(dict)


_OPENED: dict[str, _Opened] = {}
_OPENING = threading.Lock()


def _opened(database: str) -> _Opened:
    with _OPENING:
        opened = _OPENED.get(database)
        if opened is None:
            clock = SystemClock()
            store = open_store(database, synchronous="full", now=clock.now())
            opened = _OPENED[database] = _Opened(client=Client(store, clock), store=store)
        return opened


def _close(database: str) -> None:
    with _OPENING:
        opened = _OPENED.pop(database, None)
    if opened is not None:
        opened.store.close()


def _task_named(kind: str) -> Task | None:
    """The task a job's kind names: a task of an installed app (or of a module already
    imported), never a module imported only because a row names it."""
    module_name, _, attribute = kind.rpartition(".")
    module = sys.modules.get(module_name)
    if module is None and module_name and _in_installed_app(module_name):
        try:
            module = importlib.import_module(module_name)
        except Exception:
            return None
    found = getattr(module, attribute, None) if module is not None else None
    return found if isinstance(found, Task) else None


def _in_installed_app(module_name: str) -> bool:
    return any(
        module_name == app.name or module_name.startswith(f"{app.name}.")
        for app in apps.get_app_configs()
    )


def _call(task: Task, args: Any, kwargs: Any) -> TaskCall:
    """The call's arguments as its payload; TypeError naming the task when JSON cannot hold
    them (the type, never the value)."""
    try:
        normalized = normalize_json({"args": list(args), "kwargs": dict(kwargs)})
        json.dumps(normalized, allow_nan=False)
    except TypeError as error:  # names the type, never the value
        raise TypeError(
            f"task {task.module_path}: its arguments must be JSON (strings, numbers, booleans, "
            f"None, lists and dicts): {error}"
        ) from None
    except ValueError:
        raise TypeError(
            f"task {task.module_path}: its arguments must be JSON: a float is NaN or infinite"
        ) from None
    return TaskCall(args=normalized["args"], kwargs=normalized["kwargs"])
