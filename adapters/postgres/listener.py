"""Wake idle workers when any process enqueues on PostgreSQL: LISTEN/NOTIFY, with a fallback.

Every enqueue (and every requeue) sends ``NOTIFY`` on the store's channel in
its own transaction, so it is delivered at commit. Where the runners' locks
need a session of their own (behind a pooler, or on PostgreSQL 13 and older),
one thread per process listens on a connection of its own and reconnects,
with backoff, when that connection drops (elsewhere the shared session
listens: shared_session.py). A notification can still be lost in the gap before a
reconnect (the listener looks once it listens again), or when the enqueue's
own NOTIFY fails after its commit, so the listener also calls ``on_notify``
every FALLBACK_INTERVAL: an idle worker then looks once, and a lost
notification costs at most that. Rare, so the interval is long: each look is
a transaction or two, and an idle runner makes at most one a second.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import psycopg

from jobtable.core.backoff import next_claim_retry_delay

FALLBACK_INTERVAL = 60.0
STOP_CHECK_INTERVAL = 0.25
"""The longest one wait for notifications lasts before the stop flag is checked again."""


class NotifyListener:
    def __init__(
        self,
        connect: Callable[[], psycopg.Connection],
        channel: str,
        on_notify: Callable[[], None],
        *,
        fallback_interval: float = FALLBACK_INTERVAL,
        logger: logging.Logger | None = None,
    ) -> None:
        self._connect = connect
        self._channel = channel
        self._on_notify = on_notify
        self._fallback = fallback_interval
        self._log = logger or logging.getLogger("jobtable.postgres")
        self._stop = threading.Event()
        self._listening = threading.Event()
        self._thread = threading.Thread(target=self._run, name="jobtable-listener", daemon=True)
        self.connection: psycopg.Connection | None = None
        """The connection listening now, for a forked child to let go of."""

    def start(self) -> NotifyListener:
        """Start listening; returns once LISTEN is in place (or the first try failed)."""
        self._thread.start()
        self._listening.wait(10.0)
        return self

    def stop(self) -> None:
        """Stop listening; returns within about STOP_CHECK_INTERVAL.

        A wait for notifications cannot be interrupted from another thread
        (a cancel request finds no query to cancel), so the wait is cut into
        short slices that check the stop flag.
        """
        self._stop.set()
        self._thread.join(5.0)

    def _run(self) -> None:
        delay: float | None = None
        while not self._stop.is_set():
            try:
                self._listen()
                delay = None
            except Exception as error:
                self._listening.set()
                if self._stop.is_set():
                    break
                delay = next_claim_retry_delay(delay)
                self._log.warning(
                    "listening for new jobs failed (%s); reconnecting in %.2fs",
                    type(error).__name__,
                    delay,
                )
                self._look(None)  # something may have been queued meanwhile
                self._stop.wait(delay)

    def _listen(self) -> None:
        with self._connect() as conn:
            self.connection = conn
            conn.execute(f'LISTEN "{self._channel}"')
            if self._listening.is_set():
                self._look(None)  # listening again: what changed while it was not went unheard
            self._listening.set()
            looked = time.monotonic()
            while not self._stop.is_set():
                for notify in conn.notifies(timeout=STOP_CHECK_INTERVAL, stop_after=1):
                    self._look(notify.payload)
                if time.monotonic() - looked >= self._fallback:
                    # Every few seconds, whatever was heard: a notice lost on the way (and
                    # notices about other jobs do not stand in for one about this one).
                    looked = time.monotonic()
                    self._look(None)

    def _look(self, payload: str | None) -> None:
        """A notification (its payload) or a fallback (None): new jobs may be there."""
        self._on_notify()


class EventListener(NotifyListener):
    """Tells ``on_change`` which jobs changed, from the job ids each NOTIFY of the events
    channel carries (the jobs_changed trigger sends those one statement changed, space
    separated); None after a reconnect or a quiet fallback interval, when any job may
    have changed unheard."""

    def __init__(
        self,
        connect: Callable[[], psycopg.Connection],
        channel: str,
        on_change: Callable[[str | None], None],
        *,
        fallback_interval: float = FALLBACK_INTERVAL,
    ) -> None:
        super().__init__(connect, channel, lambda: None, fallback_interval=fallback_interval)
        self._on_change = on_change

    def _look(self, payload: str | None) -> None:
        tell_changed_jobs(self._on_change, payload)


def tell_changed_jobs(on_change: Callable[[str | None], None], payload: str | None) -> None:
    """Each job id an events NOTIFY's payload names, or None for an empty one or a look."""
    if not payload:
        on_change(None)
        return
    for job_id in payload.split():
        on_change(job_id)


class PollingWatcher:
    """Calls ``on_change`` every ``interval`` seconds: wakes where LISTEN cannot work.

    Behind PgBouncer in transaction mode a LISTEN lands on a server
    connection that is handed to other clients after each transaction, so
    notifications never arrive; an idle worker then looks this often.
    """

    def __init__(
        self,
        on_change: Callable[[], None],
        *,
        interval: float,
        logger: logging.Logger | None = None,
    ) -> None:
        self._on_change = on_change
        self._interval = interval
        self._log = logger or logging.getLogger("jobtable.postgres")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="jobtable-poller", daemon=True)
        self.connection: psycopg.Connection | None = None

    def start(self) -> PollingWatcher:
        self._log.info(
            "behind a transaction pooler with no direct URL to LISTEN on: looking for jobs "
            "queued by other processes every %.1fs (give --postgres-listen-url for instant wakes)",
            self._interval,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5.0)

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self._on_change()
