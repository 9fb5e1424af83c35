"""``JobtableBackend``: Django's tasks enqueued as jobtable jobs, their results read back.

Options (``TASKS[alias]["OPTIONS"]``): ``database``, a SQLite path or a
``postgresql://`` URL (default: Django's ``default`` database, shared: a task
enqueued inside ``transaction.atomic()`` commits or rolls back with it).
"""

from __future__ import annotations

import json
import threading
from typing import Any

from django.db import connections, transaction
from django.tasks import Task, TaskResult, TaskResultStatus
from django.tasks.backends.base import BaseTaskBackend
from django.tasks.exceptions import TaskResultDoesNotExist
from django.tasks.signals import task_enqueued
from django.utils import timezone
from django.utils.json import normalize_json
from django.utils.module_loading import import_string

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
        self._lock = threading.Lock()
        self._client: Client | None = None
        self._store: Store | None = None
        self._kinds: dict[str, Kind[TaskCall]] = {}

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
        """The jobtable client over the database, opened (and migrated) on first use."""
        with self._lock:
            if self._client is None:
                clock = SystemClock()
                self._store = open_store(self.database, synchronous="full", now=clock.now())
                self._client = Client(self._store, clock)
            return self._client

    def close(self) -> None:
        """Close the database's connections (the worker and tests; Django never asks)."""
        with self._lock:
            store, self._store, self._client = self._store, None, None
            self._kinds.clear()
        if store is not None:
            store.close()

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
        client = self.client()
        with self._lock:
            kind = self._kinds.get(task.module_path)
            if kind is None:
                kind = self._kinds[task.module_path] = register_task(client.kinds, task, self)
            return kind

    # -- results -----------------------------------------------------------------

    def get_result(self, result_id: str) -> TaskResult:
        detail = self.client().detail(result_id) if could_exist(str(result_id)) else None
        if detail is None:
            raise TaskResultDoesNotExist(result_id)
        try:
            task = import_string(detail.job.kind)
        except ImportError:
            task = None
        if not isinstance(task, Task):
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
