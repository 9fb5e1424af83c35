"""Concurrency limits (``Batch.limits``): the contract on every store.

A claim takes a limited kind's jobs only while fewer than the limit run, counted over
every runner (per key for a keyed limit); a held-back job stays queued with no attempt
spent; a slot comes back when its job ends or its dead runner is settled; limited kinds
are never held ahead; and claims racing from many threads never run more than the limit.
"""

from __future__ import annotations

import datetime
from contextlib import ExitStack

import attrs
import pytest

from jobtable.adapters.sql import fair_order
from jobtable.core import Status
from jobtable.core.batch import Batch
from jobtable.core.errors import StoreError
from jobtable.core.ids import JobIdGenerator
from jobtable.core.jobs import NewJob
from jobtable.core.limits import RateLimit, RunningLimit
from jobtable.core.outcome import Succeed
from tests.contract.test_batch_contract import LATER, T0
from tests.contract.test_rows_contract import unreadable
from tests.contract.test_store_contract import dead, runner_info, sighting
from tests.support.rows import write_row
from tests.support.settling import settle_dead
from tests.support.stores import break_lock, same_database
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


def claim_through_one_failure(store, limit: RunningLimit, kind: str, n: int):
    """A claim of ``n`` of the kind, made again once should the first fail (a limit declared
    since the store's last claim): the jobs claimed, and how many claims failed."""
    batch = Batch(claim=n, limits={kind: limit})
    for failures in range(2):
        try:
            done = store.run_batch(batch, runner_id="runner-a", now=LATER, kinds=(kind,))
        except StoreError:
            continue
        return [job.id for job in done.claimed], failures
    raise AssertionError("the claim after the failed one holds the new limit")


def test_a_limit_a_runner_lowered_since_the_last_claim_holds_from_the_next_claim(store):
    """A store may claim by the limit its last claim read; a claim that took more than a
    limit declared since allows fails whole (nothing of it happened), and the next holds."""
    exports = [add(store, "export") for _ in range(4)]
    limit = RunningLimit(n=3, keyed=False)
    assert claim_through_one_failure(store, limit, "export", 1) == (exports[:1], 0)  # read: 3
    store.register_runner(runner_info("runner-new", limits=(("export", 1),)), now=T0)
    taken, _ = claim_through_one_failure(store, limit, "export", 3)
    assert taken == []  # one runs: the new limit is full
    assert [store.detail(job_id).attempt for job_id in exports[1:]] == [0, 0, 0]
    store.unregister_runner("runner-new")
    assert claim_through_one_failure(store, limit, "export", 3) == (exports[1:3], 0)  # 3 again


def test_a_claim_by_a_limit_lowered_since_counts_the_jobs_running_before_it(store):
    """A claim that went by a limit a runner lowered since (10, then 8) is checked against
    the jobs that ran before it (2, of several limit keys), not those it took: 6 more fit.
    (SQLite counted each key's running jobs only as it read them, after the claim, and
    failed the batch.)"""
    for key in "abcd" * 5:
        add(store, "export", key)
    limit = {"export": RunningLimit(n=10, keyed=False)}

    def claim_exports(n: int) -> int:
        batch = Batch(claim=n, limits=limit)
        done = store.run_batch(batch, runner_id="runner-a", now=LATER, kinds=("export",))
        return len(done.claimed)

    assert claim_exports(2) == 2  # read: 10
    store.register_runner(runner_info("runner-low", limits=(("export", 8),)), now=T0)
    assert claim_exports(6) == 6  # 2 + 6: the lowered limit, reached
    assert claim_exports(6) == 0


def test_a_keyed_limit_a_runner_lowered_since_the_last_claim_holds_from_the_next_claim(store):
    """As above, for a keyed limit: a claim that took what the busiest key had room for by
    the limit last read, more than a limit declared since allows, fails whole."""
    charges = [add(store, "charge", "alice") for _ in range(4)]
    limit = RunningLimit(n=3, keyed=True)
    assert claim_through_one_failure(store, limit, "charge", 1) == (charges[:1], 0)  # read: 3
    store.register_runner(runner_info("runner-new", limits=(("charge", 1),)), now=T0)
    taken, _ = claim_through_one_failure(store, limit, "charge", 2)
    assert taken == []  # alice runs one: the new limit is full
    assert [store.detail(job_id).attempt for job_id in charges[1:]] == [0, 0, 0]
    store.unregister_runner("runner-new")
    assert claim_through_one_failure(store, limit, "charge", 2) == (charges[1:3], 0)  # 3 again
    assert claim_through_one_failure(store, limit, "charge", 2) == ([], 0)  # alice at 3


def test_a_keyed_limit_a_runner_raised_since_the_last_claim_keeps_claim_order(store):
    """A store's claim with the lock goes by the keyed limit it last read; raised since (the
    runner that declared it lower left), a claim that took jobs by it fails whole, as it
    may have passed over a key's job that now fits first; the next claims in order."""
    a1, a2 = add(store, "charge", "a"), add(store, "charge", "a")
    b1 = add(store, "charge", "b")
    add(store, "charge", "c")
    limit = RunningLimit(n=2, keyed=True)
    store.register_runner(runner_info("runner-low", limits=(("charge", 1),)), now=T0)
    assert claim_through_one_failure(store, limit, "charge", 1) == ([a1], 0)  # read: 1
    store.unregister_runner("runner-low")  # 2 again: a has room for a2
    taken, _ = claim_through_one_failure(store, limit, "charge", 2)
    assert taken == [a2, b1]


def test_keyed_claims_racing_from_many_runners_never_run_more_than_the_limit_per_key(store):
    keyed = {"charge": RunningLimit(n=2, keyed=True)}
    key_of = {add(store, "charge", key): key for key in ["alice", "bob", None] * 6}

    def runner(number: int):
        def take() -> None:
            for _ in range(3):
                store.run_batch(
                    Batch(claim=2, limits=keyed), runner_id=f"runner-{number}", now=LATER,
                    kinds=("charge",),
                )  # fmt: skip

        return take

    run_in_threads([runner(number) for number in range(6)])
    per_key: dict[str | None, int] = {}
    for number in range(6):
        for held in store.running_jobs(f"runner-{number}"):
            key = key_of[held.claim.job_id]
            per_key[key] = per_key.get(key, 0) + 1
    assert per_key == {"alice": 2, "bob": 2, None: 2}


RATES = {
    "sync": RateLimit(n=2, per=60.0, keyed=False),
    "call": RateLimit(n=1, per=10.0, keyed=True),
}


def add_rated(store, kind: str, key: str | None = None) -> str:
    job_id = _ids.next_id(next(_ms))
    store.create(NewJob(id=job_id, kind=kind, payload="{}", rate_key=key), now=T0)
    return job_id


def claim_rated(store, runner_id: str = "runner-a", *, now: datetime.datetime, n: int = 10):
    batch = Batch(claim=n, rates=RATES)
    return store.run_batch(batch, runner_id=runner_id, now=now, kinds=("sync", "call"))


def test_a_rate_never_starts_more_than_n_in_its_window_and_says_when_it_opens(store):
    syncs = [add_rated(store, "sync") for _ in range(5)]
    first = claim_rated(store, now=LATER)
    assert [job.id for job in first.claimed] == syncs[:2]
    assert first.rate_opens_at == LATER + datetime.timedelta(seconds=60)  # the third's turn
    for job in first.claimed:  # ended at once: a rate counts starts, not running jobs
        assert store.record(job.claim, Succeed(result="{}"), now=LATER)
    later = LATER + datetime.timedelta(seconds=30)
    held = claim_rated(store, "runner-b", now=later)
    assert held.claimed == [] and held.rate_opens_at == LATER + datetime.timedelta(seconds=60)
    assert store.detail(syncs[2]).attempt == 0 and store.get(syncs[2]).status is Status.QUEUED
    of_kind, of_key = store.starts_alike(syncs[2], since=later - datetime.timedelta(seconds=60))
    assert of_kind == of_key == [LATER, LATER]
    opened = claim_rated(
        store, "runner-b", now=LATER + datetime.timedelta(seconds=60, microseconds=1)
    )
    assert [job.id for job in opened.claimed] == syncs[2:4]


def test_a_keyed_rate_counts_each_key_apart(store):
    ada = [add_rated(store, "call", "ada") for _ in range(2)]
    bob = add_rated(store, "call", "bob")
    taken = claim_rated(store, now=LATER)
    assert sorted(job.id for job in taken.claimed) == sorted([ada[0], bob])
    again = claim_rated(store, now=LATER + datetime.timedelta(seconds=5))
    assert again.claimed == [] and again.rate_opens_at == LATER + datetime.timedelta(seconds=10)
    assert [
        job.id for job in claim_rated(store, now=LATER + datetime.timedelta(seconds=11)).claimed
    ] == [ada[1]]


def test_claims_racing_from_many_runners_never_start_more_than_the_rate(store):
    syncs = [add_rated(store, "sync") for _ in range(12)]
    taken: list[list[str]] = []

    def runner(number: int):
        def take() -> None:
            taken.append(
                [job.id for job in claim_rated(store, f"runner-{number}", now=LATER, n=3).claimed]
            )

        return take

    run_in_threads([runner(number) for number in range(6)])
    claimed = [job_id for batch in taken for job_id in batch]
    assert len(claimed) == 2 and set(claimed) <= set(syncs)


def test_a_claim_whose_clock_reads_earlier_still_counts_starts_a_later_claim_left(store):
    """A runner that read its clock before waiting for the lock (or whose clock lags) claims
    with an earlier time than one that went before it: starts that left the later one's
    window are still in its own, and are still counted, not pruned."""
    first = [add_rated(store, "sync") for _ in range(2)]
    assert [job.id for job in claim_rated(store, now=LATER).claimed] == first
    assert claim_rated(store, "runner-b", now=LATER + datetime.timedelta(seconds=61)).claimed == []
    add_rated(store, "sync")
    stale = claim_rated(store, "runner-c", now=LATER + datetime.timedelta(seconds=30))
    assert stale.claimed == []  # its window still holds the two starts at LATER


def test_an_unreadable_limited_row_is_failed_and_another_claimed_in_its_place(store, engine):
    if engine == "memory":
        pytest.skip("the memory store holds typed values that only it writes: none is unreadable")
    column, value = unreadable(engine, "time")
    bad, good = add(store, "export", priority=0), add(store, "export", priority=5)
    write_row(store, bad, **{column: value})
    done = store.run_batch(
        Batch(claim=1, limits=LIMITS), runner_id="runner-a", now=LATER, kinds=KINDS
    )
    assert [job.id for job in done.claimed] == [good]
    assert (store.get(bad).status, store.get(bad).error) == (Status.FAILED, "internal_error")


def add_fair(store, key: str | None, *, priority: int = 0) -> str:
    job_id = _ids.next_id(next(_ms))
    store.create(
        NewJob(id=job_id, kind="tenant", payload="{}", fair_key=key, priority=priority), now=T0
    )
    return job_id


def claim_fair(store, runner_id: str = "runner-a", *, n: int):
    """Every claim at one time: turns are counted, not timed, so a tie never repeats a key."""
    batch = Batch(claim=n, fair=frozenset({"tenant"}))
    done = store.run_batch(batch, runner_id=runner_id, now=LATER, kinds=("tenant",))
    return [job.id for job in done.claimed]


def test_fair_keys_take_turns_however_deep_one_keys_backlog(store):
    big = [add_fair(store, "big") for _ in range(20)]
    small = [add_fair(store, "small") for _ in range(3)]
    # Which jobs a batch takes is the turns'; it hands them out in claim order.
    assert claim_fair(store, n=4) == [big[0], big[1], small[0], small[1]]
    assert claim_fair(store, "runner-b", n=1) == [big[2]]  # both had a turn: big's is older
    assert claim_fair(store, "runner-b", n=1) == [small[2]]
    assert claim_fair(store, n=3) == big[3:6]  # small has none left: no worker idles


def test_fairness_keeps_priority_order_and_claims_jobs_with_no_key(store):
    late = add_fair(store, "small", priority=5)
    urgent = [add_fair(store, "big", priority=0) for _ in range(2)]
    unkeyed = add_fair(store, None, priority=0)
    assert claim_fair(store, n=4) == [*urgent, unkeyed, late]  # priority 0's, then 5's


def test_a_small_tenants_five_jobs_behind_ten_thousand_of_a_large_one_start_within_fifty(store):
    big = [
        NewJob(id=_ids.next_id(next(_ms)), kind="tenant", payload="{}", fair_key="big")
        for _ in range(10_000)
    ]
    store.create_many(big, now=T0)
    small = {add_fair(store, "small") for _ in range(5)}
    started: list[str] = []
    while len(started) < 50:
        started += claim_fair(store, f"runner-{len(started) % 3}", n=2)  # two workers' claims
    assert small <= set(started[:50])


def test_a_fair_kinds_jobs_with_no_key_come_before_a_later_prioritys_keyed_ones(store):
    keyed = add_fair(store, "big", priority=0)
    unkeyed = add_fair(store, None, priority=0)
    add_fair(store, "small", priority=5)
    assert claim_fair(store, n=2) == [keyed, unkeyed]


def test_a_fair_key_that_appears_once_the_listed_keys_ran_dry_starts_at_once(store):
    """A store may serve a fair kind's key list for a moment; when its keys have no job to
    give, it lists them again before it looks further (no worker idles)."""
    only = add_fair(store, "big")
    assert claim_fair(store, n=1) == [only]
    late = add_fair(store, "late")
    lower = add_fair(store, "big", priority=5)
    assert claim_fair(store, n=1) == [late]  # not the later priority's job
    assert claim_fair(store, n=1) == [lower]


def test_a_claim_that_found_its_listed_keys_dry_lists_them_again_before_the_next(
    store, monkeypatch
):
    """A claim that takes the listed keys' last jobs (with the lock) and falls short drops
    the list it went by, though fresh: the next claim gives a key that never had a turn its
    turn before a listed key's new job."""
    monkeypatch.setattr(fair_order, "_clock", lambda: 0.0)  # the list would stay fresh
    a, b = add_fair(store, "a"), add_fair(store, "b")
    assert claim_fair(store, n=1) == [a]  # lists the keys {a, b}
    assert claim_fair(store, n=2) == [b]  # a has none left: the listed keys ran dry
    again, new = add_fair(store, "a"), add_fair(store, "c")
    assert claim_fair(store, n=1) == [new]  # c never had a turn
    assert claim_fair(store, n=1) == [again]


AWKWARD_KEYS = ('say "hi"', "back\\slash", "a,b", "{braces}", "NULL", "", " spaced ", "ключ")


def test_fair_keys_of_any_text_take_turns_in_the_claims_that_reuse_their_list(store, monkeypatch):
    """Keys with quotes, a backslash, a comma, braces, spaces, no text, or 'NULL' as text:
    each has a turn in a round, in the claims that go by the listed keys (PostgreSQL sends
    them as one text[] literal)."""
    monkeypatch.setattr(fair_order, "_clock", lambda: 0.0)  # the list stays fresh
    rounds = [{add_fair(store, key) for key in AWKWARD_KEYS} for _ in range(3)]
    size = len(AWKWARD_KEYS)
    started = [job for _ in range(3 * size) for job in claim_fair(store, n=1)]
    assert [set(started[n : n + size]) for n in range(0, 3 * size, size)] == rounds


def test_a_fair_key_that_appears_joins_the_round_once_the_keys_are_listed_again(store, monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(fair_order, "_clock", lambda: clock[0])
    big = [add_fair(store, "big") for _ in range(5)]
    assert claim_fair(store, n=1) == big[:1]  # the keys are listed: big's alone
    late = add_fair(store, "late")
    first = claim_fair(store, n=1)  # the list of a moment ago may serve (not the memory's)
    clock[0] += fair_order.FAIR_KEYS_FRESH
    second = claim_fair(store, n=1)
    assert late in first + second  # listed again: it never had a turn, so it goes first
    assert claim_fair(store, n=2) == big[2:4]  # big had its turns: none is repeated


class RoundRobin:
    """What claims of a fair kind take, by the rule: the key whose last turn is oldest (or
    never came) first, each key's oldest job first."""

    def __init__(self, store, backlog: dict[str, int]) -> None:
        self.jobs = {key: [add_fair(store, key) for _ in range(n)] for key, n in backlog.items()}
        self.turns: dict[str, int] = {}

    def claim(self, n: int) -> list[str]:
        expected = []
        for _ in range(n):
            waiting = [key for key in sorted(self.jobs) if self.jobs[key]]
            if not waiting:
                break
            key = min(waiting, key=lambda key: (key in self.turns, self.turns.get(key, 0), key))
            self.turns[key] = max(self.turns.values(), default=0) + 1
            expected.append(self.jobs[key].pop(0))
        return expected


def test_fair_claims_from_two_stores_follow_the_round_robin_claim_after_claim(store, engine):
    """Claim after claim, from two stores on one database (each may serve its key list of
    a moment ago, and claim a few keys' first jobs in the round trip of its lock), every
    claim takes what the round robin gives."""
    rule = RoundRobin(store, {"a": 7, "b": 2, "c": 5, "d": 1, "e": 4})
    with ExitStack() as stack:
        stores = [store, same_database(store, engine, stack)]
        for number, n in enumerate([1, 2, 3, 1, 1, 4, 2, 3, 1, 5]):
            claimed = claim_fair(stores[number % 2], f"runner-{number % 2}", n=n)
            assert sorted(claimed) == sorted(rule.claim(n)), f"claim {number}"
    assert not any(rule.jobs.values())


def test_a_stores_fair_claims_in_a_row_then_another_stores_follow_the_round_robin(
    store, engine, monkeypatch
):
    """A store's claims in a row may order the keys by the round its last claims left (SQLite:
    fair_round.py); once another store took turns, that round is out of date, and every
    claim still takes what the round robin gives. The key lists stay fresh but once."""
    clock = [0.0]
    monkeypatch.setattr(fair_order, "_clock", lambda: clock[0])
    rule = RoundRobin(store, {f"k{n:02}": 2 + n % 3 for n in range(30)})  # more than a chunk
    with ExitStack() as stack:
        stores = [store, same_database(store, engine, stack)]
        claims = [(0, 2), (0, 3), (0, 1), (0, 2), (1, 2), (1, 1), (0, 2), (0, 1), None,
                  (0, 3), (0, 2), (0, 1), (0, 3), (0, 2), (0, 3), (0, 2), (0, 1), (1, 2),
                  (1, 1), (0, 2), (0, 3)]  # fmt: skip
        for number, step in enumerate(claims):
            if step is None:  # every key list, and every round found out of date, grows old
                clock[0] += fair_order.FAIR_KEYS_FRESH
                continue
            which, n = step
            claimed = claim_fair(stores[which], f"runner-{which}", n=n)
            assert sorted(claimed) == sorted(rule.claim(n)), f"claim {number}"


def test_a_fair_claims_jobs_past_the_keys_it_took_with_its_lock_take_their_turns_after(
    store, engine, monkeypatch
):
    """A store's claim takes the first keys' heads as its list of a moment ago orders them;
    when those run dry, what more it takes goes by the turns those keys just had."""
    monkeypatch.setattr(fair_order, "_clock", lambda: 0.0)  # the list stays fresh
    a = [add_fair(store, "a") for _ in range(3)]
    for name in ("b1", "b2", "b3", "b4", "b5", "b6", "b7"):
        add_fair(store, name)
    c = [add_fair(store, "c") for _ in range(2)]
    with ExitStack() as stack:
        other = same_database(store, engine, stack)
        assert claim_fair(store, n=1) == a[:1]  # listed; a had the first turn
        assert len(claim_fair(other, "runner-b", n=8)) == 8  # b1 to b7, then c: all dry but a, c
        assert claim_fair(store, n=2) == [a[1], c[1]]  # a's turn, then c's (a had its own)


def test_a_fair_claim_takes_a_higher_priority_that_came_after_its_keys_were_listed(store):
    low = [add_fair(store, "big", priority=5) for _ in range(3)]
    assert claim_fair(store, n=1) == low[:1]  # priority 5's keys are listed
    urgent = add_fair(store, "big", priority=0)
    assert claim_fair(store, n=2) == [urgent, low[1]]


def test_claims_one_after_another_never_start_more_than_the_rate_in_its_window(store):
    """Claim after claim (a store may count the starts it kept and claim in the round trip
    of its lock), each counts every start in the window, those kept and those since."""
    syncs = [add_rated(store, "sync") for _ in range(6)]
    second = datetime.timedelta(seconds=1)
    taken = []
    alone = Batch(claim=1, rates={"sync": RATES["sync"]})  # the runner's one limited kind

    def claim_syncs(now: datetime.datetime, n: int):
        return store.run_batch(
            attrs.evolve(alone, claim=n), runner_id="runner-a", now=now, kinds=("sync",)
        )

    for step, n in enumerate([1, 1, 5, 5, 5]):
        done = claim_syncs(LATER + step * second, n)
        taken += [job.id for job in done.claimed]
        if step >= 2:  # jobs held back: it says when the first start leaves the window
            assert done.rate_opens_at == LATER + datetime.timedelta(seconds=60), step
    assert taken == syncs[:2]  # the rate: 2 a minute
    opened = claim_syncs(LATER + datetime.timedelta(seconds=60), 5)
    assert [job.id for job in opened.claimed] == syncs[2:3]  # the first start left the window
    assert [job.id for job in claim_syncs(LATER + 61 * second, 5).claimed] == syncs[3:4]


@pytest.mark.parametrize(
    "limit", [None, RunningLimit(n=5, keyed=False)], ids=["a rate alone", "a limit beside it"]
)
def test_a_rates_claim_counts_its_window_by_the_clock_read_once_its_lock_is_held(store, limit):
    """A claim counts its window as of its clock read under the lock, not as of the batch's
    start: a start that left the window meanwhile frees its slot for this claim. With a limit
    beside the rate (room to spare) alike: its one statement counts the window as of the
    batch's start, and the claim then picks on."""
    syncs = [add_rated(store, "sync") for _ in range(4)]
    limits = {} if limit is None else {"sync": limit}
    alone = Batch(claim=1, rates={"sync": RATES["sync"]}, limits=limits)
    for step, n in enumerate([1, 1, 5]):  # two starts, a second apart; then the window full
        store.run_batch(
            attrs.evolve(alone, claim=n), runner_id="runner-a",
            now=LATER + datetime.timedelta(seconds=step), kinds=("sync",),
        )  # fmt: skip
    read_late = LATER + datetime.timedelta(seconds=60.5)  # the first start has left by then
    done = store.run_batch(
        attrs.evolve(alone, claim=5, clock=lambda: read_late), runner_id="runner-a",
        now=LATER + datetime.timedelta(seconds=59), kinds=("sync",),
    )  # fmt: skip
    assert [job.id for job in done.claimed] == syncs[2:3]
    assert done.rate_opens_at == LATER + datetime.timedelta(seconds=61)  # the second's leaving


@pytest.mark.parametrize(
    "before",
    [RateLimit(n=5, per=60.0, keyed=False), RateLimit(n=1, per=60.0, keyed=True)],
    ids=["lowered", "keyed before"],
)
def test_a_rates_window_fuller_than_a_new_rate_holds_jobs_back_without_failing(store, before):
    """A deploy lowered the rate, or made it a rate without a key: the window holds more
    starts than the new rate allows, so claims take nothing (no error) until it opens."""
    for key in ["a", "b", "c"] * 3:
        add_rated(store, "sync", key)
    second = datetime.timedelta(seconds=1)
    for step in range(3):  # under the old rate: three starts, and the store keeps its window
        store.run_batch(
            Batch(claim=5, rates={"sync": before}), runner_id="runner-a",
            now=LATER + step * second, kinds=("sync",),
        )  # fmt: skip
    lowered = Batch(claim=1, rates={"sync": RateLimit(n=1, per=60.0, keyed=False)})
    for step in range(5, 9):
        done = store.run_batch(
            lowered, runner_id="runner-a", now=LATER + step * second, kinds=("sync",)
        )
        assert done.claimed == [], step
        assert done.rate_opens_at is not None and done.rate_opens_at > LATER + step * second


def test_a_rates_starts_count_under_their_jobs_keys_once_the_rate_is_keyed(store):
    """A start is recorded under its job's rate key however it was claimed: a rate made
    keyed (a deploy) counts the starts claimed under the rate without a key."""
    unkeyed = {"call": RateLimit(n=10, per=60.0, keyed=False)}
    calls = [add_rated(store, "call", key) for key in ("acme", "acme", "globex")]
    for step in range(3):  # the later claims count by the window this store kept
        store.run_batch(
            Batch(claim=1, rates=unkeyed), runner_id="runner-a",
            now=LATER + step * datetime.timedelta(seconds=1), kinds=("call",),
        )  # fmt: skip
    assert [store.get(job_id).status for job_id in calls] == [Status.RUNNING] * 3
    more = [add_rated(store, "call", key) for key in ("acme", "globex", "initech")]
    keyed = claim_rated(store, now=LATER + datetime.timedelta(seconds=5), n=5)  # call: 1 per key
    assert [job.id for job in keyed.claimed] == more[2:]  # acme and globex started already


def test_starts_another_process_recorded_count_in_the_window_stamped_alike_or_not(store, engine):
    """A store keeps the window it saw and reads only the starts recorded since: those of
    another store on the database count, each once, however many share one stamp."""
    with ExitStack() as stack:
        other = same_database(store, engine, stack)
        syncs = [add_rated(store, "sync") for _ in range(4)]
        claimed = [claim_rated(store, now=LATER, n=1), claim_rated(other, now=LATER, n=1)]
        assert [job.id for done in claimed for job in done.claimed] == syncs[:2]
        assert claim_rated(store, now=LATER, n=1).claimed == []  # both starts, at one stamp
        assert claim_rated(other, now=LATER, n=1).claimed == []
        later = LATER + datetime.timedelta(seconds=60)  # the window has moved past both
        assert [job.id for job in claim_rated(other, now=later, n=1).claimed] == syncs[2:3]
        third = claim_rated(store, now=later + datetime.timedelta(seconds=1), n=5)
        assert [job.id for job in third.claimed] == syncs[3:]  # the other's start counted
        assert claim_rated(other, now=later + datetime.timedelta(seconds=2), n=5).claimed == []


def test_a_claim_whose_clock_lags_the_last_one_still_counts_the_starts_in_its_window(store):
    """A claim whose clock is ahead (and found nothing to start) has looked past the window
    of one whose clock lags: the lagging one still counts every start in its own."""
    syncs = [add_rated(store, "sync") for _ in range(2)]
    assert [job.id for job in claim_rated(store, now=LATER, n=2).claimed] == syncs
    add_rated(store, "sync")
    assert claim_rated(store, now=LATER, n=1).claimed == []  # the window is full
    ahead = LATER + datetime.timedelta(seconds=61)  # both starts are out of its window
    elsewhere = store.run_batch(  # a runner of another queue: it counts, and starts none
        Batch(claim=1, rates=RATES), runner_id="runner-c", now=ahead, kinds=("sync", "call"),
        queues=("elsewhere",),
    )  # fmt: skip
    assert elsewhere.claimed == []
    lagging = LATER + datetime.timedelta(seconds=30)  # both starts are in its window
    assert claim_rated(store, "runner-b", now=lagging, n=1).claimed == []


def test_a_claim_whose_clock_read_came_before_its_wait_never_stamps_a_start_out_of_order(store):
    """Runner A read its clock, then waited for the lock while B started one at a later time:
    A's start is stamped no earlier than B's, so no later window misses it."""
    first = [add_rated(store, "sync") for _ in range(3)]
    b_time = LATER + datetime.timedelta(seconds=1)
    assert [job.id for job in claim_rated(store, "runner-b", now=b_time, n=1).claimed] == first[:1]
    assert [job.id for job in claim_rated(store, "runner-a", now=LATER, n=1).claimed] == first[1:2]
    of_kind, _ = store.starts_alike(first[2], since=LATER - datetime.timedelta(seconds=60))
    assert of_kind == [b_time, b_time]
    # 60 s after A's clock read but within 60 s of both starts: the window is still full.
    late = claim_rated(store, "runner-c", now=LATER + datetime.timedelta(seconds=60.5), n=1)
    assert late.claimed == []


def test_a_rates_starts_are_stamped_by_the_clock_read_once_the_claims_locks_are_held(store):
    """The batch's ``now`` was read before any wait for the lock; its ``clock`` is read after:
    the start is counted at the later reading, so a slow lock cannot stamp it in the past."""
    syncs = [add_rated(store, "sync") for _ in range(2)]
    after_the_wait = LATER + datetime.timedelta(seconds=5)
    batch = Batch(claim=1, rates=RATES, clock=lambda: after_the_wait)
    store.run_batch(batch, runner_id="runner-a", now=LATER, kinds=("sync", "call"))
    of_kind, _ = store.starts_alike(syncs[1], since=LATER - datetime.timedelta(seconds=60))
    assert of_kind == [after_the_wait]


def test_a_key_at_its_limit_with_a_long_backlog_is_passed_over(store):
    big = [add(store, "charge", "big") for _ in range(450)]  # more than two pages of 200
    small = [add(store, "charge", f"small-{n}") for n in range(3)]
    assert [job.id for job in claim(store, n=1).claimed] == big[:1]  # big is at its limit
    taken = claim(store, "runner-b", n=5)
    assert [job.id for job in taken.claimed] == small


def test_a_fair_claim_into_a_later_priority_counts_the_turns_it_took_at_the_first(store):
    """Turns are the kind's, whatever the priority: a key that had its turn at priority 0
    in a claim goes after the keys that had none when the same claim reaches priority 1."""
    urgent = add_fair(store, "a", priority=0)
    later_a, later_b = add_fair(store, "a", priority=1), add_fair(store, "b", priority=1)
    assert claim_fair(store, n=2) == [urgent, later_b]
    assert claim_fair(store, n=1) == [later_a]
