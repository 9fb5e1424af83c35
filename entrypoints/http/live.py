"""Following a job without polling: GET with an ETag and long-poll, and its event stream.

Both subscribe to the job's changes before they read it, so a change between
the read and the wait wakes the wait: nothing is missed. Both hold a stream
slot while they wait (see ``streams``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator

import falcon

from jobtable.core import Job, Runner
from jobtable.entrypoints.http import json_text
from jobtable.entrypoints.http.conditional import etag, none_match, wait_preference
from jobtable.entrypoints.http.errors import api_error
from jobtable.entrypoints.http.operations import JOB_NOT_FOUND
from jobtable.entrypoints.http.streams import (
    KEEP_ALIVE,
    MEDIA_TYPE,
    JobEventStream,
    StreamSlots,
    resume_point,
)


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
        resp.text = json_text.dumps(job.to_public())  # as resp.media, without its handler look-up

    def _wait_for_change(self, job_id: str, seen: list[str], seconds: int) -> Job:
        deadline = time.monotonic() + seconds
        with held(self._slots), self._runner.changes.subscribe(job_id) as subscription:
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

    def __init__(self, runner: Runner, slots: StreamSlots, *, keep_alive: float = KEEP_ALIVE):
        self._runner = runner
        self._slots = slots
        self._keep_alive = keep_alive

    def on_get(self, req: falcon.Request, resp: falcon.Response, job_id: str) -> None:
        try:
            after = resume_point(req.get_header("Last-Event-ID"), req.get_param("last_event_id"))
        except ValueError:
            raise api_error(
                400, "invalid_option", "last_event_id: must be an event id this stream sent"
            ) from None
        job = self._runner.get(job_id)
        if job is None:
            raise api_error(404, *JOB_NOT_FOUND)
        if after == job.version and job.status.finished:
            # Resumed at the final state: 204 tells an EventSource not to reconnect.
            resp.status = falcon.HTTP_204
            return
        resp.content_type = MEDIA_TYPE
        resp.set_header("X-Accel-Buffering", "no")  # a buffering proxy (nginx) passes each event on
        resp.stream = JobEventStream(
            self._runner,
            job_id,
            after,
            on_close=take(self._slots),
            keep_alive=self._keep_alive,
        )


def take(slots: StreamSlots) -> Callable[[], None]:
    """A slot, and the call that gives it back; 503 ``unavailable`` with ``Retry-After: 1``
    when every slot is taken."""
    if not slots.take():
        raise api_error(
            503,
            "unavailable",
            "every stream slot is in use; try again shortly",
            **{"Retry-After": "1"},
        )
    return slots.release


@contextlib.contextmanager
def held(slots: StreamSlots) -> Iterator[None]:
    release = take(slots)
    try:
        yield
    finally:
        release()
