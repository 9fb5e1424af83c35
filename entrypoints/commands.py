"""What each ``jobtable`` command does, once its arguments are parsed."""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
import time
from typing import Any

from jobtable.adapters.system_clock import SystemClock
from jobtable.core import InvalidPayloadError, Runner, UnknownKindError
from jobtable.entrypoints import config
from jobtable.entrypoints.config import ConfigError
from jobtable.entrypoints.follow import follow
from jobtable.entrypoints.http.app import create_app, package_version
from jobtable.entrypoints.http_server import HttpServer
from jobtable.entrypoints.wiring import (
    Store,
    Watcher,
    is_postgres_url,
    load_kinds,
    open_store,
    redact,
    resolve_api_token,
)

log = logging.getLogger("jobtable")

EXIT_JOB_FAILED = 1
EXIT_INTERRUPTED = 130
STOP_NOW_WAIT = 5.0
"""Seconds to wait for handlers once told to stop, after the grace period."""


class CommandError(Exception):
    """A failure to report as one line with this exit code."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def _open(args: argparse.Namespace, *, must_exist: bool = False) -> Store:
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


def _runner(args: argparse.Namespace, store: Store, workers: int = 1) -> Runner:
    runner = Runner(
        store, SystemClock(), workers=workers, logger=logging.getLogger("jobtable.runner")
    )
    load_kinds(runner, config.parse_modules(args.kinds))
    return runner


class StopSignals:
    """SIGTERM or SIGINT: the first asks for a graceful stop, a second for an immediate one."""

    def __init__(self) -> None:
        self.graceful = threading.Event()
        self.now = threading.Event()

    def install(self) -> StopSignals:
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._received)
        return self

    def _received(self, signum: int, frame: Any) -> None:
        name = signal.Signals(signum).name
        if self.graceful.is_set():
            log.info("received %s again; telling running jobs to stop now", name)
            self.now.set()
        else:
            log.info(
                "received %s; taking no new jobs and letting running ones finish "
                "(a second signal stops them now)",
                name,
            )
            self.graceful.set()

    def wait(self) -> None:
        while not self.graceful.wait(1.0):
            pass


def _stop_runner(runner: Runner, signals: StopSignals, deadline: float) -> None:
    """Two phases: running jobs go on until ``deadline`` (or a second signal), then are told."""
    runner.stop()
    while not signals.now.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            break
        if runner.join(timeout=min(left, 0.1)):
            return
    log.warning("jobs still running at the end of the grace period; telling them to stop")
    runner.stop_now()
    if not runner.join(timeout=STOP_NOW_WAIT):
        log.warning(
            "jobs still running after being told to stop; they are settled by other "
            "runners (or the next start) once this process is gone"
        )


def _start_runner(runner: Runner, store: Store) -> Watcher:
    """Start the workers, and wake them when another process queues a job.

    The watcher starts first, so a job queued between the workers' first
    (empty) claim and the watcher's first look cannot go unnoticed.
    """
    watcher = store.watch(runner.notice_jobs_from_elsewhere)
    runner.start()
    return watcher


def _log_start(command: str, args: argparse.Namespace, runner: Runner, workers: int) -> None:
    log.info(
        "jobtable %s %s: database=%s kinds=%s workers=%d runner=%s",
        package_version(),
        command,
        redact(args.database),
        ",".join(runner.kinds.names()),
        workers,
        runner.id,
    )


def run_serve(args: argparse.Namespace) -> int:
    host, port = config.parse_listen(args.listen)
    grace = config.parse_seconds("grace", args.grace)
    threads = config.parse_positive_int("http_threads", args.http_threads)
    workers = config.parse_positive_int("workers", args.workers)
    store = _open(args)
    try:
        runner = _runner(args, store, workers)
        token = resolve_api_token(args.database, log)
        app = create_app(runner, api_token=token, logger=logging.getLogger("jobtable.http"))
        try:
            server = HttpServer(app, host=host, port=port, threads=threads, logger=log)
        except OSError as error:
            raise ConfigError(
                f"cannot listen on {host}:{port}: {error.strerror or type(error).__name__}; "
                "pick another --listen address"
            ) from None
        signals = StopSignals().install()
        watcher = _start_runner(runner, store)
        server.start()
        _log_start("serve", args, runner, workers)
        log.info("listening on http://%s:%d", *server.address)
        signals.wait()
        deadline = time.monotonic() + grace
        runner.stop()  # no new claims while requests drain
        server.stop(deadline=deadline)
        _stop_runner(runner, signals, deadline)
        watcher.stop()
    finally:
        store.close()
    log.info("stopped")
    return 0


def run_worker(args: argparse.Namespace) -> int:
    grace = config.parse_seconds("grace", args.grace)
    workers = config.parse_positive_int("workers", args.workers)
    store = _open(args)
    try:
        runner = _runner(args, store, workers)
        signals = StopSignals().install()
        watcher = _start_runner(runner, store)
        _log_start("worker", args, runner, workers)
        signals.wait()
        _stop_runner(runner, signals, time.monotonic() + grace)
        watcher.stop()
    finally:
        store.close()
    log.info("stopped")
    return 0


def run_migrate(args: argparse.Namespace) -> int:
    store = _open(args)  # opening applies every pending migration
    store.close()
    if store.applied_at_open:
        print(f"{redact(args.database)}: applied {', '.join(store.applied_at_open)}")
    else:
        print(f"{redact(args.database)}: already up to date")
    return 0


def run_get(args: argparse.Namespace) -> int:
    store = _open(args, must_exist=True)
    try:
        job = store.get(args.id)
    finally:
        store.close()
    if job is None:
        raise CommandError(
            f"no job {args.id!r} in {redact(args.database)}; check the id and --database"
        )
    print(json.dumps(job.to_public()))
    return 0


def _parse_payload(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as error:
        where = f" at column {error.colno}" if isinstance(error, json.JSONDecodeError) else ""
        raise CommandError(
            f"PAYLOAD_JSON is not valid JSON{where}; give an object, e.g. '{{\"seconds\": 3}}'",
            exit_code=2,
        ) from None


def run_enqueue(args: argparse.Namespace) -> int:
    payload = _parse_payload(args.payload)
    store = _open(args, must_exist=True)
    try:
        runner = _runner(args, store)
        try:
            job_id = runner.enqueue(args.kind, payload)
        except UnknownKindError:
            known = ", ".join(runner.kinds.names())
            raise CommandError(
                f"unknown job kind {args.kind!r}; known kinds: {known} "
                "(load yours with --kinds module)",
                exit_code=2,
            ) from None
        except InvalidPayloadError as error:
            raise CommandError(
                f"payload does not match kind {args.kind!r}: {'; '.join(error.problems[:10])}",
                exit_code=2,
            ) from None
        if not args.wait:
            print(job_id)
            return 0
        return _wait_for(store, job_id)
    finally:
        store.close()


def _wait_for(store: Store, job_id: str) -> int:
    changed = threading.Event()
    watcher = store.watch(changed.set)
    try:
        job = follow(lambda: store.get(job_id), changed)
    except KeyboardInterrupt:
        raise CommandError(
            f"stopped waiting; the job goes on: jobtable get {job_id}", exit_code=EXIT_INTERRUPTED
        ) from None
    finally:
        watcher.stop()
    if job.error is not None:
        print(f"jobtable: job {job_id} failed: {job.error}", file=sys.stderr)
        return EXIT_JOB_FAILED
    return 0
