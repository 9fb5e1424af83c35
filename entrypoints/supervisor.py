"""``--processes N``: N worker processes under one supervisor, so every core runs jobs.

Python threads share one core for Python code; processes do not. The
supervisor runs the same command N times with ``--processes 1`` (each child
a runner of its own, with its own liveness lock, exactly as if started by
hand), restarts a child that dies, and passes stop signals on: the first
SIGTERM or SIGINT asks every child for a graceful stop (it stops claiming,
lets running jobs finish for ``--grace``, then tells them to stop), a second
tells them to stop now. For ``serve``, the supervisor binds the listening
socket once and every child accepts on it: the kernel hands each new
connection to one of them.

Prometheus counters add up across the children: when ``PROMETHEUS_MULTIPROC_DIR``
is unset the supervisor points it at a fresh directory for them, and marks
a child's files dead when it exits.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from typing import Any

LISTEN_FD_ENV = "JOBTABLE_LISTEN_FD"
"""Set for a supervised ``serve``: the inherited descriptor of the listening socket."""

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

RESTART_DELAYS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
"""Seconds before restarting a child that died, growing while children keep dying young."""

STEADY_AFTER = 60.0
"""A child that lived this long resets the restart delay."""

STOP_MARGIN = 10.0
"""Seconds past ``grace`` and the handlers' stop wait before a child is killed."""

POLL = 0.1

EXIT_USAGE = 2
"""A child's exit code for settings it refused (the CLI's): restarting would not help."""


def without_processes_flag(argv: Sequence[str]) -> list[str]:
    """The command line for one child: the same, without ``--processes`` (it is set to 1)."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg == "--processes":
            skip = True
            continue
        if arg.startswith("--processes="):
            continue
        kept.append(arg)
    return kept


def listening_socket(host: str, port: int) -> socket.socket:
    """The socket every supervised ``serve`` child accepts on (inheritable)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(1024)
    sock.set_inheritable(True)
    return sock


class Supervisor:
    def __init__(
        self,
        argv: Sequence[str],
        processes: int,
        *,
        grace: float,
        stop_wait: float,
        logger: logging.Logger,
        listener: socket.socket | None = None,
    ) -> None:
        self._command = [sys.executable, "-m", "jobtable.entrypoints.cli", *argv]
        self._processes = processes
        self._deadline_after_stop = grace + stop_wait + STOP_MARGIN
        self._log = logger
        self._listener = listener
        self._children: dict[int, subprocess.Popen[bytes]] = {}  # slot -> child
        self._born: dict[int, float] = {}
        self._failures: dict[int, int] = {}
        self._stopping = threading.Event()
        self._signals: list[int] = []
        self._multiproc_dir: str | None = None
        self._refused = False

    def run(self) -> int:
        """Run the children until stopped; 0 when every child stopped cleanly."""
        env = self._environment()
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._received)
        try:
            for slot in range(self._processes):
                self._start(slot, env)
            self._log.info(
                "supervising %d processes: %s",
                self._processes,
                ",".join(str(child.pid) for child in self._children.values()),
            )
            restart_at: dict[int, float] = {}
            while not self._stopping.is_set():
                self._forward_signals()
                for slot, child in list(self._children.items()):
                    code = child.poll()
                    if code is None or slot in restart_at:
                        continue
                    self._child_gone(child)
                    if code == EXIT_USAGE:  # its settings are wrong: another try would be too
                        self._log.error(
                            "worker process %d refused its settings; stopping the others",
                            child.pid,
                        )
                        self._stopping.set()
                        self._signals.append(signal.SIGTERM)
                        self._refused = True
                        break
                    delay = self._restart_delay(slot)
                    self._log.error(
                        "worker process %d exited with %s; starting another in %.1fs",
                        child.pid,
                        _describe(code),
                        delay,
                    )
                    restart_at[slot] = time.monotonic() + delay
                for slot, when in list(restart_at.items()):
                    if time.monotonic() >= when and not self._stopping.is_set():
                        del restart_at[slot]
                        self._start(slot, env)
                self._stopping.wait(POLL)
            stopped = self._stop_children()
            return EXIT_USAGE if self._refused else stopped
        finally:
            if self._multiproc_dir is not None:
                shutil.rmtree(self._multiproc_dir, ignore_errors=True)

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env["JOBTABLE_PROCESSES"] = "1"
        if self._listener is not None:
            env[LISTEN_FD_ENV] = str(self._listener.fileno())
        if not env.get(MULTIPROC_ENV):
            self._multiproc_dir = tempfile.mkdtemp(prefix="jobtable-metrics-")
            env[MULTIPROC_ENV] = self._multiproc_dir
        return env

    def _start(self, slot: int, env: dict[str, str]) -> None:
        fds = () if self._listener is None else (self._listener.fileno(),)
        # Our own interpreter and module, with the arguments this process was given.
        self._children[slot] = subprocess.Popen(self._command, env=env, pass_fds=fds)  # noqa: S603
        self._born[slot] = time.monotonic()

    def _restart_delay(self, slot: int) -> float:
        if time.monotonic() - self._born.get(slot, 0.0) >= STEADY_AFTER:
            self._failures[slot] = 0
        failures = self._failures.get(slot, 0)
        self._failures[slot] = failures + 1
        return RESTART_DELAYS[min(failures, len(RESTART_DELAYS) - 1)]

    def _received(self, signum: int, frame: Any) -> None:
        self._signals.append(signum)
        self._stopping.set()

    def _forward_signals(self) -> None:
        while self._signals:
            signum = self._signals.pop(0)
            for child in self._children.values():
                if child.poll() is None:
                    child.send_signal(signum)

    def _stop_children(self) -> int:
        """Pass the stop on and wait for every child; kill those past the deadline."""
        if self._listener is not None:
            self._listener.close()  # the children close theirs as they stop: then it is gone
        self._log.info("stopping %d worker processes", len(self._children))
        deadline = time.monotonic() + self._deadline_after_stop
        clean = True
        while True:
            self._forward_signals()  # a second signal: they stop their handlers now
            running = [child for child in self._children.values() if child.poll() is None]
            if not running:
                break
            if time.monotonic() >= deadline:
                for child in running:
                    self._log.error("worker process %d did not stop in time; killing it", child.pid)
                    child.kill()
                    child.wait()
                clean = False
                break
            time.sleep(POLL)
        for child in self._children.values():
            self._child_gone(child)
            if child.returncode != 0:
                clean = False
        return 0 if clean else 1

    def _child_gone(self, child: subprocess.Popen[bytes]) -> None:
        """Its metrics files stop counting as live (prometheus-client's multiprocess mode)."""
        directory = os.environ.get(MULTIPROC_ENV) or self._multiproc_dir
        if directory is None:
            return
        try:
            from prometheus_client import multiprocess
        except ImportError:
            return
        previous = os.environ.get(MULTIPROC_ENV)
        os.environ[MULTIPROC_ENV] = directory
        try:
            multiprocess.mark_process_dead(child.pid, directory)
        finally:
            if previous is None:
                del os.environ[MULTIPROC_ENV]


def _describe(code: int) -> str:
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"code {code}"
