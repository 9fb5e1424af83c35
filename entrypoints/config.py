"""Configuration: every flag is also an environment variable, and every value is checked once.

A bad value becomes a ConfigError whose message names the setting, what was
wrong and how to fix it, ready to print as one line.
"""

from __future__ import annotations

import os
import re

import attrs

DEFAULT_DATABASE = "jobtable.db"
DEFAULT_LISTEN = "127.0.0.1:8080"
DEFAULT_WORKERS = 2
DEFAULT_GRACE = 10.0
DEFAULT_HTTP_THREADS = 4
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
    "log_level": Setting(
        flag="--log-level",
        env="JOBTABLE_LOG_LEVEL",
        default="info",
        help="debug, info, warning or error",
    ),
}


def env_default(name: str) -> str | None:
    setting = SETTINGS[name]
    return os.environ.get(setting.env, setting.default)


def parse_listen(value: str) -> tuple[str, int]:
    match = re.fullmatch(r"\[?([^\[\]]*?)\]?:(\d{1,5})", value.strip())
    if not match or not match.group(1) or int(match.group(2)) > 65535:
        raise ConfigError(
            f"--listen {value!r} is not HOST:PORT; use for example 127.0.0.1:8080 "
            "(or set JOBTABLE_LISTEN)"
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


def parse_modules(value: str | None) -> tuple[str, ...]:
    if not value:
        return ()
    modules = tuple(part.strip() for part in value.split(",") if part.strip())
    for module in modules:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", module):
            raise ConfigError(
                f"--kinds: {module!r} is not a module name; give dotted names like myapp.jobs"
            )
    return modules
