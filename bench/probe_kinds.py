"""A kind for cross-process pickup latency: the handler stamps when it started."""

from __future__ import annotations

import time
from typing import Any

import attrs

from jobtable.core import JobContext


@attrs.frozen
class Stamp:
    pass


@attrs.frozen
class Started:
    at: float

    def public(self) -> dict[str, Any]:
        return {"at": self.at}


def probe(ctx: JobContext, payload: Stamp) -> Started:
    return Started(at=time.time())


def register(kinds: Any) -> Any:
    return kinds.register("probe", probe, payload=Stamp)
