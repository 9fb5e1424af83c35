"""Kinds for the dashboard's browser test: handlers that take each step only when the test says.

The server runs in the test's process, so a handler waits on a ``StepGate``
the test holds: ``allow(job_id)`` lets it publish its next step. A handler
told to stop (a cancel) gives up at once.
"""

from __future__ import annotations

import threading

import attrs

from jobtable import Failure, JobContext
from tests.support.markup_kind import register_markup_kind


class Stopped(Exception):
    """The handler was told to stop while it waited for its next step."""


class StepGate:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._allowed: dict[str, int] = {}

    def allow(self, job_id: str, steps: int = 1) -> None:
        with self._lock:
            self._allowed[job_id] = self._allowed.get(job_id, 0) + steps

    def take(self, ctx: JobContext) -> None:
        """Wait until the test allows one more step of this job; raise Stopped if told to stop."""
        while True:
            with self._lock:
                if self._allowed.get(ctx.job_id, 0) > 0:
                    self._allowed[ctx.job_id] -= 1
                    return
            if ctx.wait(0.02):
                raise Stopped


@attrs.frozen
class Steps:
    total: int


@attrs.frozen
class Progress:
    done: int
    total: int

    def public(self):
        return {"done": self.done, "total": self.total}


def register(kinds, gate: StepGate, *, markup: bool = False) -> None:
    def progress(ctx: JobContext, payload: Steps) -> Progress:
        for done in range(1, payload.total + 1):
            gate.take(ctx)
            if done < payload.total:
                ctx.publish(Progress(done=done, total=payload.total))
        return Progress(done=payload.total, total=payload.total)

    def flaky(ctx: JobContext, payload: Steps) -> Progress:
        """Fails its first attempt; a retried one runs step by step like ``progress``."""
        if ctx.attempt == 1:
            raise Failure("flaky")
        return progress(ctx, payload)

    kinds.register("progress", progress, payload=Steps)
    kinds.register("flaky", flaky, payload=Steps, failure_codes=["flaky"])
    if markup:
        register_markup_kind(kinds)
