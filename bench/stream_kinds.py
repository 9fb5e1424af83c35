"""A kind for stream latency: each partial result carries the wall-clock time it was published."""

from __future__ import annotations

import time
from typing import Any

import attrs

from jobtable.core import JobContext


@attrs.frozen
class Publish:
    count: int
    gap: float
    """Seconds between publishes: each is timed alone, not in a burst."""
    start_after: float
    """Seconds before the first: the reader's stream is open by then."""


@attrs.frozen
class Sent:
    n: int
    at: float

    def public(self) -> dict[str, Any]:
        return {"n": self.n, "at": self.at}


def publisher(ctx: JobContext, payload: Publish) -> Sent:
    ctx.wait(payload.start_after)
    for n in range(1, payload.count + 1):
        ctx.publish(Sent(n=n, at=time.time()))
        ctx.wait(payload.gap)
    return Sent(n=0, at=time.time())


def register(kinds: Any) -> Any:
    return kinds.register("publisher", publisher, payload=Publish)
