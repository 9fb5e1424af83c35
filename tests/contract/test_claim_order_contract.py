"""Claims and holds take due jobs in claim order (priority, then run_at, then id) across
queues, whichever way a store reads them: every queue served with none passed over, a
runner's own queues, or around a paused queue. Every store against a model, over random
backlogs of several kinds and queues.
"""

from __future__ import annotations

import datetime
import random

import pytest

from jobtable.core.batch import Batch
from jobtable.core.ids import JobIdGenerator
from jobtable.core.jobs import NewJob
from tests.contract.test_batch_contract import LATER, T0

KINDS = ("count", "noop", "other")
QUEUES = ("default", "bulk", "mail")


def backlog(store, rng: random.Random) -> list[tuple[int, datetime.datetime, str, str, str]]:
    """60 due jobs of random kinds, queues, priorities and due times; each as its claim
    order's key (priority, run_at, id) with its kind and queue."""
    ids = JobIdGenerator()
    jobs = []
    for n in range(60):
        job = NewJob(
            id=ids.next_id(1_772_366_400_000 + n),
            kind=rng.choice(KINDS),
            payload="{}",
            queue=rng.choice(QUEUES),
            priority=rng.randrange(3),
            run_at=T0 - datetime.timedelta(seconds=rng.randrange(1, 40)),
        )
        store.create(job, now=T0)
        assert job.run_at is not None
        jobs.append((job.priority, job.run_at, job.id, job.kind, job.queue))
    return jobs


@pytest.mark.parametrize("seed", range(6))
def test_claims_and_holds_take_jobs_in_claim_order_across_queues(store, seed):
    rng = random.Random(seed)
    waiting = sorted(backlog(store, rng))
    paused = rng.choice([None, *QUEUES])
    if paused is not None:
        store.set_queue_paused(paused, paused=True, now=T0)
    kinds = tuple(sorted(rng.sample(KINDS, 2)))
    queues = rng.choice([None, ("default",), ("bulk", "mail")])
    while True:
        n, hold = rng.randrange(1, 5), rng.randrange(0, 3)
        done = store.run_batch(
            Batch(claim=n, hold=hold), runner_id="runner-a", now=LATER, kinds=kinds, queues=queues
        )
        due = [
            job
            for job in waiting
            if job[3] in kinds and (queues is None or job[4] in queues) and job[4] != paused
        ]
        expected = [job[2] for job in due[: n + hold]]
        assert [job.claim.job_id for job in [*done.claimed, *done.held]] == expected
        taken = set(expected)
        waiting = [job for job in waiting if job[2] not in taken]
        if not expected:
            break
