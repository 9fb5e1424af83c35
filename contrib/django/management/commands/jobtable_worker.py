"""``python manage.py jobtable_worker``: ``jobtable worker`` for this project's tasks.

It takes the worker's usual options (``--workers``, ``--async-workers``,
``--queues``, ``--processes``, ``--grace``, ...) and their ``JOBTABLE_``
variables; ``--database`` defaults to the backend's. ``--tasks MODULE`` names a
module of tasks besides each installed app's ``tasks``; ``--backend ALIAS`` the
``TASKS`` entry to serve (default ``default``).
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.tasks import task_backends

from jobtable.contrib.django.backend import JobtableBackend
from jobtable.contrib.django.worker_kinds import BACKEND, TASK_MODULES
from jobtable.entrypoints import cli

WORKER_OPTIONS = [name for name in cli.WORKER_SETTINGS if name not in ("database", "kinds")]


class Command(BaseCommand):
    help = "Run jobtable workers for this project's tasks (django.tasks)."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--backend", default="default", help="the TASKS entry to serve (default: default)"
        )
        parser.add_argument(
            "--tasks",
            action="append",
            default=[],
            metavar="MODULE",
            help="a module of tasks to register besides each installed app's tasks module",
        )
        parser.add_argument(
            "--database",
            default=os.environ.get("JOBTABLE_DATABASE"),
            help="SQLite file path, or a postgresql:// URL (env JOBTABLE_DATABASE; default: "
            "the backend's database)",
        )
        parser.add_argument(
            "--kinds",
            default=os.environ.get("JOBTABLE_KINDS"),
            help="comma-separated modules of jobtable kinds to run besides the tasks",
        )
        cli.add_settings(parser, *WORKER_OPTIONS)

    def handle(self, *args: Any, **options: Any) -> None:
        alias = options["backend"]
        try:
            backend = task_backends[alias]
        except Exception as error:
            raise CommandError(f"--backend {alias}: {error}") from None
        if not isinstance(backend, JobtableBackend):
            raise CommandError(
                f"--backend {alias}: TASKS[{alias!r}] is {type(backend).__name__}, not "
                "jobtable.contrib.django.JobtableBackend"
            )
        os.environ[BACKEND] = alias
        os.environ[TASK_MODULES] = ",".join(options["tasks"])
        # In the environment, not on the command line: the children of --processes inherit
        # it, and a password in it never shows in ps.
        os.environ["JOBTABLE_DATABASE"] = options["database"] or backend.database
        argv = ["worker"]
        kinds = ["jobtable.contrib.django.worker_kinds", *filter(None, [options["kinds"]])]
        argv += ["--kinds", ",".join(kinds)]
        for name in WORKER_OPTIONS:
            value = options.get(name)
            flag = cli.SETTINGS[name].flag
            if name in cli.SWITCHES:  # True when given; a JOBTABLE_ variable reaches it anyway
                argv += [flag] if value is True else []
            elif value is not None:
                argv += [flag, str(value)]
        code = cli.main(argv)
        if code:
            raise SystemExit(code)
