"""Server-Sent Events of a job's changes: in order, resumable, ending after its final state.

One definition of the wire format for every stream of job events. Each
change is an event ``job`` whose ``id:`` is the job's version and whose data
is the job's five keys; ``reset`` carries the current state when the changes
after the reader's ``Last-Event-ID`` are no longer all kept. A comment line
every ``KEEP_ALIVE`` seconds keeps proxies from closing a quiet stream and
finds a reader that has gone.

Each open stream, and each long-poll while it waits, holds one of
waitress's threads until it ends, so they take a slot first
(``StreamSlots``; none free: 503 with ``Retry-After``). The server runs them
(``may_wait`` tells them from the rest) on threads of their own, one per
slot, apart from the ``--http-threads`` of ordinary requests: neither takes
the other's threads (see ``entrypoints/http_pools.py``).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Generator, Mapping

from jobtable.core import Runner, StoreError
from jobtable.core.job_history import JobEvent
from jobtable.entrypoints.http import json_text

KEEP_ALIVE = 15.0
"""Seconds between comment lines on a stream with nothing to say."""
RECONNECT_MS = 1000
"""How long a browser's EventSource waits before it resumes a stream that ended early."""
DEFAULT_STREAM_SLOTS = 100
MEDIA_TYPE = "text/event-stream"

_log = logging.getLogger("jobtable.http")
_WAITING = re.compile(r"/+(?:api/+v1|ui)/+jobs/+[^/]+(?P<events>/+events)?/*")


def may_wait(method: str, path: str, headers: Mapping[str, str]) -> bool:
    """Whether a request may wait for a job: a GET of its events (the API's or the
    dashboard's), or of the job with ``If-None-Match`` and ``Prefer`` (``headers`` by
    waitress's names). The server runs these on the stream threads; a few others sorted
    so cost nothing but where they run."""
    found = _WAITING.fullmatch(path) if method == "GET" else None
    if found is None:
        return False
    return bool(found.group("events")) or ("IF_NONE_MATCH" in headers and "PREFER" in headers)


class StreamSlots:
    """How many event streams and long-polls may wait at once; one that finds none answers
    503."""

    def __init__(self, limit: int = DEFAULT_STREAM_SLOTS) -> None:
        if limit < 1:
            raise ValueError("at least one stream slot")
        self.limit = limit
        self._free = threading.BoundedSemaphore(limit)

    def take(self) -> bool:
        return self._free.acquire(blocking=False)

    def release(self) -> None:
        self._free.release()


def resume_point(last_event_id: str | None, after: str | None) -> int | None:
    """The version a reader has seen: ``Last-Event-ID`` (a browser resuming) before ``after``
    (a page that was drawn at that version); None for all. Raises ValueError for anything but
    a whole number."""
    value = last_event_id if last_event_id is not None else after
    if value is None or value == "":
        return None
    if not value.isascii() or not value.isdigit() or len(value) > 18:
        raise ValueError("not a version")
    return int(value)


def frame(name: str, event: JobEvent) -> bytes:
    """One event; JSON text has no line breaks, so the data is one ``data:`` line."""
    data = json_text.dumps(event.job.to_public())
    return f"id: {event.version}\nevent: {name}\ndata: {data}\n\n".encode()


class JobEventStream:
    """The body of one job's stream, for ``resp.stream``: the WSGI server iterates it and
    calls ``close`` when the reader goes; ``on_close`` runs once, however it ends."""

    def __init__(
        self,
        runner: Runner,
        job_id: str,
        after: int | None,
        *,
        on_close: Callable[[], None] = lambda: None,
        keep_alive: float = KEEP_ALIVE,
    ) -> None:
        self._runner = runner
        self._job_id = job_id
        self._after = after
        self._keep_alive = keep_alive
        self._on_close: Callable[[], None] | None = on_close
        self._frames = self._generate()

    def __iter__(self) -> JobEventStream:
        return self

    def __next__(self) -> bytes:
        try:
            return next(self._frames)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self._frames.close()
        done, self._on_close = self._on_close, None
        if done is not None:
            done()

    def _generate(self) -> Generator[bytes, None, None]:
        yield f"retry: {RECONNECT_MS}\n\n".encode()
        changes = self._runner.changes
        after = self._after
        with changes.subscribe(self._job_id) as subscription:  # before reading: no change missed
            while True:
                try:
                    found = self._runner.events(self._job_id, after)
                    ended = found is None or (found.last is None and self._finished_at(after))
                except StoreError as error:
                    _log.warning("event stream ended: %s job=%s", error.category, self._job_id)
                    return  # the reader resumes with Last-Event-ID
                except Exception as error:  # a bug: named by type only, its text may hold data
                    _log.error("event stream ended: unexpected %s job=%s",
                               type(error).__name__, self._job_id)  # fmt: skip
                    return
                if found is None:
                    return  # gone (pruned)
                frames = [frame("job", event) for event in found.events]
                if found.reset is not None:
                    frames.insert(0, frame("reset", found.reset))
                if frames:
                    yield b"".join(frames)  # one write, however many changes
                last = found.last
                if last is not None:
                    after = last.version
                    if last.job.status.finished:
                        return
                elif ended:
                    return
                if changes.closed:
                    return  # the server is stopping; the browser resumes elsewhere
                if not subscription.wait(self._keep_alive):
                    yield b": keep-alive\n\n"

    def _finished_at(self, after: int | None) -> bool:
        """Nothing came after ``after``: has the job ended there (or gone)?"""
        job = self._runner.get(self._job_id)
        if job is None:
            return True
        return job.status.finished and (after is None or job.version <= after)
