"""``jobtable queues``, ``pause``, ``resume`` and ``runners``: operating a running system.

What they change is persisted in the database, so every process sees a
pause at its next claim; what they list is what the HTTP API lists.
"""

from __future__ import annotations

import argparse
import json

from jobtable.core.enqueue_options import InvalidOptionError
from jobtable.entrypoints import listing, views
from jobtable.entrypoints.commands import one_off, one_off_runner, open_for
from jobtable.entrypoints.config import ConfigError


def _count(status: str) -> listing.Column:
    return status.upper(), lambda item: item["counts"].get(status, 0)


QUEUE_COLUMNS: list[listing.Column] = [
    ("QUEUE", lambda item: item["name"]),
    ("PAUSED", lambda item: item["paused"]),
    *(_count(status) for status in ("queued", "running", "succeeded", "failed")),
]

RUNNER_COLUMNS: list[listing.Column] = [
    ("RUNNER", lambda item: item["id"]),
    ("HOST", lambda item: item["host"]),
    ("PID", lambda item: item["pid"]),
    ("STARTED", lambda item: item["started_at"]),
    ("KINDS", lambda item: item["kinds"]),
    ("QUEUES", lambda item: "all" if item["queues"] is None else item["queues"]),
    ("WORKERS", lambda item: item["workers"]),
    ("BUSY", lambda item: item["busy"]),
    ("LAST SEEN", lambda item: item["last_seen"]),
]


def run_queues(args: argparse.Namespace) -> int:
    with one_off(args) as runner:
        states = runner.queues()
    listing.write([views.queue(state) for state in states], QUEUE_COLUMNS)
    return 0


def run_runners(args: argparse.Namespace) -> int:
    with one_off(args) as runner:
        records = runner.runners()
    listing.write([views.runner(record) for record in records], RUNNER_COLUMNS)
    return 0


def run_pause(args: argparse.Namespace) -> int:
    return _set_paused(args, paused=True)


def run_resume(args: argparse.Namespace) -> int:
    return _set_paused(args, paused=False)


def _set_paused(args: argparse.Namespace, *, paused: bool) -> int:
    """Pause or resume the queue for every process, and print it as it is now."""
    store = open_for(args, must_exist=True)
    try:
        runner = one_off_runner(args, store)
        try:
            if paused:
                runner.pause_queue(args.queue)
            else:
                runner.resume_queue(args.queue)
        except InvalidOptionError as error:
            raise ConfigError(f"QUEUE {args.queue!r}: {error.problem}") from None
        state = views.queue_named(runner.queues(), args.queue, paused=paused)
    finally:
        store.close()
    print(json.dumps(views.queue(state)))
    return 0
