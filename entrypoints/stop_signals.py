"""How ``serve`` and ``worker`` are told to stop: signals, and a supervisor's orders.

Two phases: the first stop asks for a graceful one (no new jobs, running ones
finish within the grace), a second for an immediate one. Alone, a process
counts the SIGTERMs and SIGINTs it receives. A child of ``--processes`` also
takes its supervisor's orders, which name the phase outright (supervisor.py),
and stops gracefully when its supervisor dies. A signal sent to every process
at once (Ctrl-C to the process group; systemd stopping every process of the
unit) reaches the child directly and again as its supervisor's order: the
phase is the larger of the two counts, never their sum, so it counts once,
and a second Ctrl-C still takes both to a stop now.
"""

from __future__ import annotations

import logging
import signal
import threading
from typing import Any

from jobtable.entrypoints.supervisor import GRACEFUL, NOW, STOP_SIGNALS, follow_supervisor

log = logging.getLogger("jobtable")


class StopSignals:
    """SIGTERM or SIGINT: the first asks for a graceful stop, a second for an immediate one."""

    def __init__(self) -> None:
        self.graceful = threading.Event()
        self.now = threading.Event()
        self.first = self.second = ""
        """What started each phase, for the log."""
        self._signalled = 0  # written by the signal handler only
        self._ordered = 0  # written by the supervisor's orders thread only
        self._supervised = False

    def install(self) -> StopSignals:
        """Take signals (and a supervisor's orders) from now on; a signal that came while the
        supervisor had them blocked for this child's start is handled now."""
        for signum in STOP_SIGNALS:
            signal.signal(signum, self._received)
        self._supervised = follow_supervisor(self._order, self._supervisor_gone)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        return self

    def stopped(self) -> None:
        """The stop is done. A supervised child ignores later signals: Python's handlers are
        gone while it exits, and one more Ctrl-C to the process group would kill it, a
        clean stop counted as failed. Its supervisor kills it should it not end."""
        if self._supervised:
            for signum in STOP_SIGNALS:
                signal.signal(signum, signal.SIG_IGN)

    def _received(self, signum: int, frame: Any) -> None:
        # No logging here: the handler runs between two bytecodes of the main thread, which
        # may be half-way through writing a line to stderr, and a second write into the same
        # buffer raises (a reentrant call) and can wedge the process. The main thread logs.
        self._signalled += 1
        again = " again" if self._signalled > 1 else ""
        self._reach(self._signalled, f"received {signal.Signals(signum).name}{again}")

    def _order(self, phase: int) -> None:
        self._ordered = max(self._ordered, phase)
        self._reach(self._ordered, "the supervisor passed a stop on")

    def _supervisor_gone(self) -> None:
        log.warning("the supervisor is gone; stopping as on SIGTERM")
        self._ordered = max(self._ordered, GRACEFUL)
        self._reach(self._ordered, "the supervisor died")

    def _reach(self, phase: int, why: str) -> None:
        # Each count moves only its own events forward: whichever comes second finds its
        # phase reached already, and the two together are their larger.
        if phase >= GRACEFUL and not self.graceful.is_set():
            self.first = why
            self.graceful.set()
        if phase >= NOW and not self.now.is_set():
            self.second = why
            self.now.set()

    def wait(self) -> None:
        """Until the first signal; then say what it does."""
        while not self.graceful.wait(1.0):
            pass
        log.info(
            "%s; taking no new jobs and letting running ones finish "
            "(a second signal stops them now)",
            self.first,
        )

    def say_second(self) -> None:
        log.info("%s; telling running jobs to stop now", self.second)
