"""Following a job without polling: GET with an ETag and long-poll, and its event stream.

Both subscribe to the job's changes before they read it, so a change between
the read and the wait wakes the wait: nothing is missed. Both hold a stream
slot while they wait (see ``streams``).
"""

from __future__ import annotations

import logging
import re
import time

import falcon

from jobtable.core import Job, Runner, Status
from jobtable.core.jobs import JobEvents
from jobtable.entrypoints.http.conditional import etag, none_match, wait_preference
from jobtable.entrypoints.http.errors import api_error
from jobtable.entrypoints.http.operations import JOB_NOT_FOUND
from jobtable.entrypoints.http.streams import (
    CONTENT_TYPE,
    KEEP_ALIVE,
    JobEventStream,
    Position,
    StreamSlots,
)

_EVENT_ID = re.compile(r"[0-9]{1,18}", re.ASCII)


class JobResource:
    """GET a job, with its version as a strong ETag; ``If-None-Match`` answers 304 while
    it is unchanged, and with ``Prefer: wait=N`` waits up to N s (at most 60) for a change."""

    def __init__(self, runner: Runner, slots: StreamSlots) -> None:
        self._runner = runner
        self._slots = slots

    def on_get(self, req: falcon.Request, resp: falcon.Response, job_id: str) -> None:
        job = self._read(job_id)
        seen = req.if_none_match
        wait = wait_preference(req.get_header("Prefer")) if seen else None
        if wait is not None:
            if wait > 0 and none_match(seen, job.version):
                job = self._wait_for_change(job_id, seen, wait)
            resp.set_header("Preference-Applied", f"wait={wait}")
        resp.set_header("ETag", etag(job.version))
        if none_match(seen, job.version):
            resp.status = falcon.HTTP_304
            return
        resp.media = job.to_public()

    def _wait_for_change(self, job_id: str, seen: list[str], seconds: int) -> Job:
        deadline = time.monotonic() + seconds
        with self._slots.held(), self._runner.changes.subscribe(job_id) as subscription:
            while True:
                job = self._read(job_id)
                left = deadline - time.monotonic()
                if not none_match(seen, job.version) or left <= 0 or self._runner.changes.closed:
                    return job
                subscription.wait(left)

    def _read(self, job_id: str) -> Job:
        job = self._runner.get(job_id)
        if job is None:
            raise api_error(404, *JOB_NOT_FOUND)
        return job


class JobEventsResource:
    """GET a job's changes as Server-Sent Events, from ``Last-Event-ID`` (or the
    ``last_event_id`` parameter) on, until it finishes."""

    def __init__(
        self,
        runner: Runner,
        slots: StreamSlots,
        *,
        keep_alive: float = KEEP_ALIVE,
        logger: logging.Logger | None = None,
    ) -> None:
        self._runner = runner
        self._slots = slots
        self._keep_alive = keep_alive
        self._log = logger or logging.getLogger("jobtable.http")

    def on_get(self, req: falcon.Request, resp: falcon.Response, job_id: str) -> None:
        after = last_event_id(req)
        known = self._runner.get(job_id)
        if known is None:
            raise api_error(404, *JOB_NOT_FOUND)
        release = self._slots.take()
        subscription = self._runner.changes.subscribe(job_id)

        def give_back() -> None:
            subscription.__exit__(None, None, None)
            release()

        try:
            position, found = self._opening(job_id, after, known)
        except BaseException:
            give_back()
            raise
        if found is None or (after is not None and _nothing_more(known, after, found)):
            give_back()
            if found is None:
                raise api_error(404, *JOB_NOT_FOUND)
            # Resumed at the final state: 204 tells an EventSource not to reconnect.
            resp.status = falcon.HTTP_204
            return
        resp.content_type = CONTENT_TYPE
        resp.set_header("X-Accel-Buffering", "no")  # a buffering proxy (nginx) passes each event on
        resp.stream = JobEventStream(
            self._runner,
            subscription,
            position,
            position.render(found),
            release=release,
            keep_alive=self._keep_alive,
            logger=self._log,
        )

    def _opening(
        self, job_id: str, after: int | None, known: Job
    ) -> tuple[Position, JobEvents | None]:
        """Where the stream starts, and what it sends first (None: the job is gone)."""
        if after is None:
            return Position(), self._runner.events(job_id)
        if after == 0:
            return Position(version=0, job=_as_created(known)), self._runner.events(job_id, 0)
        # One change more than asked, to know the state the client has: the first
        # event then says whether the status changed or only the result.
        found = self._runner.events(job_id, after - 1)
        if found is not None and found.events and found.events[0].version == after:
            seen, *rest = found.events
            return Position(version=after, job=seen.job), JobEvents(events=tuple(rest))
        return Position(version=after), self._runner.events(job_id, after)


def _nothing_more(known: Job, after: int, found: JobEvents) -> bool:
    """The client has the job's final state already: nothing will follow."""
    return (
        not found.events
        and found.reset is None
        and known.status.finished
        and known.version == after
    )


def _as_created(job: Job) -> Job:
    return Job(id=job.id, kind=job.kind, status=Status.QUEUED, result=None, error=None)


def last_event_id(req: falcon.Request) -> int | None:
    """The version the client saw last: the header an EventSource sends when it
    reconnects, else the query parameter; 400 ``invalid_option`` if not a whole number."""
    value = req.get_header("Last-Event-ID") or req.params.get("last_event_id")
    if not value:
        return None
    if not isinstance(value, str) or not _EVENT_ID.fullmatch(value.strip()):
        raise api_error(
            400, "invalid_option", "last_event_id: must be an event id this stream sent"
        )
    return int(value.strip())
