"""One wrapper runs a hook around every store call (core/around.py); the announcer is one."""

from __future__ import annotations

import datetime

import pytest

from jobtable.adapters.memory import MemoryStore
from jobtable.core import NewJob
from jobtable.core.announcer import Announcer
from jobtable.core.around import AroundStore, Call, StoreHook, around
from jobtable.core.changes import JobChanges
from jobtable.core.errors import StoreError
from jobtable.core.ids import JobIdGenerator
from jobtable.core.outcome import Succeed

T0 = datetime.datetime(2026, 3, 1, 12, 0, tzinfo=datetime.UTC)
_ids = JobIdGenerator()


def new_job(queue: str = "default") -> NewJob:
    return NewJob(id=_ids.next_id(1_772_366_400_000), kind="count", payload="{}", queue=queue)


class Recording(StoreHook):
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, object]] = []

    def before(self, call: Call) -> None:
        self.seen.append(("before", call.method, call.args))

    def after(self, call: Call, result: object) -> None:
        self.seen.append(("after", call.method, result))


def test_a_hook_runs_around_every_method_with_its_arguments_and_result():
    hook = Recording()
    store = around(MemoryStore(), hook)
    job = new_job()
    store.create(job, now=T0)
    assert store.get(job.id).id == job.id
    assert [(when, method) for when, method, _ in hook.seen] == [
        ("before", "create"), ("after", "create"), ("before", "get"), ("after", "get"),
    ]  # fmt: skip
    assert hook.seen[0][2] == (job,)
    assert store.liveness_terms == MemoryStore.liveness_terms  # attributes pass as they are


def test_a_hook_that_raises_before_keeps_the_call_from_the_store():
    class Refusing(StoreHook):
        def before(self, call: Call) -> None:
            raise StoreError("database locked")

    inner = MemoryStore()
    store = around(inner, Refusing())
    job = new_job()
    with pytest.raises(StoreError):
        store.create(job, now=T0)
    assert inner.get(job.id) is None


def test_methods_a_hook_does_not_hook_pass_straight_through_as_the_store_has_them_now():
    class OnlyCreates(Recording):
        def hooks(self, method: str) -> bool:
            return method == "create"

    hook = OnlyCreates()
    inner = MemoryStore()
    store = AroundStore(inner, hook)
    assert store.get("nobody") is None
    inner.get = lambda job_id: "patched"  # type: ignore[method-assign]
    assert store.get("nobody") == "patched"  # looked up on each call
    assert hook.seen == []


def test_a_record_pokes_the_readers_of_its_job_and_only_them():
    changes = JobChanges()
    store = around(MemoryStore(), Announcer(changes, claimer=object()))
    job = new_job()
    store.create(job, now=T0)
    claimed = store.claim_next(runner_id="r", now=T0)
    with changes.subscribe(job.id) as mine, changes.subscribe("another") as other:
        assert store.record(claimed.claim, Succeed(result="{}"), now=T0)
        assert mine.wait(0) and not other.wait(0)


def test_new_work_wakes_the_other_claimers_serving_its_queue_never_the_writer():
    changes = JobChanges()
    woken: list[str] = []
    writer, mail, reports = object(), object(), object()
    changes.listen_for_work(writer, None, lambda: woken.append("writer"))
    changes.listen_for_work(mail, frozenset({"mail"}), lambda: woken.append("mail"))
    changes.listen_for_work(reports, frozenset({"reports"}), lambda: woken.append("reports"))
    store = around(MemoryStore(), Announcer(changes, claimer=writer))

    store.create(new_job("mail"), now=T0)
    assert woken == ["mail"]
    store.set_queue_paused("reports", paused=True, now=T0)
    assert woken == ["mail"]  # a pause gives nobody work
    store.set_queue_paused("reports", paused=False, now=T0)
    assert woken == ["mail", "reports"]
