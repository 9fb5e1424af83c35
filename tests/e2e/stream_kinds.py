"""A kind for streams across processes: each step waits for the test's acknowledgement.

Before its k-th step (publish k, or return after the last) the handler waits for
the file ``<JOBTABLE_TEST_ACKS>/<job id>.<k>``, which the test writes once its
stream showed the change before. Past 10 s (under the streams' 15 s keep-alive,
when a stream looks again anyway) it fails ``unacknowledged``: only change
notices crossing the processes make it succeed.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from jobtable.core import Failure, JobContext
from tests.support.stepping import Count, Steps

PATIENCE = 10.0


def acknowledged(folder: Path, job_id: str, step: int) -> Path:
    return folder / f"{job_id}.{step}"


def _wait_for(ctx: JobContext, step: int) -> None:
    deadline = time.monotonic() + PATIENCE
    folder = Path(os.environ["JOBTABLE_TEST_ACKS"])
    while not acknowledged(folder, ctx.job_id, step).exists():
        if time.monotonic() > deadline:
            raise Failure("unacknowledged")
        time.sleep(0.002)


def steps(ctx: JobContext, payload: Steps) -> Count:
    for done in range(1, payload.steps + 1):
        _wait_for(ctx, done)
        ctx.publish(Count(done=done))
    _wait_for(ctx, payload.steps + 1)
    return Count(done=payload.steps)


def register(kinds: Any) -> None:
    kinds.register("steps", steps, payload=Steps, failure_codes=["unacknowledged"])
