"""A job's changes as Server-Sent Events, and the slots that bound long-lived requests.

waitress gives each request one of its threads until the response ends, so
an open stream or a long-poll holds a thread for minutes. The server runs
those requests (``may_wait`` sorts them out) on threads of their own, one
per ``--http-stream-slots``, apart from the ``--http-threads`` of ordinary
requests; each stream and long-poll first takes a slot (none free: 503 with
``Retry-After``), so waiting requests never hold more threads than they
have, and ordinary requests always keep theirs.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
from collections.abc import Callable, Iterator, Mapping

import attrs

from jobtable.core import Job, Runner, StoreError
from jobtable.core.changes import Subscription
from jobtable.core.jobs import JobEvent, JobEvents
from jobtable.entrypoints.http import json_text
from jobtable.entrypoints.http.errors import api_error

DEFAULT_STREAM_SLOTS = 100
KEEP_ALIVE = 15.0
"""Seconds between comments on a quiet stream: proxies keep it open, and a client that
left is noticed (the write fails) and its slot freed."""
RETRY_MS = 1000
"""How long an EventSource waits before it reconnects (with Last-Event-ID)."""
CONTENT_TYPE = "text/event-stream"
"""Always UTF-8, as the format requires."""


_JOB = re.compile(r"/+api/+v1/+jobs/+[^/]+(?P<events>/+events)?/*")


def may_wait(method: str, path: str, headers: Mapping[str, str]) -> bool:
    """Whether a request may wait for a job: a GET of its events, or of the job with
    ``If-None-Match`` and ``Prefer`` (``headers`` by waitress's names). The server runs
    these on the stream threads; a few others sorted so cost nothing but where they run."""
    found = _JOB.fullmatch(path) if method == "GET" else None
    if found is None:
        return False
    return bool(found.group("events")) or ("IF_NONE_MATCH" in headers and "PREFER" in headers)


class StreamSlots:
    """How many event streams and long-polls may hold a server thread at once."""

    def __init__(self, count: int) -> None:
        if count < 1:
            raise ValueError("StreamSlots needs at least one slot")
        self.count = count
        self._lock = threading.Lock()
        self._used = 0

    @property
    def in_use(self) -> int:
        with self._lock:
            return self._used

    def take(self) -> Callable[[], None]:
        """A slot, and the call that gives it back (once, however often called); 503
        ``unavailable`` with ``Retry-After: 1`` when every slot is in use."""
        with self._lock:
            if self._used >= self.count:
                raise api_error(
                    503,
                    "unavailable",
                    "every stream slot is in use; try again shortly",
                    **{"Retry-After": "1"},
                )
            self._used += 1
        given_back = threading.Event()

        def give_back() -> None:
            with self._lock:
                if not given_back.is_set():
                    given_back.set()
                    self._used -= 1

        return give_back

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        give_back = self.take()
        try:
            yield
        finally:
            give_back()


def event_kind(previous: Job | None, current: Job) -> str:
    """``status`` when the status changed (or the state before is unknown), else ``progress``
    (a new partial result)."""
    if previous is None or previous.status != current.status:
        return "status"
    return "progress"


def sse_event(kind: str, event: JobEvent) -> bytes:
    """One event: its version as the id, the job's five keys as one line of JSON."""
    data = json_text.dumps(event.job.to_public())
    return f"id: {event.version}\nevent: {kind}\ndata: {data}\n\n".encode()


@attrs.define
class Position:
    """Where a stream stands: the last version sent, and the job's state at it."""

    version: int | None = None
    job: Job | None = None

    @property
    def finished(self) -> bool:
        return self.job is not None and self.job.status.finished

    def render(self, found: JobEvents) -> bytes:
        """The events ``found`` holds, a reset first if any; the position moves past them."""
        chunks = []
        if found.reset is not None:
            chunks.append(sse_event("reset", found.reset))
            self._move(found.reset)
        for event in found.events:
            chunks.append(sse_event(event_kind(self.job, event.job), event))
            self._move(event)
        return b"".join(chunks)

    def _move(self, event: JobEvent) -> None:
        self.version, self.job = event.version, event.job


class JobEventStream:
    """The WSGI body of one stream: what was found at the start, then each change as it
    comes, until the job finishes, is gone, or the server stops.

    waitress calls ``close`` when the response ends for any reason (the client
    left, the stream ended, the server stopped), even if the body was never
    read: the subscription and the slot are given back there.
    """

    def __init__(
        self,
        runner: Runner,
        subscription: Subscription,
        position: Position,
        first: bytes,
        *,
        release: Callable[[], None],
        keep_alive: float,
        logger: logging.Logger,
    ) -> None:
        self._runner = runner
        self._subscription = subscription
        self._position = position
        self._first = first
        self._release = release
        self._keep_alive = keep_alive
        self._log = logger
        self._body: Iterator[bytes] | None = None

    def __iter__(self) -> Iterator[bytes]:
        self._body = self._changes()
        return self._body

    def close(self) -> None:
        try:
            if self._body is not None:
                self._body.close()  # type: ignore[attr-defined]
        finally:
            self._subscription.__exit__(None, None, None)
            self._release()

    def _changes(self) -> Iterator[bytes]:
        yield f"retry: {RETRY_MS}\n\n".encode() + self._first
        changes = self._runner.changes
        job_id = self._subscription.job_id
        while not self._position.finished:
            poked = self._subscription.wait(self._keep_alive)
            if changes.closed:
                return  # the server is stopping: the client reconnects elsewhere
            if not poked:
                yield b": keep-alive\n\n"
            # Read on every wake-up, a quiet one too: a notice that never came costs
            # at most one keep-alive interval, never a stalled stream.
            try:
                found = self._runner.events(job_id, self._position.version)
            except StoreError as error:
                self._log.warning("event stream ended: %s job=%s", error.category, job_id)
                return  # the client reconnects with Last-Event-ID
            except Exception as error:  # a bug: named by type only, its text may hold data
                self._log.error("event stream ended: unexpected %s job=%s",
                                type(error).__name__, job_id)  # fmt: skip
                return
            if found is None:
                return  # deleted (pruned) meanwhile
            chunk = self._position.render(found)
            if chunk:
                yield chunk
