"""Build the pieces a command needs from its configuration: store, kinds, token."""

from __future__ import annotations

import datetime
import importlib
import logging
import os
import secrets
import stat
import sys
import traceback
import urllib.parse
from collections.abc import Callable
from typing import Protocol

from jobtable.adapters.sqlite import SqliteStore
from jobtable.adapters.sqlite.connections import BUSY_TIMEOUT_MS
from jobtable.core import JobStore, KindRegistry, RegistrationError, RunnerStateError
from jobtable.core.changes import JobChanges
from jobtable.entrypoints.config import ConfigError

TOKEN_ENV = "JOBTABLE_API_TOKEN"  # noqa: S105 - the variable name, not a token


class Watcher(Protocol):
    def stop(self) -> None: ...


class Store(JobStore, Protocol):
    """A JobStore the commands can also migrate and watch for other processes' jobs."""

    applied_at_open: list[str]

    def watch(self, on_change: Callable[[], None]) -> Watcher: ...

    def watch_jobs(self, on_change: Callable[[str | None], None]) -> Watcher: ...


def follow_changes(store: Store, changes: JobChanges) -> Watcher:
    """Tell ``changes`` of jobs other processes change: a job's readers (long-polls, event
    streams) hear of it whichever process runs it. This process's own writes tell it
    directly (core/announcer.py)."""

    def heard(job_id: str | None) -> None:
        if job_id is None:
            changes.changed_somewhere()
        else:
            changes.changed(job_id)

    return store.watch_jobs(heard)


def is_postgres_url(database: str) -> bool:
    return database.startswith(("postgresql://", "postgres://"))


def redact(database: str) -> str:
    """The database as it may be shown: a URL's password replaced by ``***``."""
    if not is_postgres_url(database):
        return database
    parts = urllib.parse.urlsplit(database)
    if parts.password is None:
        return database
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def open_store(
    database: str,
    *,
    synchronous: str,
    now: datetime.datetime,
    busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    pooler: str = "none",
    listen_url: str | None = None,
) -> Store:
    """Open the database and bring its schema up to date. Raises StoreError or ConfigError."""
    if listen_url and not is_postgres_url(listen_url):
        raise ConfigError("--postgres-listen-url must be a postgresql:// URL to the same database")
    if is_postgres_url(database):
        try:
            from jobtable.adapters.postgres import PostgresStore
        except ImportError:
            raise ConfigError(
                "PostgreSQL needs psycopg: pip install 'jobtable[postgres]'"
            ) from None
        return PostgresStore.open(
            database, now=now, pooler=pooler == "transaction", listen_url=listen_url
        )
    if pooler != "none" or listen_url:
        raise ConfigError(
            "--postgres-pooler and --postgres-listen-url apply to PostgreSQL only; "
            "unset them for a SQLite --database"
        )
    if os.path.isdir(database):
        raise ConfigError(f"--database {database!r} is a directory; give a file path")
    return SqliteStore.open(
        database, now=now, synchronous=synchronous, busy_timeout_ms=busy_timeout_ms
    )


def load_kinds(kinds: KindRegistry, modules: tuple[str, ...], *, setting: str = "--kinds") -> None:
    """Import each module and call its ``register(kinds)``; a ConfigError, starting with
    ``setting`` (the flag or argument that named them), for one that will not.

    Modules are found in the current directory first, as ``python -m`` finds
    them: a console script's path holds only its own folder.
    """
    here = os.getcwd()
    if modules and here not in sys.path and "" not in sys.path:
        sys.path.insert(0, here)
    for name in modules:
        try:
            module = importlib.import_module(name)
        except Exception as error:
            raise ConfigError(
                f"{setting}: cannot import {name!r}: {_why_not(name, error)}"
            ) from None
        register = getattr(module, "register", None)
        if not callable(register):
            raise ConfigError(f"{setting}: module {name!r} has no register(kinds) function")
        try:
            register(kinds)
        except (RegistrationError, RunnerStateError) as error:
            raise ConfigError(f"{setting}: {name}.register refused a kind: {error}") from None
        except Exception as error:
            frame = traceback.extract_tb(error.__traceback__)[-1]
            raise ConfigError(
                f"{setting}: {name}.register raised {type(error).__name__} "
                f"at {os.path.basename(frame.filename)}:{frame.lineno}"
            ) from None


def _why_not(name: str, error: Exception) -> str:
    """Why a --kinds module did not import, naming the missing module; never the error's text."""
    if isinstance(error, ModuleNotFoundError) and error.name:
        if name == error.name or name.startswith(error.name + "."):
            return (
                f"no module {error.name!r} in the current directory or on PYTHONPATH; "
                "check the name, and run jobtable from your project's folder"
            )
        return f"it imports {error.name!r}, which is not installed; install it"
    frame = traceback.extract_tb(error.__traceback__)[-1]
    return (
        f"importing it raised {type(error).__name__} "
        f"at {os.path.basename(frame.filename)}:{frame.lineno}"
    )


def token_path(database: str) -> str:
    """Beside a SQLite file; for PostgreSQL, ``jobtable.token`` in the working directory."""
    return "jobtable.token" if is_postgres_url(database) else database + ".token"


def resolve_api_token(database: str, logger: logging.Logger) -> str:
    """The API token: ``JOBTABLE_API_TOKEN``, else a 0600 file beside the database.

    The file is made with a random token on first use and reused after, so a
    restart keeps clients working. Only its path is ever logged.
    """
    from_env = os.environ.get(TOKEN_ENV)
    if from_env is not None:
        if not from_env.strip():
            raise ConfigError(f"{TOKEN_ENV} is set but empty; set a token or unset it")
        return from_env.strip()
    path = token_path(database)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return _read_token_file(path, logger)
    except OSError as error:
        raise ConfigError(
            f"cannot create the API token file {path}: {error.strerror}; "
            f"make its directory writable or set {TOKEN_ENV}"
        ) from None
    with os.fdopen(descriptor, "w") as handle:
        handle.write(secrets.token_urlsafe(32) + "\n")
    logger.info("created the API token file %s (mode 0600)", os.path.abspath(path))
    return _read_token_file(path, logger)


def _read_token_file(path: str, logger: logging.Logger) -> str:
    mode = os.stat(path).st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(f"the API token file {path} is open to other users; run chmod 600 {path}")
    with open(path, encoding="utf-8") as handle:
        token = handle.read().strip()
    if not token:
        raise ConfigError(f"the API token file {path} is empty; delete it to make a new one")
    logger.info("API token is in %s", os.path.abspath(path))
    return token
