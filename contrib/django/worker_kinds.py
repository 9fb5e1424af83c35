"""The ``--kinds`` module ``manage.py jobtable_worker`` gives ``jobtable worker``: it sets
Django up (in a child of ``--processes`` too) and registers every task of the backend it
serves, found in each installed app's ``tasks`` module and the modules ``--tasks`` names.

The command passes its choices on in the environment, so the children of
``--processes N`` find them as their parent did.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from types import ModuleType
from typing import Any

BACKEND = "JOBTABLE_DJANGO_BACKEND"
TASK_MODULES = "JOBTABLE_DJANGO_TASKS"


def register(kinds: Any) -> None:
    import django
    from django.apps import apps

    if not apps.ready:
        django.setup()
    from django.tasks import Task, task_backends

    from jobtable.contrib.django.task_kinds import register_task

    alias = os.environ.get(BACKEND, "default")
    backend = task_backends[alias]
    seen: set[str] = set()
    for module in task_modules():
        for value in vars(module).values():
            if isinstance(value, Task) and value.backend == alias and value.module_path not in seen:
                seen.add(value.module_path)
                register_task(kinds, value, backend)


def task_modules() -> Iterator[ModuleType]:
    """Each installed app's ``tasks`` module (when it has one), then each named one."""
    from django.apps import apps

    for app in apps.get_app_configs():
        name = f"{app.name}.tasks"
        try:
            yield importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name != name:
                raise  # the tasks module is there, and imports something missing
    for name in filter(None, os.environ.get(TASK_MODULES, "").split(",")):
        yield importlib.import_module(name.strip())
