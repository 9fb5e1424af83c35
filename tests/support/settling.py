"""Settling jobs in a test as a runner does: the core decides (core/outcome.py), the store records."""

from __future__ import annotations

import datetime
import random
from collections.abc import Callable, Collection

from jobtable.core import Claim, DeadRunner, Recovered
from jobtable.core.codes import INTERRUPTED
from jobtable.core.outcome import settle_interrupted
from jobtable.core.policies import RetryPolicy
from jobtable.core.settling import settle_dead_runners


def settle_dead(
    store,
    verdicts: Collection[DeadRunner],
    *,
    code: str = INTERRUPTED,
    now: datetime.datetime,
    jitter: Callable[[], float] = random.random,
) -> Recovered:
    """Settle the jobs of runners judged dead, each by the policy stored on it."""
    return settle_dead_runners(store, verdicts, code=code, now=now, jitter=jitter)


def interrupt(
    store,
    claim: Claim,
    *,
    code: str,
    now: datetime.datetime,
    jitter: Callable[[], float] = random.random,
) -> bool:
    """Settle the job running under ``claim`` by the policy stored on it, as a runner settles
    one whose outcome it could not record; False (the store's fence) when it is not."""
    held = {job.claim: job for job in store.running_jobs(claim.runner_id)}
    job = held.get(claim)
    policy = RetryPolicy() if job is None else job.policy
    outcome = settle_interrupted(policy, attempt=claim.attempt, code=code, now=now, jitter=jitter)
    return bool(store.record(claim, outcome, now=now))


def running_claims(store, runner_id: str) -> list[Claim]:
    """The claims of the jobs running under ``runner_id``."""
    return [job.claim for job in store.running_jobs(runner_id)]
