"""Configuration: every flag is also an environment variable, and every value is checked once.

A bad value becomes a ConfigError whose message names the setting, what was
wrong and how to fix it, ready to print as one line.
"""

from __future__ import annotations

import datetime
import os
import re
from collections.abc import Iterable

import attrs

from jobtable.core.enqueue_options import QUEUE_NAME
from jobtable.core.jobs import Retention
from jobtable.entrypoints.times import TimeFormatError, parse_duration

DEFAULT_DATABASE = "jobtable.db"
DEFAULT_LISTEN = "127.0.0.1:8080"
DEFAULT_WORKERS = 2
DEFAULT_GRACE = 10.0
DEFAULT_HTTP_THREADS = 4
DEFAULT_HTTP_STREAM_SLOTS = 100
DEFAULT_SQLITE_BUSY_TIMEOUT = 5.0


class ConfigError(ValueError):
    """A setting the user must fix; the message is one line."""


@attrs.frozen(kw_only=True)
class Setting:
    flag: str
    env: str
    default: str | None
    help: str

    def describe(self) -> str:
        shown = "unset" if self.default is None else self.default
        return f"{self.help} (env {self.env}; default {shown})"


SETTINGS = {
    "database": Setting(
        flag="--database",
        env="JOBTABLE_DATABASE",
        default=DEFAULT_DATABASE,
        help="SQLite file path, or a postgresql:// URL",
    ),
    "listen": Setting(
        flag="--listen",
        env="JOBTABLE_LISTEN",
        default=DEFAULT_LISTEN,
        help="HOST:PORT the HTTP API listens on (port 0 picks a free one)",
    ),
    "workers": Setting(
        flag="--workers",
        env="JOBTABLE_WORKERS",
        default=str(DEFAULT_WORKERS),
        help="jobs run at once in this process",
    ),
    "async_workers": Setting(
        flag="--async-workers",
        env="JOBTABLE_ASYNC_WORKERS",
        default="100",
        help="async def handlers run at once in this process, on its event loop (--workers "
        "bounds the threads running the others)",
    ),
    "kinds": Setting(
        flag="--kinds",
        env="JOBTABLE_KINDS",
        default=None,
        help="comma-separated modules, each with register(kinds)",
    ),
    "grace": Setting(
        flag="--grace",
        env="JOBTABLE_GRACE",
        default=str(DEFAULT_GRACE),
        help="seconds to wait for requests and jobs to finish on SIGTERM/SIGINT",
    ),
    "sqlite_synchronous": Setting(
        flag="--sqlite-synchronous",
        env="JOBTABLE_SQLITE_SYNCHRONOUS",
        default="full",
        help="SQLite durability: full survives power loss, normal only a crash",
    ),
    "sqlite_busy_timeout": Setting(
        flag="--sqlite-busy-timeout",
        env="JOBTABLE_SQLITE_BUSY_TIMEOUT",
        default=str(DEFAULT_SQLITE_BUSY_TIMEOUT),
        help="seconds a write waits while another process holds SQLite's write lock; "
        "past it, POST answers 503 and workers retry",
    ),
    "postgres_pooler": Setting(
        flag="--postgres-pooler",
        env="JOBTABLE_POSTGRES_POOLER",
        default="none",
        help="none, or transaction when --database goes through PgBouncer in transaction mode "
        "(no prepared statements; wakes need --postgres-listen-url or fall back to a look "
        "every second)",
    ),
    "postgres_listen_url": Setting(
        flag="--postgres-listen-url",
        env="JOBTABLE_POSTGRES_LISTEN_URL",
        default=None,
        help="a direct postgresql:// URL to the same database, for LISTEN behind a "
        "transaction pooler",
    ),
    "http_threads": Setting(
        flag="--http-threads",
        env="JOBTABLE_HTTP_THREADS",
        default=str(DEFAULT_HTTP_THREADS),
        help="threads serving HTTP requests",
    ),
    "http_stream_slots": Setting(
        flag="--http-stream-slots",
        env="JOBTABLE_HTTP_STREAM_SLOTS",
        default=str(DEFAULT_HTTP_STREAM_SLOTS),
        help="event streams and long-polls open at once, each on a thread beside "
        "--http-threads; past it they answer 503 with Retry-After",
    ),
    "log_level": Setting(
        flag="--log-level",
        env="JOBTABLE_LOG_LEVEL",
        default="info",
        help="debug, info, warning or error",
    ),
    "log_format": Setting(
        flag="--log-format",
        env="JOBTABLE_LOG_FORMAT",
        default="text",
        help="text, or json: one JSON object a line (time, level, logger, message, and "
        "job_id, kind and code on a job's lines)",
    ),
    "metrics_public": Setting(
        flag="--metrics-public",
        env="JOBTABLE_METRICS_PUBLIC",
        default="false",
        help="serve GET /metrics without the bearer token (Prometheus scrapes with one by default)",
    ),
    "hide_payloads": Setting(
        flag="--hide-payloads",
        env="JOBTABLE_HIDE_PAYLOADS",
        default="false",
        help="never show a job's payload in the detail or the dashboard (a kind's redact= "
        "fields are hidden either way)",
    ),
    "metrics_listen": Setting(
        flag="--metrics-listen",
        env="JOBTABLE_METRICS_LISTEN",
        default=None,
        help="HOST:PORT to serve GET /metrics on (port 0 picks a free one); unset: no listener",
    ),
    "queues": Setting(
        flag="--queues",
        env="JOBTABLE_QUEUES",
        default=None,
        help="the queues to claim from: plain names share --workers, name=N gives a queue its "
        "own N workers (e.g. mail,reports=1); unset: every queue",
    ),
    "at": Setting(
        flag="--at",
        env="JOBTABLE_AT",
        default=None,
        help="run it at this RFC 3339 time, with an offset (e.g. 2030-01-02T03:04:05Z)",
    ),
    "in": Setting(
        flag="--in",
        env="JOBTABLE_IN",
        default=None,
        help="run it after this long: 30s, 5m, 2h, 1d or plain seconds",
    ),
    "queue": Setting(
        flag="--queue",
        env="JOBTABLE_QUEUE",
        default=None,
        help="the queue it waits in (unset: the kind's)",
    ),
    "priority": Setting(
        flag="--priority",
        env="JOBTABLE_PRIORITY",
        default=None,
        help="0 (first) to 9 (last) (unset: the kind's)",
    ),
    "unique_key": Setting(
        flag="--unique-key",
        env="JOBTABLE_UNIQUE_KEY",
        default=None,
        help="while a job of the kind holding this key is queued or running, print its id "
        "instead of enqueueing another",
    ),
    "timeout": Setting(
        flag="--timeout",
        env="JOBTABLE_TIMEOUT",
        default=None,
        help="how long an attempt may run before its handler is told to stop, as --in "
        "(unset: the kind's)",
    ),
    "processes": Setting(
        flag="--processes",
        env="JOBTABLE_PROCESSES",
        default="1",
        help="run this many worker processes under one supervisor (each with --workers "
        "workers): every core runs jobs",
    ),
    "follow": Setting(
        flag="--follow",
        env="JOBTABLE_FOLLOW",
        default="false",
        help="print each change of the job as it happens, until it ends (exit 1 if it failed)",
    ),
    "keep_succeeded": Setting(
        flag="--keep-succeeded",
        env="JOBTABLE_KEEP_SUCCEEDED",
        default="7d",
        help="how long succeeded jobs are kept before they are deleted: 30m, 12h, 7d, plain "
        "seconds, or forever",
    ),
    "keep_failed": Setting(
        flag="--keep-failed",
        env="JOBTABLE_KEEP_FAILED",
        default="30d",
        help="how long failed jobs are kept before they are deleted, as --keep-succeeded",
    ),
    "status": Setting(
        flag="--status",
        env="JOBTABLE_LIST_STATUS",
        default=None,
        help="only jobs with this status: queued, running, succeeded or failed",
    ),
    "state": Setting(
        flag="--state",
        env="JOBTABLE_LIST_STATE",
        default=None,
        help="only jobs in this state: scheduled, available, retrying, running, succeeded, "
        "failed, cancelled or timed_out",
    ),
    "kind": Setting(
        flag="--kind",
        env="JOBTABLE_LIST_KIND",
        default=None,
        help="only jobs of this kind",
    ),
    "limit": Setting(
        flag="--limit",
        env="JOBTABLE_LIST_LIMIT",
        default="50",
        help="at most this many jobs (1 to 500)",
    ),
    "list_queue": Setting(
        flag="--queue",
        env="JOBTABLE_LIST_QUEUE",
        default=None,
        help="only jobs in this queue",
    ),
    "after": Setting(
        flag="--after",
        env="JOBTABLE_LIST_AFTER",
        default=None,
        help="only jobs older than this id (the next page: the last id shown)",
    ),
    "detail": Setting(
        flag="--detail",
        env="JOBTABLE_DETAIL",
        default="false",
        help="print the job's queue, schedule, attempts and why it waits",
    ),
}


def env_default(name: str) -> str | None:
    setting = SETTINGS[name]
    return os.environ.get(setting.env, setting.default)


def parse_listen(value: str, name: str = "listen") -> tuple[str, int]:
    match = re.fullmatch(r"\[?([^\[\]]*?)\]?:(\d{1,5})", value.strip())
    if not match or not match.group(1) or int(match.group(2)) > 65535:
        setting = SETTINGS[name]
        raise ConfigError(
            f"{setting.flag} {value!r} is not HOST:PORT; use for example 127.0.0.1:8080 "
            f"(or set {setting.env})"
        )
    return match.group(1), int(match.group(2))


def parse_positive_int(name: str, value: str, *, minimum: int = 1) -> int:
    setting = SETTINGS[name]
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = minimum - 1
    if number < minimum:
        raise ConfigError(
            f"{setting.flag} {value!r} must be a whole number of at least {minimum} "
            f"(or set {setting.env})"
        )
    return number


def parse_seconds(name: str, value: str) -> float:
    setting = SETTINGS[name]
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise ConfigError(
            f"{setting.flag} {value!r} must be a number of seconds, 0 or more "
            f"(or set {setting.env})"
        )
    return seconds


def parse_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    setting = SETTINGS[name]
    lowered = value.strip().lower()
    if lowered not in choices:
        raise ConfigError(
            f"{setting.flag} {value!r} must be one of {', '.join(choices)} (or set {setting.env})"
        )
    return lowered


def parse_keep(name: str, value: str) -> datetime.timedelta | None:
    """How long finished jobs are kept: a duration, or None for ``forever``."""
    if isinstance(value, str) and value.strip().lower() == "forever":
        return None
    setting = SETTINGS[name]
    try:
        seconds = parse_duration(value)
    except TimeFormatError:
        seconds = -1.0
    if not 0 < seconds < 1e12:
        raise ConfigError(
            f"{setting.flag} {value!r} must be a duration above zero such as 12h or 7d, "
            f"or forever (or set {setting.env})"
        )
    return datetime.timedelta(seconds=seconds)


def parse_retention(succeeded: str, failed: str) -> Retention:
    """``--keep-succeeded`` and ``--keep-failed`` as the runner's retention."""
    return Retention(
        succeeded=parse_keep("keep_succeeded", succeeded),
        failed=parse_keep("keep_failed", failed),
    )


def parse_flag(name: str, value: str | bool) -> bool:
    """A switch given as a flag, or as its variable set to true/false, 1/0, yes/no."""
    if isinstance(value, bool):
        return value
    lowered = value.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("", "0", "false", "no", "off"):
        return False
    setting = SETTINGS[name]
    raise ConfigError(f"{setting.env} {value!r} must be true or false (or 1 or 0)")


@attrs.frozen(kw_only=True)
class QueueServing:
    """What ``--queues`` asks of a process: queues that share the pool, and queues with their own."""

    shared: frozenset[str] | None = None
    """Plain names, served by the --workers pool; None: every queue (``--queues`` unset);
    empty: no shared pool (every name has workers of its own)."""
    dedicated: tuple[tuple[str, int], ...] = ()
    """``name=N``: each served by N workers of its own."""


def parse_queues(value: str | None) -> QueueServing:
    """``mail,reports=1``: plain names share --workers; ``name=N`` gets N workers of its own."""
    if value is None or not value.strip():
        return QueueServing()
    flag = SETTINGS["queues"].flag
    shared: list[str] = []
    dedicated: list[tuple[str, int]] = []
    for part in (piece.strip() for piece in value.split(",")):
        name, equals, count = part.partition("=")
        name = name.strip()
        if not QUEUE_NAME.fullmatch(name):
            raise ConfigError(
                f"{flag}: {part!r} is not a queue name; use 1-64 letters, digits, '_', '.' or '-', "
                "starting with a letter or digit, optionally =N (e.g. mail,reports=2)"
            )
        if name in shared or name in dict(dedicated):
            raise ConfigError(f"{flag}: queue {name!r} is named twice; name each queue once")
        if not equals:
            shared.append(name)
            continue
        if not re.fullmatch(r"\s*[1-9][0-9]{0,3}\s*", count):
            raise ConfigError(
                f"{flag}: {part!r} needs a whole number of workers from 1 to 9999 after '=' "
                f"(e.g. {name}=2)"
            )
        dedicated.append((name, int(count)))
    return QueueServing(shared=frozenset(shared), dedicated=tuple(dedicated))


def parse_modules(value: str | None) -> tuple[str, ...]:
    if not value:
        return ()
    return module_names(part.strip() for part in value.split(",") if part.strip())


def module_names(names: Iterable[object], *, setting: str = "--kinds") -> tuple[str, ...]:
    """Each a dotted module name, as given; a ConfigError naming ``setting`` otherwise."""
    modules: list[str] = []
    for module in names:
        if not isinstance(module, str) or not re.fullmatch(_MODULE_NAME, module):
            raise ConfigError(
                f"{setting}: {module!r} is not a module name; give dotted names like myapp.jobs"
            )
        modules.append(module)
    return tuple(modules)


_MODULE_NAME = r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*"
