"""A kind with a concurrency limit and a rate together (a keyed limit or not, a rate
without a key) takes what the memory store takes, claim after claim as time passes: a
SQL store claims such a kind, when it is the runner's one limited kind, by one statement
that counts both rooms under the kind's lock (claim_within_limit.py, PostgreSQL), and picks
job by job when that statement could not take all it wanted (SQLite counts the slots
first, then claims at once or picks). The memory
store is the model."""

from __future__ import annotations

import datetime
import random
from contextlib import ExitStack

import pytest

from jobtable.adapters.memory import MemoryStore
from jobtable.core.batch import Batch
from jobtable.core.ids import JobIdGenerator
from jobtable.core.jobs import NewJob
from jobtable.core.limits import RateLimit, RunningLimit
from jobtable.core.outcome import Succeed
from tests.contract.test_batch_contract import LATER, T0

KEYS = ("acme", "globex", "initech")
RULES = {
    "keyed": Batch(
        limits={"sync": RunningLimit(n=2, keyed=True)},
        rates={"sync": RateLimit(n=5, per=60.0, keyed=False)},
    ),
    "unkeyed": Batch(
        limits={"sync": RunningLimit(n=3, keyed=False)},
        rates={"sync": RateLimit(n=4, per=30.0, keyed=False)},
    ),
}


def backlog(rng: random.Random) -> list[NewJob]:
    ids = JobIdGenerator()
    return [
        NewJob(
            id=ids.next_id(1_772_366_400_000 + n),
            kind="sync",
            payload="{}",
            priority=rng.randrange(2),
            run_at=T0 - datetime.timedelta(seconds=rng.randrange(1, 40)),
            limit_key=rng.choice(KEYS),
        )
        for n in range(40)
    ]


@pytest.mark.parametrize("limit", sorted(RULES))
@pytest.mark.parametrize("seed", range(4))
def test_a_limit_and_a_rate_together_take_what_the_model_takes(store, seed, limit):
    rng = random.Random(seed)
    jobs = backlog(rng)
    rules = RULES[limit]
    now = LATER
    with ExitStack() as stack:
        model = MemoryStore()
        stack.callback(model.close)
        for each in (store, model):
            each.create_many(jobs, now=T0)
        claimed, running, opened = 0, {}, 0
        for claim in range(400):
            batch = Batch(claim=rng.randrange(1, 5), limits=rules.limits, rates=rules.rates)
            done = [
                each.run_batch(batch, runner_id="runner-a", now=now, kinds=("sync",))
                for each in (model, store)
            ]
            taken = [[job.claim.job_id for job in each.claimed] for each in done]
            assert taken[1] == taken[0], (claim, taken)
            assert done[1].rate_opens_at == done[0].rate_opens_at, claim
            opened += done[0].rate_opens_at is not None
            for ran, also in zip(done[0].claimed, done[1].claimed, strict=True):
                running[ran.id] = (ran.claim, also.claim)
            claimed += len(taken[0])
            if claimed == len(jobs):
                break
            for job_id in sorted(running):  # a few end, so that slots come back
                if rng.random() < 0.5:
                    continue
                for each, ended in zip((model, store), running.pop(job_id), strict=True):
                    assert each.record(ended, Succeed(result="{}"), now=now)
            now += datetime.timedelta(seconds=rng.choice([0, 0, 1, 5, 20]))
        else:
            pytest.fail("claims never ran dry")
    assert opened, "the rate held jobs back at times"


def test_a_claim_that_spends_a_rate_says_when_it_opens_if_a_job_is_left(store):
    """The claim whose start spends the rate says when the window opens while a due job is
    left, though the job it read last was held back by its key (and the jobs past it, a
    full key's, passed over unread)."""
    ids = JobIdGenerator()
    keys = ["a", "c"] + ["a"] * 250 + ["b", "a"]
    store.create_many(
        [
            NewJob(id=ids.next_id(1_772_366_400_000 + n), kind="sync", payload="{}", limit_key=key)
            for n, key in enumerate(keys)
        ],
        now=T0,
    )
    rules = Batch(
        claim=2,
        limits={"sync": RunningLimit(n=1, keyed=True)},
        rates={"sync": RateLimit(n=3, per=60.0, keyed=False)},
    )
    first = store.run_batch(rules, runner_id="runner-a", now=LATER, kinds=("sync",))
    assert len(first.claimed) == 2 and first.rate_opens_at is None  # a, c: keys a, c full
    second = store.run_batch(rules, runner_id="runner-a", now=LATER, kinds=("sync",))
    assert len(second.claimed) == 1  # b: the rate's third start
    assert second.rate_opens_at == LATER + datetime.timedelta(seconds=60)
