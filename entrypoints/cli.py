"""The ``jobtable`` command line: parse, run one command, turn every failure into one line.

Every failure the user can fix ends as one line on stderr naming the problem
and the fix, and a non-zero exit (2 for a setting or input to fix, 1 for a
database or job failure); never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from jobtable.core import StoreError
from jobtable.core.bulk import BulkAction
from jobtable.entrypoints import (
    commands,
    config,
    job_commands,
    operator_commands,
    queue_commands,
)
from jobtable.entrypoints.config import SETTINGS, ConfigError, env_default
from jobtable.entrypoints.http.app import package_version
from jobtable.entrypoints.logs import JsonLogFormatter, TextLogFormatter
from jobtable.entrypoints.malloc_arenas import limit_malloc_arenas
from jobtable.entrypoints.wiring import is_postgres_url, redact

EXIT_FAILURE = 1
EXIT_USAGE = 2

COMMON = ("database", "kinds", "log_level", "postgres_pooler", "postgres_listen_url")
ONE_OFF = ("database", "log_level", "postgres_pooler")
ENQUEUE_OPTIONS = ("at", "in", "queue", "priority", "unique_key", "timeout")
RETENTION = ("keep_succeeded", "keep_failed")
WORKER_SETTINGS = (
    *COMMON,
    "workers",
    "async_workers",
    "queues",
    "grace",
    "sqlite_synchronous",
    "sqlite_busy_timeout",
    "log_format",
    "metrics_listen",
    "processes",
    *RETENTION,
    "metrics_public",
)
"""What ``jobtable worker`` takes (and ``manage.py jobtable_worker``, which passes them on)."""
SWITCHES = frozenset({"metrics_public", "hide_payloads"})


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line that points at --help."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"jobtable: {message} (see {self.prog} --help)\n")


def _add(parser: argparse.ArgumentParser, *names: str) -> None:
    for name in names:
        setting = SETTINGS[name]
        parser.add_argument(
            setting.flag, dest=name, default=env_default(name), help=setting.describe()
        )


def _add_switch(parser: argparse.ArgumentParser, name: str) -> None:
    """A flag that takes no value; its variable says true or false (checked when run)."""
    setting = SETTINGS[name]
    parser.add_argument(
        setting.flag,
        dest=name,
        action="store_true",
        default=env_default(name),
        help=setting.describe(),
    )


def _add_bulk_filter(parser: argparse.ArgumentParser, action: str) -> None:
    """The filter of a bulk action (instead of an ID). No ``JOBTABLE_`` variable sets these:
    a variable left in an environment must never widen what a command changes."""
    group = parser.add_argument_group(f"{action} every job a filter matches (instead of an ID)")
    group.add_argument(
        "--state",
        dest="bulk_state",
        metavar="STATE",
        help=f"only jobs in this state; {action} "
        f"applies to {', '.join(s.value for s in BulkAction(action).states)}",
    )
    group.add_argument("--kind", dest="bulk_kind", metavar="KIND", help="only jobs of this kind")
    group.add_argument(
        "--queue", dest="bulk_queue", metavar="QUEUE", help="only jobs in this queue"
    )
    group.add_argument(
        "--created-after",
        dest="bulk_created_after",
        metavar="TIME",
        help="only jobs created at or after this RFC 3339 time",
    )
    group.add_argument(
        "--created-before",
        dest="bulk_created_before",
        metavar="TIME",
        help="only jobs created before this RFC 3339 time",
    )
    group.add_argument(
        "--dry-run",
        dest="bulk_dry_run",
        action="store_true",
        help="count the matching jobs; change none",
    )
    group.add_argument("--all", dest="bulk_all", action="store_true",
                       help=f"{action} every job it applies to (no other filter needed)")  # fmt: skip


def add_settings(parser: argparse.ArgumentParser, *names: str) -> None:
    """Add each setting's flag to ``parser``, defaulting to its ``JOBTABLE_`` variable."""
    for name in names:
        if name in SWITCHES:
            _add_switch(parser, name)
        else:
            _add(parser, name)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="jobtable",
        description="A durable background-job runner: the jobs table is the queue.",
    )
    parser.add_argument("--version", action="version", version=f"jobtable {package_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    sub.required = True

    serve = sub.add_parser("serve", help="run the HTTP API and workers in one process")
    _add(
        serve,
        *COMMON,
        "listen",
        "workers",
        "async_workers",
        "queues",
        "grace",
        "sqlite_synchronous",
        "sqlite_busy_timeout",
        "http_threads",
        "http_stream_slots",
        "processes",
        "log_format",
        *RETENTION,
    )
    _add_switch(serve, "metrics_public")
    _add_switch(serve, "hide_payloads")
    serve.set_defaults(run=commands.run_serve)

    worker = sub.add_parser("worker", help="run workers only")
    add_settings(worker, *WORKER_SETTINGS)
    worker.set_defaults(run=commands.run_worker)

    enqueue = sub.add_parser("enqueue", help="enqueue a job and print its id")
    enqueue.add_argument("kind", metavar="KIND", help="a registered kind, e.g. noop")
    enqueue.add_argument(
        "payload", metavar="PAYLOAD_JSON", nargs="?", default="{}", help="default {}"
    )
    enqueue.add_argument(
        "--wait",
        action="store_true",
        help="follow the job to its end: exit 0 if it succeeded, 1 if it failed",
    )
    _add(enqueue, *ENQUEUE_OPTIONS, *COMMON)
    enqueue.set_defaults(run=job_commands.run_enqueue)

    get = sub.add_parser("get", help="print a job as JSON")
    get.add_argument("id", metavar="ID", help="the id enqueue printed")
    detail = SETTINGS["detail"]
    get.add_argument(
        detail.flag, dest="detail", action="store_true", default=env_default("detail"),
        help=detail.describe(),
    )  # fmt: skip
    following = SETTINGS["follow"]
    get.add_argument(
        following.flag, dest="follow", action="store_true", default=env_default("follow"),
        help=following.describe(),
    )  # fmt: skip
    _add(get, *ONE_OFF)
    get.set_defaults(run=job_commands.run_get)

    listed = sub.add_parser("list", help="list jobs, newest first, with filters")
    _add(listed, "status", "state", "kind", "list_queue", "limit", "after", *ONE_OFF)
    listed.set_defaults(run=operator_commands.run_list)

    retry = sub.add_parser(
        "retry",
        help="queue a failed job again with one more attempt allowed; or every failed job a "
        "filter matches",
    )
    retry.add_argument("id", metavar="ID", nargs="?", help="the id of a failed job")
    _add_bulk_filter(retry, "retry")
    _add(retry, *ONE_OFF)
    retry.set_defaults(run=job_commands.run_retry)

    prune = sub.add_parser("prune", help="delete finished jobs past their retention, now")
    _add(prune, *RETENTION, *ONE_OFF)
    prune.set_defaults(run=operator_commands.run_prune)

    cancel = sub.add_parser(
        "cancel",
        help="cancel a job: at once if not running, else its handler is told to stop; or every "
        "job a filter matches",
    )
    cancel.add_argument("id", metavar="ID", nargs="?", help="the id enqueue printed")
    _add_bulk_filter(cancel, "cancel")
    _add(cancel, *ONE_OFF)
    cancel.set_defaults(run=job_commands.run_cancel)

    queues = sub.add_parser("queues", help="list the queues with their jobs by status")
    _add(queues, *ONE_OFF)
    queues.set_defaults(run=queue_commands.run_queues)

    for name, run, what in (
        ("pause", queue_commands.run_pause, "stop every process claiming from a queue"),
        ("resume", queue_commands.run_resume, "let processes claim from a queue again"),
    ):
        action = sub.add_parser(name, help=what)
        action.add_argument("queue", metavar="QUEUE", help="a queue name, e.g. mail")
        _add(action, *ONE_OFF)
        action.set_defaults(run=run)

    queue_limit = sub.add_parser(
        "queue-limit",
        help="limit a queue's running jobs and starts across every process",
        description="Set a queue's limits for every process at run time; a flag left out "
        "keeps its value, 'none' removes it.",
    )
    queue_limit.add_argument("queue", metavar="QUEUE", help="a queue name, e.g. mail")
    queue_limit.add_argument(
        "--running", metavar="N", help="at most N of its jobs running at once (none: no limit)"
    )
    queue_limit.add_argument(
        "--rate",
        metavar="N/SECONDS",
        help="at most N of its jobs started in any SECONDS, e.g. 10/60 (none: no rate)",
    )
    _add(queue_limit, *ONE_OFF)
    queue_limit.set_defaults(run=queue_commands.run_queue_limit)

    schedules = sub.add_parser(
        "schedules", help="list the periodic schedules, their next run and last tick"
    )
    _add(schedules, *ONE_OFF)
    schedules.set_defaults(run=queue_commands.run_schedules)

    runners = sub.add_parser("runners", help="list the live runners and what they serve")
    _add(runners, *ONE_OFF)
    runners.set_defaults(run=queue_commands.run_runners)

    migrate = sub.add_parser("migrate", help="bring the database's schema up to date")
    _add(migrate, *ONE_OFF)
    migrate.set_defaults(run=commands.run_migrate)
    return parser


def configure_logging(level_name: str, format_name: str = "text") -> None:
    level = config.parse_choice("log_level", level_name, ("debug", "info", "warning", "error"))
    log_format = config.parse_choice("log_format", format_name, ("text", "json"))
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLogFormatter() if log_format == "json" else TextLogFormatter())
    logging.basicConfig(level=level.upper(), handlers=[handler])


def main(argv: Sequence[str] | None = None) -> int:
    limit_malloc_arenas()  # before any thread starts: see malloc_arenas.py
    given = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(given)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        configure_logging(args.log_level, getattr(args, "log_format", "text"))
        if getattr(args, "processes", None) is not None:
            processes = config.parse_positive_int("processes", args.processes)
            if processes > 1:
                return commands.run_supervised(args, given, processes)
        return run(args)
    except ConfigError as error:
        print(f"jobtable: {error}", file=sys.stderr)
        return EXIT_USAGE
    except commands.CommandError as error:
        print(f"jobtable: {error}", file=sys.stderr)
        return error.exit_code
    except StoreError as error:
        where = redact(args.database)
        fix = (
            "check the URL, that the server is up and that the user may connect"
            if is_postgres_url(args.database)
            else "check that the path exists, is a jobtable database and is writable"
        )
        print(f"jobtable: {error.category} at {where}: {fix}", file=sys.stderr)
        return EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
