"""libpq's non-blocking calls, each with a deadline, for the sessions that hold runners'
liveness locks (lock_session.py, shared_session.py): a check never hangs on a silent
network, and fails as ``LockLostError``.
"""

from __future__ import annotations

import os
import select
import time

from psycopg import pq

from jobtable.core.errors import StoreUnavailableError


class LockLostError(StoreUnavailableError):
    """The lock session ended, or its check missed its deadline."""

    def __init__(self) -> None:
        super().__init__("database unavailable")


def neuter_descriptor(descriptor: int) -> None:
    """Point ``descriptor`` at /dev/null: this process lets go of the socket it was."""
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        os.dup2(devnull, descriptor)
    finally:
        os.close(devnull)


def _wait(descriptor: int, *, write: bool, deadline: float) -> None:
    left = deadline - time.monotonic()
    if left <= 0:
        raise LockLostError()
    poller = select.poll()  # poll, not select: no limit on the descriptor's number
    poller.register(descriptor, select.POLLOUT if write else select.POLLIN)
    if not poller.poll(left * 1000):
        raise LockLostError()


def open_connection(conninfo: bytes, deadline: float) -> pq.abc.PGconn:
    conn = pq.PGconn.connect_start(conninfo)
    try:
        if conn.status == pq.ConnStatus.BAD:
            raise LockLostError()
        while True:
            status = conn.connect_poll()
            if status == pq.PollingStatus.OK:
                conn.nonblocking = 1
                return conn
            if status == pq.PollingStatus.FAILED:
                raise LockLostError()
            _wait(conn.socket, write=status == pq.PollingStatus.WRITING, deadline=deadline)
    except BaseException:
        conn.finish()
        raise


def round_trip(conn: pq.abc.PGconn, sql: str, deadline: float) -> list[pq.abc.PGresult]:
    """Send ``sql`` (simple protocol: several statements allowed) and read every result."""
    try:
        conn.send_query(sql.encode("utf-8"))
        while conn.flush():
            _wait(conn.socket, write=True, deadline=deadline)
        results = []
        while True:
            while conn.is_busy():
                _wait(conn.socket, write=False, deadline=deadline)
                conn.consume_input()
            result = conn.get_result()
            if result is None:
                break
            results.append(result)
    except LockLostError:
        raise
    except Exception:
        raise LockLostError() from None
    good = (pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK)
    if not results or any(result.status not in good for result in results):
        raise LockLostError()
    return results


def synced(conn: pq.abc.PGconn, deadline: float) -> None:
    """A round trip that starts no transaction: a Sync alone, which the server answers with
    ReadyForQuery (``pg_stat_database`` counts none); LockLostError if it fails or is late."""
    try:
        conn.enter_pipeline_mode()
        try:
            conn.pipeline_sync()
            while conn.flush():
                _wait(conn.socket, write=True, deadline=deadline)
            while True:
                while conn.is_busy():
                    _wait(conn.socket, write=False, deadline=deadline)
                    conn.consume_input()
                result = conn.get_result()
                if result is None:  # nothing yet: wait for it, within the deadline
                    _wait(conn.socket, write=False, deadline=deadline)
                    conn.consume_input()
                    continue
                if result.status == pq.ExecStatus.PIPELINE_SYNC:
                    break
                raise LockLostError()
        finally:
            if conn.pipeline_status != pq.PipelineStatus.OFF:
                conn.exit_pipeline_mode()
    except LockLostError:
        raise
    except Exception:
        raise LockLostError() from None
    if conn.status != pq.ConnStatus.OK or conn.transaction_status != pq.TransactionStatus.IDLE:
        raise LockLostError()


def readable(conn: pq.abc.PGconn, timeout: float) -> bool:
    """Whether the session has something to read (or has ended) within ``timeout``."""
    try:
        descriptor = conn.socket
    except Exception:
        return True  # no socket: consume_input will say the session ended
    poller = select.poll()
    poller.register(descriptor, select.POLLIN)
    return bool(poller.poll(timeout * 1000))
