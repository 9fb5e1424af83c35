"""A runner's liveness lock on PostgreSQL behind a pooler: one connection, one open
transaction, deadlines. (With no pooler, a process's runners hold session locks on one
shared session that also listens: shared_session.py.)

The lock is ``pg_try_advisory_xact_lock`` in a transaction left open for the
runner's life, not a session lock:

- a transaction pins its server connection through PgBouncer in transaction
  mode, where a session lock would stay on a server connection that other
  clients go on to use;
- ``SET LOCAL idle_in_transaction_session_timeout`` makes the *server* end
  the session when the runner falls silent (a partition, a host that
  vanished), which releases the lock: TCP keepalives cannot show a partition
  when something between still acknowledges them;
- the transaction writes nothing and holds no snapshot between statements
  (read committed), so it holds back no vacuum.

Every round trip, the connection's included, runs on libpq's non-blocking
calls with a deadline, so a check never hangs on a silent network.
"""

from __future__ import annotations

import contextlib
import re
import time

from psycopg import pq

from jobtable.adapters.postgres.libpq_calls import (
    LockLostError,
    neuter_descriptor,
    open_connection,
    round_trip,
)

_SAFE_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")

RUNNER_KEY = "(hashtextextended({id}, 0) & 4611686018427387903)"
"""A runner's advisory lock key: its id hashed into 62 bits by the server, in every query."""


class LockSession:
    def __init__(self, conninfo: str, runner_id: str, *, session_timeout: float) -> None:
        safe_runner_id(runner_id)
        self._conninfo = conninfo.encode("utf-8")
        self._runner_id = runner_id
        self._session_timeout_ms = max(1, round(session_timeout * 1000))
        self._conn: pq.abc.PGconn | None = None

    def open(self, timeout: float) -> str:
        """Connect and take the lock within ``timeout`` seconds; return the server's incarnation.

        The incarnation (when the server started, as epoch seconds) tells a
        lock taken on this server from one taken before a restart or on
        another server before a failover. Raises LockLostError when the
        server cannot be reached in time or the lock is held elsewhere (an
        old session of this runner the server has not ended yet).
        """
        deadline = time.monotonic() + timeout
        self.close()
        try:
            self._conn = open_connection(self._conninfo, deadline)
            key = RUNNER_KEY.format(id=f"'{self._runner_id}'")
            results = round_trip(
                self._conn,
                "BEGIN; "
                f"SET LOCAL idle_in_transaction_session_timeout = {self._session_timeout_ms}; "
                f"SELECT pg_try_advisory_xact_lock({key}), "
                "extract(epoch FROM pg_postmaster_start_time())::text",
                deadline,
            )
            locked, incarnation = results[-1].get_value(0, 0), results[-1].get_value(0, 1)
            if locked != b"t" or incarnation is None:
                raise LockLostError()
            return bytes(incarnation).decode()
        except BaseException:
            self.close()
            raise

    def check(self, timeout: float) -> None:
        """One round trip on the session within ``timeout`` seconds; LockLostError if not."""
        conn = self._conn
        if conn is None:
            raise LockLostError()
        try:
            round_trip(conn, "SELECT 1", time.monotonic() + timeout)
        except BaseException:
            self.close()
            raise
        if conn.transaction_status != pq.TransactionStatus.INTRANS:
            self.close()  # the transaction, and with it the lock, is gone
            raise LockLostError()

    @property
    def backend_pid(self) -> int | None:
        """The server process holding the lock (what ``pg_terminate_backend`` takes)."""
        return None if self._conn is None else int(self._conn.backend_pid)

    @property
    def descriptor(self) -> int | None:
        """The socket, for a forked child to let go of (see ``forget_after_fork``)."""
        if self._conn is None or self._conn.status != pq.ConnStatus.OK:
            return None
        return int(self._conn.socket)

    def forget_after_fork(self) -> None:
        """In a forked child: drop this process's hold on the socket without a word to the server.

        The descriptor is pointed at /dev/null, so the parent's session (and
        its lock) ends when the parent dies, and nothing the child does later
        (a close, the garbage collector) can end the parent's session early.
        """
        descriptor = self.descriptor
        if descriptor is not None:
            neuter_descriptor(descriptor)
        self._conn = None

    def release(self, timeout: float) -> None:
        """Let go of the lock now, then close: the transaction holding it is rolled back and
        the answer waited for (within ``timeout``), so another session can take the lock the
        moment this returns. Closing alone leaves the server to end the session when it
        gets to it, a moment later."""
        conn = self._conn
        if conn is not None:
            with contextlib.suppress(LockLostError):
                round_trip(conn, "ROLLBACK", time.monotonic() + timeout)
        self.close()

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.finish()  # ending the session ends the transaction and its lock


def safe_runner_id(runner_id: str) -> None:
    """ValueError unless ``runner_id`` can stand in a statement as a literal as it is."""
    if not _SAFE_ID.fullmatch(runner_id):
        raise ValueError("a runner id is letters, digits, '-' and '_'")
