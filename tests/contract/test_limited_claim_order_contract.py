"""Limited and fair kinds' claims take what the memory store takes when their jobs are
spread over queues, some paused and some not served: a SQL store reads such a kind queue
by queue (its claim under the lock, its pages, its keys' heads, its first priority, its
jobs without a key) and merges what it read, and the merge must keep claim order and the
keys' turns. The memory store reads the whole backlog: it is the model. Random backlogs,
drained to the end, a few jobs ending after each claim (so slots come back).
"""

from __future__ import annotations

import datetime
import random
from contextlib import ExitStack

import pytest

from jobtable.adapters.memory import MemoryStore
from jobtable.adapters.sql import fair_order, limited_picks
from jobtable.core.batch import Batch
from jobtable.core.ids import JobIdGenerator
from jobtable.core.jobs import NewJob
from jobtable.core.limits import RunningLimit
from jobtable.core.outcome import Succeed
from tests.contract.test_batch_contract import LATER, T0

QUEUES = ("default", "bulk", "mail")
KEYS = ("acme", "globex", "initech", None)
RULES = Batch(
    claim=1,
    limits={"charge": RunningLimit(n=2, keyed=True), "capped": RunningLimit(n=5, keyed=False)},
    fair=frozenset({"tenant"}),
)
KINDS = ("capped", "charge", "tenant")


def backlog(rng: random.Random) -> list[NewJob]:
    """90 due jobs of the limited and fair kinds, in random queues, priorities, due times
    and keys (a few fair jobs with none; every keyed job has one: one with none, written
    before its limit had a key, may wait up to 10 s longer on a SQL store, by design)."""
    ids = JobIdGenerator()
    jobs = []
    for n in range(90):
        kind = rng.choice(KINDS)
        key = rng.choice(KEYS)
        jobs.append(
            NewJob(
                id=ids.next_id(1_772_366_400_000 + n),
                kind=kind,
                payload="{}",
                queue=rng.choice(QUEUES),
                priority=rng.randrange(3),
                run_at=T0 - datetime.timedelta(seconds=rng.randrange(1, 40)),
                limit_key=(key or "acme") if kind == "charge" else None,
                fair_key=key if kind == "tenant" else None,
            )
        )
    return jobs


@pytest.fixture
def small_reads(monkeypatch):
    """Pages of 3 (one read whole), fair keys' heads 1 deep, unkeyed fair jobs 2 a page: so
    that the few jobs here go through every statement and its offsets."""
    monkeypatch.setattr(limited_picks, "PAGE", 3)
    monkeypatch.setattr(limited_picks, "FIRST_PAGE_MORE", 1)
    monkeypatch.setattr(limited_picks, "WHOLE_PAGES", 1)
    monkeypatch.setattr(fair_order, "FAIR_DEPTH", 1)
    monkeypatch.setattr(fair_order, "PAGE", 2)


SERVED = [KINDS, ("tenant",), ("capped",), ("charge",)]
"""Every kind, or one alone: a sole limited or fair kind is claimed with its lock at once."""


@pytest.mark.parametrize("served", SERVED, ids=["all", "fair", "limit", "keyed"])
@pytest.mark.parametrize("seed", range(5))
def test_limited_and_fair_claims_across_queues_take_what_the_model_takes(
    store, seed, served, small_reads
):
    rng = random.Random(seed)
    jobs = backlog(rng)
    paused = rng.choice([None, *QUEUES])
    queues = rng.choice([None, ("default",), ("bulk", "mail")])
    with ExitStack() as stack:
        model = MemoryStore()
        stack.callback(model.close)
        for each in (store, model):
            each.create_many(jobs, now=T0)
            if paused is not None:
                each.set_queue_paused(paused, paused=True, now=T0)
        claimed, running = 0, {}
        for claim in range(300):
            batch = Batch(claim=rng.randrange(1, 5), limits=RULES.limits, fair=RULES.fair)
            done = [
                each.run_batch(batch, runner_id="runner-a", now=LATER, kinds=served, queues=queues)
                for each in (model, store)
            ]
            taken = [[job.claim.job_id for job in each.claimed] for each in done]
            assert taken[1] == taken[0], (claim, taken)
            for ran, also in zip(done[0].claimed, done[1].claimed, strict=True):
                running[ran.id] = (ran.claim, also.claim)
            claimed += len(taken[0])
            if not taken[0] and not running:
                break
            for job_id in sorted(running):  # a few end (all, once nothing more starts)
                if taken[0] and rng.random() < 0.6:
                    continue
                for each, ended in zip((model, store), running.pop(job_id), strict=True):
                    assert each.record(ended, Succeed(result="{}"), now=LATER)
        else:
            pytest.fail("claims never ran dry")
    due = [
        job
        for job in jobs
        if job.kind in served and job.queue != paused and (queues is None or job.queue in queues)
    ]
    assert claimed == len(due), "every served job was claimed, once"
