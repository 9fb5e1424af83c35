"""Kinds for bench/spread.py: a job that takes a set time and says which process ran it."""

from __future__ import annotations

import os
import time
from typing import Any

import attrs

from jobtable.core import JobContext


@attrs.frozen
class Nap:
    seconds: float = 2.0


@attrs.frozen
class Ran:
    pid: int
    started: float

    def public(self) -> dict[str, Any]:
        return {"pid": self.pid, "started": self.started}


def nap(ctx: JobContext, payload: Nap) -> Ran:
    started = time.time()
    ctx.wait(payload.seconds)
    return Ran(pid=os.getpid(), started=started)


def register(kinds: Any) -> Any:
    return kinds.register("nap", nap, payload=Nap)
