"""The liveness locks this process holds on PostgreSQL: a lock session per runner.

Each is a ``LockSession`` (lock_session.py); beside it, the server it was
taken on, which the runner's row records so others can tell a crash from a
failover.
"""

from __future__ import annotations

import threading
import time

from jobtable.adapters.postgres.lock_session import LockSession
from jobtable.core.errors import StoreError

LOCK_CONNECT_TIMEOUT = 2.0
RELEASE_TIMEOUT = 1.0
"""Seconds a runner letting go of its lock waits for the server to say it has."""


class RunnerLocks:
    def __init__(self, conninfo: str, *, session_timeout: float) -> None:
        self._conninfo = conninfo
        self._session_timeout = session_timeout
        self._guard = threading.Lock()
        self._sessions: dict[str, LockSession] = {}  # runner id -> the session holding its lock
        self._locked_on: dict[str, str] = {}  # runner id -> the server its lock is on

    def confirm(self, runner_id: str, *, timeout: float) -> bool:
        """A round trip on the lock session (True); a new session and lock if it is gone
        (False). Raises StoreError when neither can be had within ``timeout``."""
        deadline = time.monotonic() + timeout  # one budget for the check and a re-take
        with self._guard:
            session = self._sessions.get(runner_id)
        if session is not None:
            try:
                session.check(min(timeout, LOCK_CONNECT_TIMEOUT))
                return True
            except StoreError:
                pass  # the session ended (killed, restarted, failed over): take the lock again
        self._take(runner_id, timeout=max(0.0, deadline - time.monotonic()))
        return False

    def location(self, runner_id: str) -> str | None:
        """The server ``runner_id``'s lock was taken on (its start time), if held here."""
        with self._guard:
            return self._locked_on.get(runner_id)

    def backend_pid(self, runner_id: str) -> int | None:
        """The server process holding ``runner_id``'s lock."""
        with self._guard:
            session = self._sessions.get(runner_id)
        return None if session is None else session.backend_pid

    def release(self, runner_id: str) -> None:
        """Let go of ``runner_id``'s lock, waiting briefly for the server: a sweep may look next."""
        with self._guard:
            session = self._sessions.pop(runner_id, None)
            self._locked_on.pop(runner_id, None)
        if session is not None:
            session.release(RELEASE_TIMEOUT)

    def release_all(self) -> None:
        with self._guard:
            held = list(self._sessions)
        for runner_id in held:
            self.release(runner_id)

    def forget_after_fork(self) -> None:
        """In a forked child: drop every inherited session without ending it (the parent's)."""
        self._guard = threading.Lock()
        sessions, self._sessions = self._sessions, {}
        self._locked_on = {}
        for session in sessions.values():
            session.forget_after_fork()

    def _take(self, runner_id: str, *, timeout: float) -> None:
        session = LockSession(self._conninfo, runner_id, session_timeout=self._session_timeout)
        incarnation = session.open(timeout)
        with self._guard:
            previous = self._sessions.pop(runner_id, None)
            self._sessions[runner_id] = session
            self._locked_on[runner_id] = incarnation
        if previous is not None:
            previous.close()
