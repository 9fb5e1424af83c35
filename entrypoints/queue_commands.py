"""``jobtable queues``, ``pause``, ``resume``, ``queue-limit``, ``schedules`` and ``runners``:
operating a running system.

What they change is persisted in the database, so every process sees a
pause at its next claim; what they list is what the HTTP API lists.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from jobtable.core.enqueue_options import InvalidOptionError
from jobtable.core.limits import MAX_QUEUE_LIMIT, QueueLimit, check_queue_limit
from jobtable.entrypoints import listing, views
from jobtable.entrypoints.commands import one_off, one_off_runner, open_for
from jobtable.entrypoints.config import ConfigError


def _count(status: str) -> listing.Column:
    return status.upper(), lambda item: item["counts"].get(status, 0)


def _rate_text(item: dict[str, Any]) -> str:
    rate = item["rate"]
    return "-" if rate is None else f"{rate['n']}/{rate['per']:g}s"


QUEUE_COLUMNS: list[listing.Column] = [
    ("QUEUE", lambda item: item["name"]),
    ("PAUSED", lambda item: item["paused"]),
    *(_count(status) for status in ("queued", "running", "succeeded", "failed")),
    ("LIMIT", lambda item: "-" if item["limit"] is None else item["limit"]),
    ("RATE", _rate_text),
    ("HELD BACK", lambda item: item["held_back"]),
]

SCHEDULE_COLUMNS: list[listing.Column] = [
    ("SCHEDULE", lambda item: item["name"]),
    ("KIND", lambda item: item["kind"]),
    ("EXPRESSION", lambda item: item["expression"]),
    ("TIMEZONE", lambda item: item["timezone"]),
    ("QUEUE", lambda item: item["queue"] + (" (paused)" if item["queue_paused"] else "")),
    ("NEXT RUN", lambda item: item["next_run"]),
    ("LAST TICK", lambda item: item["last_tick"]),
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


def run_schedules(args: argparse.Namespace) -> int:
    with one_off(args) as runner:
        schedules = runner.schedules()
    listing.write([views.schedule(stored) for stored in schedules], SCHEDULE_COLUMNS)
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


def run_queue_limit(args: argparse.Namespace) -> int:
    """Set (or with ``none``, remove) a queue's running limit and rate for every process; a
    flag left out keeps its value. Prints the queue as it is now."""
    if args.running is None and args.rate is None:
        raise ConfigError(
            "queue-limit: give --running N, --rate N/SECONDS, or both ('none' removes)"
        )
    store = open_for(args, must_exist=True)
    try:
        runner = one_off_runner(args, store)
        current = views.queue_named(runner.queues(held_back=[]), args.queue, paused=False).limit
        running = current.running if args.running is None else _running(args.running)
        rate_n, rate_per = _rate(args.rate, current)
        try:
            runner.set_queue_limit(args.queue, check_queue_limit(running, rate_n, rate_per))
        except InvalidOptionError as error:
            flag = {"limit": "--running", "rate": "--rate"}.get(error.field, "QUEUE")
            raise ConfigError(f"{flag} {_given(args, flag)}: {error.problem}") from None
        state = views.queue_named(runner.queues(), args.queue, paused=False)
    finally:
        store.close()
    print(json.dumps(views.queue(state)))
    return 0


def _given(args: argparse.Namespace, flag: str) -> str:
    value = {"--running": args.running, "--rate": args.rate}.get(flag, args.queue)
    return repr(value)


def _running(text: str) -> int | None:
    if text.strip().lower() == "none":
        return None
    try:
        return int(text)
    except ValueError:
        raise ConfigError(
            f"--running {text!r}: must be a whole number from 1 to {MAX_QUEUE_LIMIT}, or none"
        ) from None


def _rate(text: str | None, current: QueueLimit) -> tuple[object, object]:
    """``N/SECONDS`` as (n, per); ``none`` as no rate; None keeps ``current``'s."""
    if text is None:
        rate = current.rate
        return (None, None) if rate is None else (rate.n, rate.per)
    if text.strip().lower() == "none":
        return None, None
    n, slash, per = text.partition("/")
    try:
        if not slash:
            raise ValueError
        return int(n), float(per)
    except ValueError:
        raise ConfigError(
            f"--rate {text!r}: must be N/SECONDS (e.g. 10/60: at most 10 starts a minute), or none"
        ) from None


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
