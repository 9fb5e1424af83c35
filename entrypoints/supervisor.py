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

Stop orders go down a pipe to each child, naming the phase (graceful, now)
rather than adding one: a signal sent to every process at once (Ctrl-C to
the process group, systemd's stop of every process in the unit) reaches a
child directly and again as its supervisor's order, and counts once. The
pipe also tells a child its supervisor died, however it died (``kill -9``
included, at any moment after the fork): the child's end reads end-of-file,
and it stops as on SIGTERM. (``PR_SET_PDEATHSIG`` would be Linux-only, miss a
death between fork and ``prctl``, and arrive as one more signal.)

Prometheus counters add up across the children: when ``PROMETHEUS_MULTIPROC_DIR``
is unset the supervisor points it at a fresh directory for them, and marks
a child's files dead when it exits.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

LISTEN_FD_ENV = "JOBTABLE_LISTEN_FD"
"""Set for a supervised ``serve``: the inherited descriptor of the listening socket."""

ORDERS_FD_ENV = "JOBTABLE_SUPERVISOR_FD"
"""Set for every child: the read end of the pipe its supervisor sends stop orders down."""

GRACEFUL, NOW = 1, 2
"""The stop phases: take no new jobs and let running ones finish; tell them to stop now."""

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
"""The signals that ask for a stop: the first graceful, a second now."""

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


@contextlib.contextmanager
def shared_metrics_directory() -> Iterator[str]:
    """``PROMETHEUS_MULTIPROC_DIR`` for this process and its children while inside: the one
    set, or a fresh directory, removed after."""
    given = os.environ.get(MULTIPROC_ENV)
    if given:
        yield given
        return
    directory = tempfile.mkdtemp(prefix="jobtable-metrics-")
    os.environ[MULTIPROC_ENV] = directory
    try:
        yield directory
    finally:
        os.environ.pop(MULTIPROC_ENV, None)
        shutil.rmtree(directory, ignore_errors=True)


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
        self._orders: dict[int, int] = {}  # child pid -> the write end of its orders pipe
        self._stopping = threading.Event()
        self._signals = 0
        self._told = 0  # the phase every child was told
        self._refused = False

    def run(self) -> int:
        """Run the children until stopped; 0 when every child stopped cleanly."""
        for signum in STOP_SIGNALS:
            signal.signal(signum, self._received)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        with shared_metrics_directory():
            env = self._environment()
            for slot in range(self._processes):
                self._start(slot, env)
            self._log.info(
                "supervising %d processes: %s",
                self._processes,
                ",".join(str(child.pid) for child in self._children.values()),
            )
            restart_at: dict[int, float] = {}
            while not self._stopping.is_set():
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
        for signum in STOP_SIGNALS:  # nothing left to stop: one more Ctrl-C must not kill
            signal.signal(signum, signal.SIG_IGN)  # it while it exits (see StopSignals.stopped)
        return EXIT_USAGE if self._refused else stopped

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env["JOBTABLE_PROCESSES"] = "1"
        if self._listener is not None:
            env[LISTEN_FD_ENV] = str(self._listener.fileno())
        return env

    def _start(self, slot: int, env: dict[str, str]) -> None:
        orders, write_end = os.pipe()  # neither end inheritable: only the child gets ``orders``
        fds = [orders] if self._listener is None else [orders, self._listener.fileno()]
        # The child starts with the stop signals blocked, as they are here for that moment:
        # one sent to every process while it starts waits for its handler (StopSignals)
        # instead of killing it. Here, one waits the length of the fork.
        unblocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            # Our own interpreter and module, with the arguments this process was given.
            child = subprocess.Popen(  # noqa: S603
                self._command, env={**env, ORDERS_FD_ENV: str(orders)}, pass_fds=fds
            )
        except BaseException:
            os.close(write_end)
            raise
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, unblocked)
            os.close(orders)
        self._orders[child.pid] = write_end
        self._children[slot] = child
        self._born[slot] = time.monotonic()

    def _restart_delay(self, slot: int) -> float:
        if time.monotonic() - self._born.get(slot, 0.0) >= STEADY_AFTER:
            self._failures[slot] = 0
        failures = self._failures.get(slot, 0)
        self._failures[slot] = failures + 1
        return RESTART_DELAYS[min(failures, len(RESTART_DELAYS) - 1)]

    def _received(self, signum: int, frame: Any) -> None:
        self._signals += 1
        self._stopping.set()

    def _pass_orders_on(self) -> None:
        """Tell every child the phase asked for, once each: the refusal of a child's settings
        is a graceful stop, the first signal too, a second signal a stop now."""
        phase = max(GRACEFUL if self._refused else 0, min(self._signals, NOW))
        if phase <= self._told:
            return
        self._told = phase
        for write_end in self._orders.values():
            with contextlib.suppress(OSError):  # that child has exited
                os.write(write_end, str(phase).encode())

    def _stop_children(self) -> int:
        """Pass the stop on and wait for every child; kill those past the deadline."""
        if self._listener is not None:
            self._listener.close()  # the children close theirs as they stop: then it is gone
        self._log.info("stopping %d worker processes", len(self._children))
        deadline = time.monotonic() + self._deadline_after_stop
        stopping = {child.pid for child in self._children.values() if child.poll() is None}
        while True:
            self._pass_orders_on()  # a second signal: they stop their handlers now
            running = [child for child in self._children.values() if child.poll() is None]
            if not running:
                break
            if time.monotonic() >= deadline:
                for child in running:
                    self._log.error("worker process %d did not stop in time; killing it", child.pid)
                    stopping.discard(child.pid)
                    child.kill()
                    child.wait()
                break
            time.sleep(POLL)
        clean = True
        for child in self._children.values():
            self._child_gone(child)
            if child.returncode != 0:
                clean = False
                if child.pid in stopping:
                    self._log.error(
                        "worker process %d stopped with %s", child.pid, _describe(child.returncode)
                    )
        return 0 if clean else 1

    def _child_gone(self, child: subprocess.Popen[bytes]) -> None:
        """Its orders pipe is closed; its metrics files stop counting as live
        (prometheus-client's multiprocess mode)."""
        write_end = self._orders.pop(child.pid, None)
        if write_end is not None:
            os.close(write_end)
        directory = os.environ.get(MULTIPROC_ENV)
        if not directory:
            return
        try:
            from prometheus_client import multiprocess
        except ImportError:
            return
        multiprocess.mark_process_dead(child.pid, directory)


def follow_supervisor(order: Callable[[int], None], gone: Callable[[], None]) -> bool:
    """In a child a supervisor started: ``order(GRACEFUL)`` or ``order(NOW)`` for each stop
    order it sends, ``gone()`` once it has died (whatever killed it). From a thread of its
    own; False, and nothing started, in a process no supervisor started."""
    named = os.environ.pop(ORDERS_FD_ENV, None)  # not for processes this one starts
    try:
        orders = int(named or "")
        if not stat.S_ISFIFO(os.fstat(orders).st_mode):
            return False
    except (ValueError, OSError):
        return False
    threading.Thread(
        target=_read_orders, args=(orders, order, gone), name="jobtable-supervisor", daemon=True
    ).start()
    return True


def _read_orders(orders: int, order: Callable[[int], None], gone: Callable[[], None]) -> None:
    with open(orders, "rb", buffering=0) as pipe:
        while True:
            try:
                said = pipe.read(1)
            except OSError:
                said = b""
            if not said:  # every write end closed: the supervisor is gone
                gone()
                return
            if said in (b"1", b"2"):
                order(int(said))


def _describe(code: int) -> str:
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"code {code}"
