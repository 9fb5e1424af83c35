"""Concurrency limits through the runner: registration, keys computed at enqueue, and
never more handlers at once than the limit across runners sharing one store."""

from __future__ import annotations

import datetime
import threading

import attrs
import pytest

from jobtable.core import InvalidOptionError, JobContext, Limit, Rate, RegistrationError, Status
from jobtable.core.liveness import SWEEP_INTERVAL
from tests.support.harness import JobSystem
from tests.unit.kinds_for_tests import CountPayload, CountResult
from tests.unit.test_liveness import a_dead_runner_holding, sweep


@attrs.frozen
class Customer:
    id: str


@attrs.frozen
class ChargePayload:
    customer: Customer
    cents: int = 0


class Overlap:
    """Handlers that wait until released, counting how many run at once per key."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running: dict[str, int] = {}
        self.most: dict[str, int] = {}
        self.started = threading.Semaphore(0)
        self.release = threading.Event()

    def handler(self, key_of):
        def run(ctx: JobContext, payload) -> CountResult:
            key = key_of(payload)
            with self.lock:
                self.running[key] = self.running.get(key, 0) + 1
                self.most[key] = max(self.most.get(key, 0), self.running[key])
            self.started.release()
            self.release.wait(30)
            with self.lock:
                self.running[key] -= 1
            return CountResult(done=1)

        return run


def test_two_runners_never_run_more_than_the_kinds_limit_at_once(make_system):
    overlap = Overlap()
    systems: list[JobSystem] = []
    for _ in range(2):
        system = make_system(workers=3)
        kind = system.kinds.register(
            "export", overlap.handler(lambda p: "all"), payload=CountPayload, limit=Limit(2)
        )
        systems.append(system)
    ids = [kind.enqueue(CountPayload()) for _ in range(6)]
    for system in systems:
        system.start()
    assert overlap.started.acquire(timeout=10) and overlap.started.acquire(timeout=10)
    store = systems[0].store
    store.wait_until(
        lambda: sum(systems[0].runner.get(i).status is Status.RUNNING for i in ids) == 2
    )
    assert not overlap.started.acquire(timeout=0.2)  # four more idle workers, none starts one
    queued = [job_id for job_id in ids if systems[0].runner.get(job_id).status is Status.QUEUED]
    assert len(queued) == 4
    assert all(systems[0].runner.detail(job_id).attempt == 0 for job_id in queued)
    assert systems[0].runner.detail(queued[0]).waiting == (
        "held back by its kind's limit: 2 of 2 running",
    )
    overlap.release.set()
    for job_id in ids:
        assert systems[0].wait_for(job_id).status is Status.SUCCEEDED
    assert overlap.most == {"all": 2}


def test_a_keyed_limit_runs_one_per_customer_and_others_beside_it(make_system):
    overlap = Overlap()
    system = make_system(workers=4)
    kind = system.kinds.register(
        "charge",
        overlap.handler(lambda p: p.customer.id),
        payload=ChargePayload,
        limit=Limit(1, key="customer.id"),
    )
    ids = [kind.enqueue(ChargePayload(Customer(name))) for name in ("a", "a", "a", "b")]
    system.start()
    assert overlap.started.acquire(timeout=10) and overlap.started.acquire(timeout=10)
    assert not overlap.started.acquire(timeout=0.2)  # a's second waits; two workers idle
    assert system.runner.detail(ids[1]).waiting == ("held back by its key's limit: 1 of 1 running",)
    overlap.release.set()
    for job_id in ids:
        assert system.wait_for(job_id).status is Status.SUCCEEDED
    assert overlap.most == {"a": 1, "b": 1}


def test_a_key_callable_computes_the_key_and_one_that_raises_stores_nothing(make_system):
    system = make_system()

    def key(payload: CountPayload) -> str:
        if payload.steps < 0:
            raise ValueError("secret detail")
        return f"steps-{payload.steps}"

    kind = system.kinds.register(
        "count",
        lambda ctx, p: CountResult(done=1),
        result=CountResult,
        payload=CountPayload,
        limit=Limit(1, key=key),
    )
    job_id = kind.enqueue(CountPayload(steps=3))
    assert system.store.inner.row(job_id)["limit_key"] == "steps-3"
    with pytest.raises(InvalidOptionError) as raised:
        kind.enqueue(CountPayload(steps=-1))
    assert raised.value.field == "limit key" and "secret" not in str(raised.value)
    assert len(system.runner.list_jobs(limit=10).jobs) == 1


@pytest.mark.parametrize(
    ("option", "problem"),
    [
        ({"limit": Limit(0)}, "limit n must be a whole number of 1 or more"),
        ({"limit": Limit(-2)}, "limit n must be a whole number of 1 or more"),
        ({"limit": Limit(True)}, "limit n must be a whole number of 1 or more"),
        ({"limit": Limit(1, key="nope")}, "limit key field not in the payload: nope"),
        (
            {"limit": Limit(1, key="customer.nope")},
            "limit key field not in the payload: customer.nope",
        ),
        ({"limit": 2}, "limit must be a Limit(n) or Limit(n, key=...)"),
        ({"rate": Rate(0, per=60)}, "rate n must be a whole number of 1 or more"),
        ({"rate": Rate(2, per=0)}, "rate per must be seconds above 0 and at most 604800"),
        ({"rate": Rate(2, per=10**7)}, "rate per must be seconds above 0 and at most 604800"),
        ({"rate": Rate(2, per=60, key="nope")}, "rate key field not in the payload: nope"),
        ({"rate": 5}, "rate must be a Rate(n, per=seconds) or Rate(n, per=..., key=...)"),
    ],
)
def test_a_bad_limit_or_rate_is_refused_at_registration(make_system, option, problem):
    system = make_system()
    with pytest.raises(RegistrationError) as raised:
        system.kinds.register(
            "charge",
            lambda ctx, p: CountResult(done=1),
            result=CountResult,
            payload=ChargePayload,
            **option,
        )
    assert str(raised.value) == f"register 'charge': {problem}"


def test_a_limited_handler_that_ignores_its_stop_keeps_its_slot_until_it_returns(make_system):
    system = make_system(workers=2)
    release = threading.Event()
    started = threading.Semaphore(0)

    def stubborn(ctx: JobContext, payload: CountPayload) -> CountResult:
        started.release()
        if payload.steps == 0:
            release.wait(30)  # ignores its stop
        return CountResult(done=payload.steps)

    kind = system.kinds.register(
        "stubborn", stubborn, payload=CountPayload, timeout=5, limit=Limit(1)
    )
    system.start()
    stuck = kind.enqueue(CountPayload(steps=0))
    assert started.acquire(timeout=10)
    waiting = kind.enqueue(CountPayload(steps=1))
    assert system.clock.wait_for_sleepers(1) == [5.0]
    system.clock.advance(5)  # told to stop: it does not
    assert system.clock.wait_for_sleepers(1) == [2.0]
    system.clock.advance(2)  # past its grace: not left behind, its slot kept
    system.store.wait_until(lambda: "keeps its limit's slot" in system.logs.text)
    assert system.runner.get(stuck).status is Status.RUNNING
    assert not started.acquire(timeout=0.2)  # the other worker is idle, the next job waits
    assert system.runner.get(waiting).status is Status.QUEUED
    release.set()  # it returns at last: its outcome is what it returned; the slot frees
    job = system.wait_for(stuck)
    assert (job.status, job.result) == (Status.SUCCEEDED, {"done": 0})
    assert system.wait_for(waiting).status is Status.SUCCEEDED


def test_a_rate_holds_jobs_back_and_the_runner_sleeps_until_its_window_moves_on(make_system):
    system = make_system(workers=3)
    started: list[int] = []

    def record(ctx: JobContext, payload: CountPayload) -> CountResult:
        started.append(payload.steps)
        return CountResult(done=payload.steps)

    kind = system.kinds.register("sync", record, payload=CountPayload, rate=Rate(2, per=60))
    ids = [kind.enqueue(CountPayload(steps=n)) for n in range(5)]
    system.start()
    for job_id in ids[:2]:
        assert system.wait_for(job_id).status is Status.SUCCEEDED
    assert system.runner.get(ids[2]).status is Status.QUEUED
    assert system.runner.detail(ids[2]).attempt == 0
    opens = (system.clock.now() + datetime.timedelta(seconds=60)).isoformat()
    assert system.runner.detail(ids[2]).waiting == (
        f"held back by its kind's rate: 2 of 2 starts in 60 s; may start at {opens}",
    )
    assert 60.0 in system.clock.wait_for_sleepers(1)  # the scheduler sleeps until the opening
    system.clock.advance(60)
    for job_id in ids[2:4]:
        assert system.wait_for(job_id).status is Status.SUCCEEDED
    assert system.runner.get(ids[4]).status is Status.QUEUED
    assert started == [0, 1, 2, 3]


@attrs.frozen
class MaybeCustomer:
    customer: Customer | None = None


def test_a_key_through_an_optional_field_is_accepted_and_a_missing_value_refused(make_system):
    system = make_system()
    kind = system.kinds.register(
        "charge",
        lambda ctx, p: CountResult(done=1),
        result=CountResult,
        payload=MaybeCustomer,
        limit=Limit(1, key="customer.id"),
    )
    job_id = kind.enqueue(MaybeCustomer(Customer("c-1")))
    assert system.store.inner.row(job_id)["limit_key"] == "c-1"
    with pytest.raises(InvalidOptionError) as raised:
        kind.enqueue(MaybeCustomer())
    assert str(raised.value) == "limit key: the payload has no value at customer.id"


def test_a_slot_freed_by_settling_a_dead_runners_job_wakes_a_held_back_job(make_system):
    system = make_system(workers=1, sweep_interval=SWEEP_INTERVAL)
    kind = system.kinds.register(
        "export", lambda ctx, p: CountResult(done=1), result=CountResult,
        payload=CountPayload, limit=Limit(1),
    )  # fmt: skip
    held, waiting = kind.enqueue(CountPayload()), kind.enqueue(CountPayload())
    a_dead_runner_holding(system.store, system.clock, kind="export", job_id=held)
    system.start()
    system.store.wait_until(
        lambda: (
            system.runner.detail(waiting).waiting
            == ("held back by its kind's limit: 1 of 1 running",)
        )
    )
    while system.runner.get(held).status is Status.RUNNING:
        sweep(system)  # judged dead, then settled: failed, its slot free
    assert system.wait_for(waiting).status is Status.SUCCEEDED  # woken, not left to wait


@attrs.frozen
class TenantPayload:
    tenant: str


def test_a_fair_kinds_tenants_take_turns_in_the_runner(make_system):
    system = make_system(workers=1)
    order: list[str] = []

    def record(ctx: JobContext, payload: TenantPayload) -> CountResult:
        order.append(payload.tenant)
        return CountResult(done=1)

    kind = system.kinds.register("sync", record, payload=TenantPayload, fair_key="tenant")
    ids = [kind.enqueue(TenantPayload("big")) for _ in range(6)]
    ids += [kind.enqueue(TenantPayload("small")) for _ in range(2)]
    assert system.store.inner.row(ids[-1])["fair_key"] == "small"
    system.start()
    for job_id in ids:
        assert system.wait_for(job_id).status is Status.SUCCEEDED
    assert order[:4] in (["big", "small", "big", "small"], ["small", "big", "small", "big"])


def test_a_fair_key_the_payload_lacks_is_refused_and_one_that_cannot_be_computed_too(make_system):
    system = make_system()
    with pytest.raises(RegistrationError) as raised:
        system.kinds.register(
            "sync",
            lambda ctx, p: CountResult(done=1),
            result=CountResult,
            payload=TenantPayload,
            fair_key="customer",
        )
    assert str(raised.value) == "register 'sync': fair key field not in the payload: customer"

    def broken(payload: TenantPayload) -> str:
        raise KeyError(payload.tenant)

    kind = system.kinds.register(
        "sync",
        lambda ctx, p: CountResult(done=1),
        result=CountResult,
        payload=TenantPayload,
        fair_key=broken,
    )
    with pytest.raises(InvalidOptionError) as refused:
        kind.enqueue(TenantPayload("t-secret"))
    assert refused.value.field == "fair key" and "t-secret" not in str(refused.value)


@pytest.mark.parametrize("option", ["limit", "rate", "fair_key"])
def test_a_key_holding_a_nul_character_is_refused_at_enqueue(make_system, option):
    """No store keeps it whole (PostgreSQL's text refuses it; SQLite's JSON reading cuts it
    off, so one key would stand for another): refused, naming the key, nothing stored."""
    system = make_system()
    key = {
        "limit": {"limit": Limit(1, key="tenant")},
        "rate": {"rate": Rate(5, per=60, key="tenant")},
        "fair_key": {"fair_key": "tenant"},
    }[option]
    kind = system.kinds.register(
        "sync", lambda ctx, p: CountResult(done=1), result=CountResult, payload=TenantPayload, **key
    )
    with pytest.raises(InvalidOptionError) as refused:
        kind.enqueue(TenantPayload("a\x00b"))
    assert refused.value.field == {"limit": "limit key", "rate": "rate key"}.get(option, "fair key")
    assert "NUL" in str(refused.value)
    assert not system.runner.list_jobs(limit=10).jobs
