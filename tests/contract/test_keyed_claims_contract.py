"""A keyed limit's claims on every store, against a model: each claim takes, in claim order
(priority, run_at, id), the due jobs whose key has room, whatever the backlog a full key
holds ahead of them.

The SQL stores read a limited kind's first pages whole, then pass over the full keys:
for a keyed limit they read the kind's keys and the first jobs of each key with room
(adapters/sql/limited_picks.py). The pages, the whole pages and the most keys read are
made small here, so that a few dozen jobs go down every path.
"""

from __future__ import annotations

import datetime
import random

import pytest

from jobtable.adapters.sql import limited_picks
from jobtable.core.batch import Batch
from jobtable.core.ids import JobIdGenerator
from jobtable.core.jobs import NewJob
from jobtable.core.limits import RunningLimit
from jobtable.core.outcome import Succeed
from tests.contract.test_batch_contract import LATER, T0

KIND = "charge"


@pytest.fixture
def small_pages(monkeypatch, request):
    """Pages of 3 jobs (the first what is wanted and one more), one read whole, at most
    ``request.param`` keys read."""
    monkeypatch.setattr(limited_picks, "PAGE", 3)
    monkeypatch.setattr(limited_picks, "FIRST_PAGE_MORE", 1)
    monkeypatch.setattr(limited_picks, "WHOLE_PAGES", 1)
    monkeypatch.setattr(limited_picks, "MAX_KEYS", request.param)


class Model:
    """What every claim must take: due jobs in claim order whose key has room."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.queued: dict[str, tuple[int, datetime.datetime, str | None]] = {}
        self.running: dict[str, str | None] = {}

    def claim(self, n: int) -> list[str]:
        use: dict[str | None, int] = {}
        for key in self.running.values():
            use[key] = use.get(key, 0) + 1
        taken = []
        for job_id in sorted(self.queued, key=lambda job_id: (*self.queued[job_id][:2], job_id)):
            if len(taken) >= n:
                break
            key = self.queued[job_id][2]
            if use.get(key, 0) < self.limit:
                use[key] = use.get(key, 0) + 1
                taken.append(job_id)
        for job_id in taken:
            self.running[job_id] = self.queued.pop(job_id)[2]
        return taken


@pytest.mark.parametrize("small_pages", [2000, 3], indirect=True, ids=["keys", "too-many-keys"])
@pytest.mark.parametrize("seed", range(12))
def test_keyed_claims_take_what_the_model_takes_past_full_keys_backlogs(store, small_pages, seed):
    chance = random.Random(seed)
    limit = chance.choice([1, 2])
    model = Model(limit)
    ids = JobIdGenerator()
    keys = ["big"] * 30 + [f"small-{n}" for n in range(8)]
    for number in range(60):
        key = "big" if number < 25 else chance.choice(keys)
        priority = chance.choice([0, 0, 0, 1, 2])
        run_at = T0 - datetime.timedelta(seconds=chance.randrange(10))
        job_id = ids.next_id(1_772_366_400_000 + number)
        store.create(
            NewJob(id=job_id, kind=KIND, payload="{}", limit_key=key, priority=priority,
                   run_at=run_at),
            now=T0,
        )  # fmt: skip
        model.queued[job_id] = (priority, run_at, key)
    limits = {KIND: RunningLimit(n=limit, keyed=True)}
    claims: dict[str, object] = {}
    for step in range(14):
        n = chance.randrange(1, 5)
        done = store.run_batch(
            Batch(claim=n, limits=limits), runner_id="runner-a", now=LATER, kinds=(KIND,)
        )
        assert [job.id for job in done.claimed] == model.claim(n), f"claim {step}"
        claims.update({job.id: job.claim for job in done.claimed})
        for job_id in chance.sample(sorted(model.running), k=min(2, len(model.running))):
            assert store.record(claims[job_id], Succeed(result="{}"), now=LATER)
            del model.running[job_id]


@pytest.mark.parametrize("small_pages", [2000], indirect=True)
def test_a_job_with_no_key_behind_a_held_back_backlog_is_still_claimed(store, small_pages):
    """A keyed limit's jobs without a key (written before the limit had its key) share one
    slot, and a claim finds one however deep the full keys' backlog ahead of it."""
    ids = JobIdGenerator()
    made = []
    for number, key in enumerate(["big"] * 12 + [None, "small", None]):
        job_id = ids.next_id(1_772_366_400_000 + number)
        store.create(NewJob(id=job_id, kind=KIND, payload="{}", limit_key=key), now=T0)
        made.append(job_id)
    limits = {KIND: RunningLimit(n=1, keyed=True)}

    def claim(n: int) -> list[str]:
        done = store.run_batch(
            Batch(claim=n, limits=limits), runner_id="runner-a", now=LATER, kinds=(KIND,)
        )
        return [job.id for job in done.claimed]

    assert claim(1) == [made[0]]  # big is at its limit now
    assert sorted(claim(3)) == sorted([made[12], made[13]])  # small's and the first no-key
    assert claim(3) == []  # big and small full, the slot without a key too


@pytest.mark.parametrize("small_pages", [2000], indirect=True)
def test_a_job_with_no_key_that_becomes_due_soon_after_a_look_found_none_is_claimed_by_then(
    store, small_pages, monkeypatch
):
    """A look for jobs with no key that found none is not made again for a while (the SQL
    stores page through the backlog for it); a claim that skips it says when the next may
    look, as a rate's opening, so a runner claims again then and the job never waits on a
    claim something else might never send. Here the job's queue is paused, then resumed."""
    clock = [1000.0]
    monkeypatch.setattr(limited_picks, "_clock", lambda: clock[0])
    ids = JobIdGenerator()
    for number in range(12):
        store.create(
            NewJob(id=ids.next_id(1_772_366_400_000 + number), kind=KIND, payload="{}",
                   limit_key="big"),
            now=T0,
        )  # fmt: skip
    lone = ids.next_id(1_772_366_400_100)
    store.create(NewJob(id=lone, kind=KIND, payload="{}", queue="later"), now=T0)
    store.set_queue_paused("later", paused=True, now=T0)
    limits = {KIND: RunningLimit(n=1, keyed=True)}

    def claim(now: datetime.datetime):
        batch = Batch(claim=2, limits=limits)
        return store.run_batch(batch, runner_id="runner-a", now=now, kinds=(KIND,))

    assert len(claim(LATER).claimed) == 1  # big's first: big is at its limit
    assert claim(LATER).claimed == []  # the look for jobs with no key finds none
    store.set_queue_paused("later", paused=False, now=LATER)
    resumed = claim(LATER)
    if not resumed.claimed:  # the look was skipped: it says when the next may look
        opens = resumed.rate_opens_at
        assert opens is not None
        assert opens <= LATER + datetime.timedelta(seconds=limited_picks.NO_KEY_LOOK_EVERY)
        clock[0] += (opens - LATER).total_seconds()
        resumed = claim(opens)
    assert [job.id for job in resumed.claimed] == [lone]
