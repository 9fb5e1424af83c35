"""The demo kind ``countdown``: progress, a result and a failure code within a minute.

Load it with ``jobtable serve --kinds jobtable.core.demo``. A job with payload
``{"seconds": N}`` publishes ``{"remaining": n}`` each second and succeeds
with ``{"remaining": 0, "counted": N}``; a negative N fails it with the
declared code ``negative_seconds``, and more than an hour with ``too_long``.
It may run three times: one stopped part way (a deploy, a crash) resumes
from its last published ``remaining`` (``ctx.checkpoint``) instead of
counting from the start again.
"""

from __future__ import annotations

from typing import Any

import attrs

from jobtable.core.context import JobContext
from jobtable.core.errors import Failure
from jobtable.core.kind_handle import Kind
from jobtable.core.kinds import KindRegistry

COUNTDOWN = "countdown"
MAX_SECONDS = 3600


@attrs.frozen
class CountdownPayload:
    seconds: int


@attrs.frozen
class Countdown:
    remaining: int
    counted: int | None = None

    def public(self) -> dict[str, Any]:
        if self.counted is None:
            return {"remaining": self.remaining}
        return {"remaining": self.remaining, "counted": self.counted}


class StoppedError(RuntimeError):
    """The runner is stopping: the job stays running and the next start marks it."""


def countdown(ctx: JobContext, payload: CountdownPayload) -> Countdown:
    if payload.seconds < 0:
        raise Failure("negative_seconds")
    if payload.seconds > MAX_SECONDS:
        raise Failure("too_long")
    start = payload.seconds
    if ctx.checkpoint is not None:  # an earlier attempt got this far
        start = min(start, int(ctx.checkpoint["remaining"]))
    for remaining in range(start, 0, -1):
        ctx.publish(Countdown(remaining=remaining))
        if ctx.wait(1.0):
            raise StoppedError("stopped")
    return Countdown(remaining=0, counted=payload.seconds)


def register(kinds: KindRegistry) -> Kind[CountdownPayload]:
    return kinds.register(
        COUNTDOWN,
        countdown,
        payload=CountdownPayload,
        failure_codes=["negative_seconds", "too_long"],
        max_attempts=3,
    )
