"""Queue limits an operator sets at run time (``set_queue_limit``): the contract on every store.

A limited queue's jobs are claimed apart, by the runners that know it is limited: never
more running than its limit nor more started in a window than its rate, counted over
every runner, together with their kinds' own limits. A runner that has not learnt of a
limit passes the queue's jobs over and learns of it from its batch's reply. A lifted
limit lets every claim take them again; the queue's pause is kept through both.
"""

from __future__ import annotations

import datetime

from jobtable.core import Status
from jobtable.core.batch import Batch
from jobtable.core.ids import JobIdGenerator
from jobtable.core.jobs import NewJob
from jobtable.core.limits import QueueLimit, RateLimit, RunningLimit
from jobtable.core.outcome import Succeed
from tests.contract.test_batch_contract import LATER, T0
from tests.support.threads import run_in_threads

KINDS = ("export", "noop")
_ids = JobIdGenerator()
_ms = iter(range(1_872_366_400_000, 1_872_366_400_000 + 10**9, 1_000))
TWO_RUNNING = QueueLimit(running=2)
THREE_A_MINUTE = QueueLimit(rate=RateLimit(n=3, per=60.0, keyed=False))


def add(store, queue: str, kind: str = "noop") -> str:
    job_id = _ids.next_id(next(_ms))
    store.create(NewJob(id=job_id, kind=kind, payload="{}", queue=queue), now=T0)
    return job_id


def claim(store, runner_id="runner-a", *, n=10, hold=0, known=("slow",), now=LATER, **rules):
    batch = Batch(claim=n, hold=hold, limited_queues=frozenset(known), **rules)
    return store.run_batch(batch, runner_id=runner_id, now=now, kinds=KINDS)


def ids(done) -> list[str]:
    return [job.id for job in done.claimed]


def test_a_queue_limit_holds_its_jobs_back_across_runners_with_no_attempt_spent(store):
    store.set_queue_limit("slow", TWO_RUNNING, now=T0)
    slow = [add(store, "slow") for _ in range(4)]
    fast = [add(store, "fast") for _ in range(3)]
    first = claim(store)
    assert set(ids(first)) == set(slow[:2] + fast)  # the other queue is never held back
    assert first.limited_queues == frozenset({"slow"})
    assert claim(store, "runner-b").claimed == []
    for job_id in slow[2:]:
        detail = store.detail(job_id)
        assert (detail.job.status, detail.attempt) == (Status.QUEUED, 0)
    freed = next(job for job in first.claimed if job.id == slow[0])
    assert store.record(freed.claim, Succeed(result="{}"), now=LATER)
    assert ids(claim(store, "runner-b")) == [slow[2]]


def test_a_runner_that_has_not_learnt_of_a_limit_passes_the_queue_over_and_learns_of_it(store):
    store.set_queue_limit("slow", TWO_RUNNING, now=T0)
    slow = [add(store, "slow") for _ in range(3)]
    unaware = claim(store, known=())
    assert unaware.claimed == [] and unaware.limited_queues == frozenset({"slow"})
    assert ids(claim(store, known=unaware.limited_queues)) == slow[:2]


def test_a_lifted_limit_lets_every_claim_take_the_queues_jobs_and_keeps_its_pause(store):
    store.set_queue_limit("slow", TWO_RUNNING, now=T0)
    slow = [add(store, "slow") for _ in range(3)]
    store.set_queue_paused("slow", paused=True, now=T0)
    store.set_queue_limit("slow", QueueLimit(), now=T0)
    assert [(q.name, q.paused, q.limit) for q in store.queues()] == [("slow", True, QueueLimit())]
    assert claim(store, known=()).claimed == []  # still paused
    store.set_queue_paused("slow", paused=False, now=T0)
    done = claim(store, known=("slow",))  # a runner that still thinks it limited
    assert ids(done) == slow and done.limited_queues == frozenset()


def test_a_resumed_queue_keeps_its_limit_and_queues_show_it(store):
    store.set_queue_limit("slow", THREE_A_MINUTE, now=T0)
    store.set_queue_paused("slow", paused=True, now=T0)
    store.set_queue_paused("slow", paused=False, now=T0)
    (shown,) = store.queues()
    assert (shown.name, shown.paused, shown.limit) == ("slow", False, THREE_A_MINUTE)
    store.set_queue_limit("slow", QueueLimit(), now=T0)
    assert store.queues() == []  # neither paused nor limited, and no job: forgotten


def test_a_queue_limit_and_a_kind_limit_both_hold(store):
    store.set_queue_limit("slow", TWO_RUNNING, now=T0)
    exports = [add(store, "slow", "export") for _ in range(2)]
    noop = add(store, "slow")
    done = claim(store, limits={"export": RunningLimit(n=1, keyed=False)})
    assert ids(done) == [exports[0], noop]


def test_a_queue_rate_never_starts_more_in_its_window_and_says_when_it_opens(store):
    store.set_queue_limit("slow", THREE_A_MINUTE, now=T0)
    slow = [add(store, "slow") for _ in range(5)]
    first = claim(store, clock=lambda: LATER)
    assert ids(first) == slow[:3]
    assert first.rate_opens_at == LATER + datetime.timedelta(seconds=60)
    for job in first.claimed:  # ended at once: a rate counts starts, not running jobs
        assert store.record(job.claim, Succeed(result="{}"), now=LATER)
    later = LATER + datetime.timedelta(seconds=30)
    held = claim(store, "runner-b", now=later, clock=lambda: later)
    assert held.claimed == [] and held.rate_opens_at == LATER + datetime.timedelta(seconds=60)
    opened = LATER + datetime.timedelta(seconds=61)
    assert ids(claim(store, "runner-b", now=opened, clock=lambda: opened)) == slow[3:]


def test_a_limited_queues_jobs_are_never_held_ahead(store):
    store.set_queue_limit("slow", TWO_RUNNING, now=T0)
    add(store, "slow")
    fast = add(store, "fast")
    assert [job.id for job in claim(store, n=0, hold=5).held] == [fast]


def test_claims_racing_from_many_runners_never_run_more_than_the_queue_limit(store):
    store.set_queue_limit("slow", TWO_RUNNING, now=T0)
    slow = [add(store, "slow") for _ in range(12)]
    taken: list[list[str]] = []

    def runner(number: int):
        def take() -> None:
            taken.append(ids(claim(store, f"runner-{number}", n=3)))

        return take

    run_in_threads([runner(number) for number in range(6)])
    claimed = [job_id for batch in taken for job_id in batch]
    assert len(claimed) == 2 and set(claimed) <= set(slow)


def add_keyed(store, kind: str, *, queue="default", limit_key=None, rate_key=None) -> str:
    job_id = _ids.next_id(next(_ms))
    job = NewJob(
        id=job_id, kind=kind, payload="{}", queue=queue, limit_key=limit_key, rate_key=rate_key
    )
    store.create(job, now=T0)
    return job_id


def test_held_back_counts_each_due_job_once_by_the_first_limit_that_holds_it(store):
    limits = {
        "export": RunningLimit(n=1, keyed=False),
        "charge": RunningLimit(n=1, keyed=True),
    }
    rates = {"sync": RateLimit(n=1, per=60.0, keyed=False), "charge": RateLimit(
        n=1, per=60.0, keyed=True
    )}  # fmt: skip
    store.set_queue_limit("slow", TWO_RUNNING, now=T0)
    for _ in range(3):
        add_keyed(store, "export")
    add_keyed(store, "export", queue="slow")  # the full queue holds it, not its kind
    for _ in range(3):
        add_keyed(store, "noop", queue="slow")
    for _ in range(2):
        add_keyed(store, "charge", limit_key="ada", rate_key="ada")
    add_keyed(store, "charge", limit_key="bob", rate_key="ada")  # its rate key is spent
    add_keyed(store, "charge", limit_key="cy", rate_key="cy")  # free: not held back
    for _ in range(2):
        add_keyed(store, "sync")
    batch = Batch(claim=20, limits=limits, rates=rates, limited_queues=frozenset({"slow"}))
    kinds = ("export", "noop", "charge", "sync")
    done = store.run_batch(batch, runner_id="runner-a", now=LATER, kinds=kinds)
    started = sorted(job.kind for job in done.claimed)
    assert started == ["charge", "charge", "export", "noop", "noop", "sync"]
    held = {
        (each.kind, each.queue, each.limit): each.count
        for each in store.held_back(limits, rates, now=LATER)
    }
    assert held == {
        ("export", "default", "limit"): 2,
        ("export", "slow", "queue_limit"): 1,
        ("noop", "slow", "queue_limit"): 1,
        ("charge", "default", "limit"): 1,  # ada's second: her limit is full
        ("charge", "default", "rate"): 1,  # bob's: his limit is free, the ada rate key is not
        ("sync", "default", "rate"): 1,
    }
    use = store.queue_use("slow", now=LATER)
    assert (use.running, use.full, use.limit) == (2, "queue_limit", TWO_RUNNING)
    assert store.queue_use("default", now=LATER) is None


def test_claim_next_learns_of_a_limited_queue_and_claims_within_it(store):
    store.set_queue_limit("slow", TWO_RUNNING, now=T0)
    slow = [add(store, "slow") for _ in range(3)]
    first = store.claim_next(runner_id="runner-a", now=LATER, kinds=KINDS)
    _, more = store.record_and_claim([], limit=5, runner_id="runner-b", now=LATER, kinds=KINDS)
    assert [first.id] + [job.id for job in more] == slow[:2]


def test_a_paused_queues_jobs_are_not_counted_as_held_back(store):
    store.set_queue_limit("slow", QueueLimit(running=1), now=T0)
    for _ in range(3):
        add(store, "slow")
    for _ in range(2):
        add(store, "idle", "export")
    limits = {"export": RunningLimit(n=1, keyed=False)}
    batch = Batch(claim=5, limits=limits, limited_queues=frozenset({"slow"}))
    done = store.run_batch(batch, runner_id="runner-b", now=LATER, kinds=KINDS)
    assert sorted(job.kind for job in done.claimed) == ["export", "noop"]
    held = {(h.kind, h.queue, h.limit): h.count for h in store.held_back(limits, {}, now=LATER)}
    assert held == {("noop", "slow", "queue_limit"): 2, ("export", "idle", "limit"): 1}
    store.set_queue_paused("slow", paused=True, now=T0)
    store.set_queue_paused("idle", paused=True, now=T0)
    assert store.held_back(limits, {}, now=LATER) == []  # they wait for a resume, not a limit


def test_a_keyed_kind_claimed_at_once_and_from_a_limited_queue_in_one_claim_keeps_its_limit(
    store,
):
    """A claim takes a keyed kind's first jobs at once when every key has room for all it
    wants; what it then takes of the kind from a limited queue still fits each key."""
    limits = {"export": RunningLimit(n=3, keyed=True)}

    def add_keyed(queue: str) -> str:
        job_id = _ids.next_id(next(_ms))
        job = NewJob(id=job_id, kind="export", payload="{}", queue=queue, limit_key="acme")
        store.create(job, now=T0)
        return job_id

    store.set_queue_limit("slow", QueueLimit(running=10), now=T0)
    running = add_keyed("default")
    assert ids(claim(store, n=1, limits=limits)) == [running]
    first, *slow = [add_keyed("default"), add_keyed("slow"), add_keyed("slow")]
    assert ids(claim(store, n=2, limits=limits)) == [first, slow[0]]  # acme: 3 of 3 now
    assert ids(claim(store, "runner-b", n=2, limits=limits)) == []


def test_a_spent_rate_says_when_it_opens_though_its_kinds_job_left_waits_in_a_limited_queue(
    store,
):
    """The claim that spends a kind's rate takes its job in another queue; the one left is in
    a limited queue with room, which the kind's own claims pass over: the rate's opening is
    still reported, so the runner claims again then rather than at its next poll."""
    store.set_queue_limit("slow", QueueLimit(running=5), now=T0)
    first = add(store, "fast")
    add(store, "slow")
    done = claim(store, n=3, rates={"noop": RateLimit(n=1, per=60.0, keyed=False)})
    assert ids(done) == [first]
    assert done.rate_opens_at == LATER + datetime.timedelta(seconds=60)
