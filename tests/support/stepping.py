"""A kind whose handler publishes one partial result each time the test lets it.

Every change of its job is then the test's doing: a stream or long-poll can be
checked change by change, with no sleeping. A handler not let go within its
``patience`` fails ``unacknowledged``: a test that lets it go only after it saw
the previous change then fails (instead of passing slowly) should changes be
seen late.
"""

from __future__ import annotations

import threading

import attrs

from jobtable.core import Failure, JobContext, KindRegistry


@attrs.frozen
class Steps:
    steps: int


@attrs.frozen
class Count:
    done: int

    def public(self) -> dict:
        return {"done": self.done}


class Stepper:
    """Registers ``name``: a job of ``Steps(n)`` publishes 1..n, one per ``step()``, then
    returns on one more."""

    def __init__(self, kinds: KindRegistry, *, name: str = "steps", patience: float = 30.0):
        self._permits = threading.Semaphore(0)
        self._patience = patience
        self.kind = kinds.register(name, self._run, payload=Steps, failure_codes=["unacknowledged"])

    def step(self, times: int = 1) -> None:
        self._permits.release(times)

    def _run(self, ctx: JobContext, payload: Steps) -> Count:
        for done in range(1, payload.steps + 1):
            self._wait()
            ctx.publish(Count(done=done))
        self._wait()
        return Count(done=payload.steps)

    def _wait(self) -> None:
        if not self._permits.acquire(timeout=self._patience):
            raise Failure("unacknowledged")
