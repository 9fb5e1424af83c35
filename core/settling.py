"""Settling the jobs of runners certainly dead: the runner's own rule, then one store call.

Each job is decided by the retry policy stored on it (``settle_interrupted``), with the
settling runner's jitter; the store records the outcomes while the verdicts still hold.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Collection

from jobtable.core.jobs import Recovered
from jobtable.core.liveness import DeadRunner, Settlement
from jobtable.core.outcome import settle_interrupted
from jobtable.core.ports import LivenessPort


def settle_dead_runners(
    store: LivenessPort,
    verdicts: Collection[DeadRunner],
    *,
    code: str,
    now: datetime.datetime,
    jitter: Callable[[], float],
) -> Recovered:
    """Decide every job the dead runners of ``verdicts`` hold, ended with ``code``, and have
    ``store`` record it all; how many jobs failed and how many were queued again."""
    settlements = [
        Settlement(
            verdict=verdict,
            outcomes=tuple(
                (
                    job,
                    settle_interrupted(
                        job.policy, attempt=job.claim.attempt, code=code, now=now, jitter=jitter
                    ),
                )
                for job in store.running_jobs(verdict.runner_id)
            ),
        )
        for verdict in verdicts
    ]
    return store.settle_dead(settlements, now=now)
