"""The ``jobtable`` command: serve, worker, migrate.

Every failure the user can fix ends as one line on stderr naming the problem
and the fix, and a non-zero exit; no traceback.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from adapters.sqlite import SqliteStore
from adapters.system_clock import SystemClock
from core import Runner, StoreError
from entrypoints import config
from entrypoints.config import SETTINGS, ConfigError, env_default
from entrypoints.http.app import create_app, package_version
from entrypoints.http_server import HttpServer
from entrypoints.wiring import load_kinds, open_store, resolve_api_token

EXIT_FAILURE = 1
EXIT_USAGE = 2


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line that points at --help."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"jobtable: {message} (see {self.prog} --help)\n")


def _add(parser: argparse.ArgumentParser, name: str) -> None:
    setting = SETTINGS[name]
    parser.add_argument(setting.flag, dest=name, default=env_default(name), help=setting.describe())


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="jobtable",
        description="A durable background-job runner: the jobs table is the queue.",
    )
    parser.add_argument("--version", action="version", version=f"jobtable {package_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    commands.required = True

    serve = commands.add_parser("serve", help="run the HTTP API and workers in one process")
    for name in ("database", "listen", "workers", "kinds", "grace", "sqlite_synchronous",
                 "http_threads", "log_level"):  # fmt: skip
        _add(serve, name)
    serve.set_defaults(run=run_serve)

    worker = commands.add_parser("worker", help="run workers only")
    for name in ("database", "workers", "kinds", "grace", "sqlite_synchronous", "log_level"):
        _add(worker, name)
    worker.set_defaults(run=run_worker)

    migrate = commands.add_parser("migrate", help="bring the database's schema up to date")
    for name in ("database", "log_level"):
        _add(migrate, name)
    migrate.set_defaults(run=run_migrate)
    return parser


def configure_logging(level_name: str) -> None:
    level = config.parse_choice("log_level", level_name, ("debug", "info", "warning", "error"))
    logging.basicConfig(
        level=level.upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def _open(args: argparse.Namespace) -> SqliteStore:
    synchronous = config.parse_choice(
        "sqlite_synchronous", getattr(args, "sqlite_synchronous", "full"), ("full", "normal")
    )
    return open_store(args.database, synchronous=synchronous, now=SystemClock().now())


def _build_runner(args: argparse.Namespace, store: SqliteStore) -> Runner:
    workers = config.parse_positive_int("workers", args.workers)
    runner = Runner(
        store, SystemClock(), workers=workers, logger=logging.getLogger("jobtable.runner")
    )
    load_kinds(runner, config.parse_modules(args.kinds))
    return runner


def _wait_for_signal() -> None:
    """Block until SIGTERM or SIGINT."""
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        logging.getLogger("jobtable").info("received %s; stopping", signal.Signals(signum).name)
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, on_signal)
    while not stop.wait(1.0):
        pass


def _stop_runner(runner: Runner, deadline: float) -> None:
    runner.stop()
    if not runner.join(timeout=max(0.0, deadline - time.monotonic())):
        logging.getLogger("jobtable").warning(
            "jobs still running at the end of the grace period; "
            "the next start marks them interrupted"
        )


def run_serve(args: argparse.Namespace) -> int:
    log = logging.getLogger("jobtable")
    host, port = config.parse_listen(args.listen)
    grace = config.parse_seconds("grace", args.grace)
    threads = config.parse_positive_int("http_threads", args.http_threads)
    store = _open(args)
    try:
        runner = _build_runner(args, store)
        token = resolve_api_token(args.database, log)
        app = create_app(runner, api_token=token, logger=logging.getLogger("jobtable.http"))
        try:
            server = HttpServer(app, host=host, port=port, threads=threads, logger=log)
        except OSError as error:
            raise ConfigError(
                f"cannot listen on {host}:{port}: {error.strerror or type(error).__name__}; "
                "pick another --listen address"
            ) from None
        runner.start()
        server.start()
        log.info("listening on http://%s:%d", *server.address)
        _wait_for_signal()
        deadline = time.monotonic() + grace
        server.stop(deadline=deadline)
        _stop_runner(runner, deadline)
    finally:
        store.close()
    log.info("stopped")
    return 0


def run_worker(args: argparse.Namespace) -> int:
    log = logging.getLogger("jobtable")
    grace = config.parse_seconds("grace", args.grace)
    store = _open(args)
    try:
        runner = _build_runner(args, store)
        runner.start()
        log.info("worker started: %d workers", config.parse_positive_int("workers", args.workers))
        _wait_for_signal()
        _stop_runner(runner, time.monotonic() + grace)
    finally:
        store.close()
    log.info("stopped")
    return 0


def run_migrate(args: argparse.Namespace) -> int:
    store = _open(args)  # opening applies every pending migration
    store.close()
    print(f"{args.database}: schema up to date")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        configure_logging(args.log_level)
        return run(args)
    except ConfigError as error:
        print(f"jobtable: {error}", file=sys.stderr)
        return EXIT_USAGE
    except StoreError as error:
        print(
            f"jobtable: {error.category} at {args.database}: check that the path exists, "
            "is a jobtable database and is writable",
            file=sys.stderr,
        )
        return EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
