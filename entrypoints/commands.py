"""The long-running commands (``serve``, ``worker``) and ``migrate``, and what every command
shares: opening the store, a runner for one-off work, one-line errors.

The commands that act on jobs and queues are in ``job_commands`` and
``queue_commands``.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

from jobtable.adapters.system_clock import SystemClock
from jobtable.core import Runner
from jobtable.entrypoints import config
from jobtable.entrypoints.config import ConfigError
from jobtable.entrypoints.http.app import create_app, create_metrics_app, package_version
from jobtable.entrypoints.http.streams import StreamSlots
from jobtable.entrypoints.http_server import HttpServer
from jobtable.entrypoints.metrics import JobMetrics
from jobtable.entrypoints.runner_group import RunnerGroup, describe, plan_runners
from jobtable.entrypoints.stop_signals import StopSignals
from jobtable.entrypoints.supervisor import (
    LISTEN_FD_ENV,
    Supervisor,
    listening_socket,
    shared_metrics_directory,
    without_processes_flag,
)
from jobtable.entrypoints.wiring import (
    Store,
    Watcher,
    follow_changes,
    is_postgres_url,
    load_kinds,
    open_store,
    redact,
    resolve_api_token,
)

log = logging.getLogger("jobtable")

STOP_NOW_WAIT = 5.0
"""Seconds to wait for handlers once told to stop, after the grace period."""

METRICS_THREADS = 2
"""Threads serving ``worker --metrics-listen``: a scrape or two at a time."""

METRICS_STOP_WAIT = 2.0
"""Seconds a scrape in flight may take to finish when ``worker`` stops."""


class CommandError(Exception):
    """A failure to report as one line with this exit code."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def open_for(args: argparse.Namespace, *, must_exist: bool = False) -> Store:
    synchronous = config.parse_choice(
        "sqlite_synchronous", getattr(args, "sqlite_synchronous", "full"), ("full", "normal")
    )
    if must_exist and not is_postgres_url(args.database) and not os.path.exists(args.database):
        raise ConfigError(
            f"no database at {args.database}; check --database (or JOBTABLE_DATABASE), "
            "or create it with jobtable migrate"
        )
    busy_timeout = config.parse_seconds(
        "sqlite_busy_timeout",
        getattr(args, "sqlite_busy_timeout", str(config.DEFAULT_SQLITE_BUSY_TIMEOUT)),
    )
    pooler = config.parse_choice(
        "postgres_pooler", getattr(args, "postgres_pooler", None) or "none", ("none", "transaction")
    )
    return open_store(
        args.database,
        synchronous=synchronous,
        busy_timeout_ms=max(1, round(busy_timeout * 1000)),
        now=SystemClock().now(),
        pooler=pooler,
        listen_url=getattr(args, "postgres_listen_url", None) or None,
    )


@contextlib.contextmanager
def one_off(args: argparse.Namespace) -> Iterator[Runner]:
    """The existing database opened and an insert-only runner over it, closed after."""
    store = open_for(args, must_exist=True)
    try:
        yield one_off_runner(args, store)
    finally:
        store.close()


def one_off_runner(args: argparse.Namespace, store: Store) -> Runner:
    """An insert-only runner for a command that enqueues, reads or cancels, then exits."""
    runner = Runner(store, SystemClock(), workers=0, logger=logging.getLogger("jobtable.runner"))
    load_kinds(runner.kinds, config.parse_modules(getattr(args, "kinds", None)))
    return runner


def _group(
    args: argparse.Namespace,
    store: Store,
    serving: config.QueueServing,
    workers: int,
    *,
    serves_api: bool,
) -> RunnerGroup:
    async_workers = config.parse_positive_int("async_workers", args.async_workers, minimum=0)
    group = RunnerGroup(
        store,
        SystemClock(),
        plan_runners(serving, workers, serves_api=serves_api),
        async_workers=async_workers,
        logger=logging.getLogger("jobtable.runner"),
        observer=JobMetrics(),
        retention=config.parse_retention(args.keep_succeeded, args.keep_failed),
    )
    group.load_kinds(config.parse_modules(args.kinds))
    asynchronous = group.first.kinds.async_names()
    if asynchronous and not async_workers and group.workers:
        raise ConfigError(
            f"--async-workers 0: kinds {','.join(asynchronous)} have async def handlers and "
            "would never run; give 1 or more (or set JOBTABLE_ASYNC_WORKERS)"
        )
    return group


def _stop_runners(group: RunnerGroup, signals: StopSignals, deadline: float) -> None:
    """Two phases: running jobs go on until ``deadline`` (or a second signal), then are told."""
    group.stop()
    while not signals.now.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            break
        if group.join(timeout=min(left, 0.1)):
            return
    if signals.now.is_set():
        signals.say_second()
    else:
        log.warning("jobs still running at the end of the grace period; telling them to stop")
    group.stop_now()
    if not group.join(timeout=STOP_NOW_WAIT):
        log.warning(
            "jobs still running after being told to stop; they are settled by other "
            "runners (or the next start) once this process is gone"
        )


def _start_runners(group: RunnerGroup, store: Store) -> Watcher | None:
    """Start the workers, and wake them when another process queues a job.

    The watcher starts first, so a job queued between the workers' first
    (empty) claim and the watcher's first look cannot go unnoticed. Runners
    that claim nothing (``serve --workers 0``) need no watcher.
    """
    watcher = store.watch(group.notice_jobs_from_elsewhere) if group.workers else None
    try:
        group.start()
    except BaseException:
        if watcher is not None:
            watcher.stop()
        raise
    return watcher


def _log_start(command: str, args: argparse.Namespace, group: RunnerGroup) -> None:
    log.info(
        "jobtable %s %s: database=%s kinds=%s workers=%d queues=%s runner=%s",
        package_version(),
        command,
        redact(args.database),
        ",".join(group.first.kinds.names()),
        group.workers,
        describe(group.plans),
        ",".join(runner.id for runner in group.claiming) or "none",
    )


def _listen(
    app: Any,
    address: tuple[str, int],
    *,
    threads: int,
    flag: str,
    stream_slots: int = 0,
    end_streams: Callable[[], None] | None = None,
) -> HttpServer:
    host, port = address
    inherited = os.environ.get(LISTEN_FD_ENV) if flag == "--listen" else None
    sock = None if not inherited else socket.socket(fileno=int(inherited))
    try:
        return HttpServer(
            app,
            host=host,
            port=port,
            threads=threads,
            logger=log,
            stream_slots=stream_slots,
            end_streams=end_streams,
            sock=sock,
        )
    except OSError as error:
        raise ConfigError(
            f"cannot listen on {host}:{port}: {error.strerror or type(error).__name__}; "
            f"pick another {flag} address"
        ) from None


def run_serve(args: argparse.Namespace) -> int:
    address = config.parse_listen(args.listen)
    grace = config.parse_seconds("grace", args.grace)
    threads = config.parse_positive_int("http_threads", args.http_threads)
    slots = config.parse_positive_int("http_stream_slots", args.http_stream_slots)
    workers = config.parse_positive_int("workers", args.workers, minimum=0)
    serving = config.parse_queues(args.queues)
    metrics_public = config.parse_flag("metrics_public", args.metrics_public)
    store = open_for(args)
    try:
        group = _group(args, store, serving, workers, serves_api=True)
        token = resolve_api_token(args.database, log)
        streams = StreamSlots(slots)
        app = create_app(
            group.first,
            api_token=token,
            logger=logging.getLogger("jobtable.http"),
            metrics_public=metrics_public,
            streams=streams,
            hide_payloads=config.parse_flag("hide_payloads", args.hide_payloads),
        )
        server = _listen(
            app,
            address,
            threads=threads,
            flag="--listen",
            stream_slots=streams.limit,
            end_streams=group.changes.close,
        )
        signals = StopSignals().install()
        changes_elsewhere = follow_changes(store, group.changes)
        watcher = _start_runners(group, store)
        server.start()
        _log_start("serve", args, group)
        log.info("listening on http://%s:%d", *server.address)
        signals.wait()
        deadline = time.monotonic() + grace
        group.stop()  # no new claims while requests drain
        server.stop(deadline=deadline)  # ends the streams first: their readers resume elsewhere
        _stop_runners(group, signals, deadline)
        if watcher is not None:
            watcher.stop()
        changes_elsewhere.stop()
        signals.stopped()
    finally:
        store.close()
    log.info("stopped")
    return 0


def _worker_count(value: str) -> int:
    """``worker --workers``: 1 or more; 0 would run nothing (``serve --workers 0`` is the way)."""
    workers = config.parse_positive_int("workers", value, minimum=0)
    if workers == 0:
        raise ConfigError(
            "--workers 0: a worker process with no workers would run nothing; give 1 or more "
            "(or set JOBTABLE_WORKERS); to serve the API without running jobs, use "
            "jobtable serve --workers 0"
        )
    return workers


def run_worker(args: argparse.Namespace) -> int:
    grace = config.parse_seconds("grace", args.grace)
    workers = _worker_count(args.workers)
    serving = config.parse_queues(args.queues)
    metrics_at = None
    if args.metrics_listen:
        metrics_at = config.parse_listen(args.metrics_listen, "metrics_listen")
    metrics_public = config.parse_flag("metrics_public", args.metrics_public)
    store = open_for(args)
    try:
        group = _group(args, store, serving, workers, serves_api=False)
        server = None
        if metrics_at is not None:
            server = _metrics_server(args, group.first, metrics_at, public=metrics_public)
        signals = StopSignals().install()
        watcher = _start_runners(group, store)
        if server is not None:
            server.start()
            log.info("serving metrics on http://%s:%d/metrics", *server.address)
        _log_start("worker", args, group)
        signals.wait()
        _stop_runners(group, signals, time.monotonic() + grace)
        if server is not None:  # scraped until the last job is recorded
            server.stop(deadline=time.monotonic() + METRICS_STOP_WAIT)
        if watcher is not None:
            watcher.stop()
        signals.stopped()
    finally:
        store.close()
    log.info("stopped")
    return 0


def _metrics_server(
    args: argparse.Namespace, runner: Runner, address: tuple[str, int], *, public: bool
) -> HttpServer:
    """``worker --metrics-listen``: /metrics alone, behind the token ``serve`` uses unless
    public."""
    token = None if public else resolve_api_token(args.database, log)
    app = create_metrics_app(
        runner, api_token=token, public=public, logger=logging.getLogger("jobtable.http")
    )
    return _listen(app, address, threads=METRICS_THREADS, flag="--metrics-listen")


@contextlib.contextmanager
def _children_metrics(args: argparse.Namespace) -> Iterator[None]:
    """``worker --processes N --metrics-listen``: the supervisor serves /metrics once for its
    children (who serve none), their series summed from their shared multiprocess
    directory, the database's state read through an insert-only runner of its own."""
    if not getattr(args, "metrics_listen", None):
        yield
        return
    address = config.parse_listen(args.metrics_listen, "metrics_listen")
    public = config.parse_flag("metrics_public", args.metrics_public)
    store = open_for(args)
    try:
        server = _metrics_server(args, one_off_runner(args, store), address, public=public)
        server.start()
        log.info("serving metrics on http://%s:%d/metrics", *server.address)
        try:
            yield
        finally:  # scraped until the last child has stopped
            server.stop(deadline=time.monotonic() + METRICS_STOP_WAIT)
    finally:
        store.close()


def run_migrate(args: argparse.Namespace) -> int:
    store = open_for(args)  # opening applies every pending migration
    store.close()
    if store.applied_at_open:
        print(f"{redact(args.database)}: applied {', '.join(store.applied_at_open)}")
    else:
        print(f"{redact(args.database)}: already up to date")
    return 0


def run_supervised(args: argparse.Namespace, argv: list[str], processes: int) -> int:
    """``serve`` or ``worker`` with ``--processes N``: N children under one supervisor."""
    grace = config.parse_seconds("grace", args.grace)
    # Once, before any child: the schema is brought up to date (an unreachable database
    # is one line and exit 1 here, not children failing over and over) and the token
    # file is made, so children starting together all read the same one.
    open_for(args).close()
    if args.command == "serve" or getattr(args, "metrics_listen", None):
        resolve_api_token(args.database, log)
    listener = None
    if args.command == "serve":
        host, port = config.parse_listen(args.listen)
        try:
            listener = listening_socket(host, port)
        except OSError as error:
            raise ConfigError(
                f"cannot listen on {host}:{port}: {error.strerror or type(error).__name__}; "
                "pick another --listen address"
            ) from None
        bound_host, bound_port = listener.getsockname()[:2]
        log.info("listening on http://%s:%d", bound_host, bound_port)
    # Given last, these win over any spelling of the same flags before them (argparse takes
    # ``--proc 2`` for ``--processes 2``): one process each, and no metrics listener.
    child = [*without_processes_flag(argv), "--processes", "1"]
    if args.command == "worker":
        child += ["--metrics-listen", ""]
    supervisor = Supervisor(
        child,
        processes,
        grace=grace,
        stop_wait=STOP_NOW_WAIT,
        logger=log,
        listener=listener,
    )
    with shared_metrics_directory(), _children_metrics(args):
        return supervisor.run()
