"""Concurrency limits (``Batch.limits``): the contract on every store.

A claim takes a limited kind's jobs only while fewer than the limit run, counted over
every runner (per key for a keyed limit); a held-back job stays queued with no attempt
spent; a slot comes back when its job ends or its dead runner is settled; limited kinds
are never held ahead; and claims racing from many threads never run more than the limit.
"""

from __future__ import annotations

from jobtable.core import Status
from jobtable.core.batch import Batch
from jobtable.core.ids import JobIdGenerator
from jobtable.core.jobs import NewJob
from jobtable.core.limits import RunningLimit
from jobtable.core.outcome import Succeed
from tests.contract.test_batch_contract import LATER, T0
from tests.contract.test_store_contract import dead, runner_info, sighting
from tests.support.settling import settle_dead
from tests.support.stores import break_lock
from tests.support.threads import run_in_threads

KINDS = ("export", "charge", "noop")
LIMITS = {"export": RunningLimit(n=2, keyed=False), "charge": RunningLimit(n=1, keyed=True)}
_ids = JobIdGenerator()
_ms = iter(range(1_772_366_400_000, 1_772_366_400_000 + 10**9, 1_000))


def add(store, kind: str, key: str | None = None, *, priority: int = 0) -> str:
    job_id = _ids.next_id(next(_ms))
    store.create(
        NewJob(id=job_id, kind=kind, payload="{}", limit_key=key, priority=priority), now=T0
    )
    return job_id


def claim(store, runner_id: str = "runner-a", *, n: int = 10, hold: int = 0, kinds=KINDS):
    batch = Batch(claim=n, hold=hold, limits=LIMITS)
    return store.run_batch(batch, runner_id=runner_id, now=LATER, kinds=kinds)


def running(store, kind: str) -> list[str]:
    return sorted(held.claim.job_id for held in store.running_jobs("runner-a") if held.kind == kind)


def test_a_kind_limit_holds_back_jobs_past_it_queued_with_no_attempt_spent(store):
    exports = [add(store, "export") for _ in range(5)]
    first = claim(store)
    assert [job.id for job in first.claimed] == exports[:2]
    assert claim(store, "runner-b").claimed == []  # another runner: the same two slots
    for job_id in exports[2:]:
        detail = store.detail(job_id)
        assert (detail.job.status, detail.attempt) == (Status.QUEUED, 0)
    assert store.record(first.claimed[0].claim, Succeed(result="{}"), now=LATER)
    second = claim(store, "runner-b")
    assert [job.id for job in second.claimed] == [exports[2]]  # one slot came back


def test_a_keyed_limit_counts_each_key_apart(store):
    alice = [add(store, "charge", "alice") for _ in range(3)]
    bob = [add(store, "charge", "bob") for _ in range(2)]
    taken = claim(store)
    assert sorted(job.id for job in taken.claimed) == sorted([alice[0], bob[0]])
    assert claim(store, "runner-b").claimed == []
    assert store.record(taken.claimed[0].claim, Succeed(result="{}"), now=LATER)
    after = claim(store, "runner-b")
    freed = taken.claimed[0].id
    assert [job.id for job in after.claimed] == [alice[1] if freed == alice[0] else bob[1]]


def test_unlimited_kinds_fill_the_batch_past_a_limited_kinds_slots(store):
    exports = [add(store, "export") for _ in range(4)]
    noops = [add(store, "noop") for _ in range(3)]
    taken = claim(store, n=4)
    assert [job.id for job in taken.claimed] == exports[:2] + noops[:2]


def test_limited_kinds_are_never_held_ahead(store):
    add(store, "export")
    noop = add(store, "noop")
    done = claim(store, n=0, hold=5)
    assert [job.id for job in done.held] == [noop]


def test_a_dead_runners_slots_come_back_once_its_jobs_are_settled(store):
    store.register_runner(runner_info("runner-dead"), now=T0)
    exports = [add(store, "export") for _ in range(3)]
    assert len(claim(store, "runner-dead").claimed) == 2
    assert claim(store, "runner-b").claimed == []
    break_lock(store, "runner-dead")
    beat = sighting(store, "runner-dead").beat
    recovered = settle_dead(store, [dead("runner-dead", beat)], now=LATER)
    assert recovered.failed == 2  # one attempt each: failed interrupted, their slots free
    taken = claim(store, "runner-b")
    assert [job.id for job in taken.claimed] == [exports[2]]


def test_claims_racing_from_many_runners_never_run_more_than_the_limit(store):
    exports = [add(store, "export") for _ in range(12)]
    taken: list[list[str]] = []

    def runner(number: int):
        def take() -> None:
            taken.append([job.id for job in claim(store, f"runner-{number}", n=3).claimed])

        return take

    run_in_threads([runner(number) for number in range(6)])
    claimed = [job_id for batch in taken for job_id in batch]
    assert len(claimed) == 2 and set(claimed) <= set(exports)


def test_running_alike_counts_the_kind_and_the_key_a_held_back_job_waits_for(store):
    alice = [add(store, "charge", "alice") for _ in range(2)]
    bob = add(store, "charge", "bob")
    add(store, "noop")
    claim(store)  # alice's first, bob's, the noop
    assert store.running_alike(alice[1]) == (2, 1)
    assert store.running_alike(bob) == (2, 1)
    assert store.running_alike("no-such-job") == (0, 0)


def test_the_smallest_limit_any_registered_runner_declared_applies(store):
    store.register_runner(runner_info("runner-new", limits=(("export", 1),)), now=T0)
    exports = [add(store, "export") for _ in range(3)]
    assert [job.id for job in claim(store).claimed] == exports[:1]  # 1, not this runner's 2
    store.unregister_runner("runner-new")
    assert [job.id for job in claim(store).claimed] == exports[1:2]  # gone: 2 again
