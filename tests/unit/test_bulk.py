"""Bulk actions (core/bulk.py): cancel or retry every job a filter matches, in batches, up to
the newest job when the action began, and never more than once. Run again on SQLite and
PostgreSQL by tests/integration/test_jobs_on_*.py."""

from __future__ import annotations

import datetime
import threading

import pytest

from jobtable.core import BulkAction, BulkFilter, JobContext, State, Status
from jobtable.core.bulk import BATCH, bulk_filter
from jobtable.core.enqueue_options import InvalidOptionError
from jobtable.core.jobs import CancelOutcome, JobFilter
from tests.unit.kinds_for_tests import CountPayload, CountResult, count

HELD = "held"
"""A paused queue: its jobs stay available until a test resumes it."""


def _held_jobs(system, kind, n: int) -> list[str]:
    requests = [kind.job(CountPayload(steps=i), queue=HELD) for i in range(n)]
    return [str(job_id) for job_id in kind.enqueue_many(requests)]


def _states(system, ids) -> dict[str, int]:
    seen: dict[str, int] = {}
    for job_id in ids:
        state = system.runner.detail(job_id).state
        seen[state] = seen.get(state, 0) + 1
    return seen


def test_a_bulk_cancel_then_retry_walks_every_batch_once(make_system):
    system = make_system(workers=1)
    kinds = system.kinds
    first = kinds.register("first", count, payload=CountPayload)
    other = kinds.register("other", count, payload=CountPayload)
    system.runner.pause_queue(HELD)
    ids = _held_jobs(system, first, BATCH * 2 + 7)
    others = _held_jobs(system, other, 3)
    runner = system.runner

    dry = runner.bulk(BulkAction.CANCEL, BulkFilter(kind="first"), dry_run=True)
    assert (dry.matched, dry.changed) == (len(ids), 0)
    assert _states(system, ids[:3]) == {"available": 3}

    done = runner.bulk(BulkAction.CANCEL, BulkFilter(kind="first", queue=HELD), by="cli")
    assert (done.matched, done.changed) == (len(ids), len(ids))
    assert _states(system, ids) == {"cancelled": len(ids)}
    assert _states(system, others) == {"available": 3}  # another kind: untouched
    again = runner.bulk(BulkAction.CANCEL, BulkFilter(kind="first"))
    assert (again.matched, again.changed) == (0, 0)  # safe to repeat

    retried = runner.bulk(BulkAction.RETRY, BulkFilter(state=State.CANCELLED))
    assert (retried.matched, retried.changed) == (len(ids), len(ids))
    assert _states(system, ids) == {"available": len(ids)}
    assert runner.get(ids[0]).status is Status.QUEUED

    logged = system.logs.text
    assert "bulk cancel (dry run) done by=python filter=kind=first matched=" in logged
    assert "bulk cancel (dry run) begins" not in logged  # a count changes nothing: one line
    assert "bulk cancel begins by=cli filter=kind=first queue=held\n" in logged
    done_line = f"bulk cancel done by=cli filter=kind=first queue={HELD} matched={len(ids)} "
    assert f"{done_line}changed={len(ids)} seconds=" in logged


def test_a_bulk_action_leaves_jobs_newer_than_its_start_and_outside_its_window(make_system):
    system = make_system(workers=1)
    kind = system.kinds.register("first", count, payload=CountPayload)
    system.runner.pause_queue(HELD)
    early = _held_jobs(system, kind, 3)
    system.clock.advance(60)
    middle = _held_jobs(system, kind, 2)
    window = BulkFilter(
        created_after=system.clock.now() - datetime.timedelta(seconds=1),
        created_before=system.clock.now() + datetime.timedelta(seconds=1),
    )
    system.clock.advance(60)
    late = _held_jobs(system, kind, 4)
    assert system.runner.bulk(BulkAction.CANCEL, window, dry_run=True).matched == 2
    assert system.runner.bulk(BulkAction.CANCEL, window).changed == 2
    assert _states(system, middle) == {"cancelled": 2}
    assert _states(system, early + late) == {"available": 7}

    store = system.runner.client.store  # what the action reads: ids up to its start only
    through = JobFilter(state=State.AVAILABLE, through=early[-1])
    assert store.count_jobs(through) == 3
    batch = store.cancel_jobs(through, after=None, limit=2, now=system.clock.now())
    assert (batch.matched, batch.last_id) == (2, early[1])
    assert set(batch.changed) == {early[1], early[2]}
    assert _states(system, late) == {"available": 4}


def test_a_bulk_cancel_asks_running_jobs_to_stop_and_a_retry_refuses_them(make_system):
    system = make_system(workers=2)
    started = threading.Event()

    def blocks(ctx: JobContext, payload: CountPayload) -> CountResult:
        started.set()
        while not ctx.wait(0.01):
            pass
        raise RuntimeError("told to stop")

    block = system.kinds.register("block", blocks, payload=CountPayload, timeout=3600)
    system.start()
    job_id = block.enqueue(CountPayload())
    system.wait_for(job_id, lambda job: job.status is Status.RUNNING)
    with pytest.raises(
        InvalidOptionError, match=r"filter\.state: retry applies to jobs failed, cancelled"
    ):
        system.runner.bulk(BulkAction.RETRY, BulkFilter(state=State.RUNNING))
    stopped = system.runner.bulk(BulkAction.CANCEL, BulkFilter(state=State.RUNNING))
    assert (stopped.matched, stopped.changed) == (1, 1)
    assert system.wait_for(job_id).error == "cancelled"


def test_a_filter_from_a_caller_is_read_strictly():
    def read_time(text: str) -> datetime.datetime:
        return datetime.datetime.fromisoformat(text)

    which = bulk_filter({"state": "failed", "kind": "k", "queue": None}, read_time)
    assert which == BulkFilter(state=State.FAILED, kind="k")
    for fields, problem in [
        ({"status": "failed"}, "filter.status: is not a filter; use state, kind"),
        ({"state": "waiting"}, "filter.state: must be one of scheduled"),
        ({"kind": 3}, "filter.kind: must be a string or null"),
        ({"queue": "no spaces"}, "filter.queue: must be 1-64 letters"),
        ({"created_after": "yesterday"}, "filter.created_after: Invalid isoformat"),
    ]:
        with pytest.raises(InvalidOptionError) as raised:
            bulk_filter(fields, read_time)
        assert str(raised.value).startswith(problem), (fields, str(raised.value))


def test_a_job_that_changes_state_while_a_bulk_cancel_walks_is_still_reached(
    make_system, monkeypatch
):
    monkeypatch.setattr("jobtable.core.client_operations.BATCH", 1)
    system = make_system(workers=1)
    kind = system.kinds.register("first", count, payload=CountPayload)
    system.runner.pause_queue(HELD)
    later = kind.enqueue(CountPayload(), queue=HELD, delay=60)  # scheduled, older
    due = _held_jobs(system, kind, 2)  # available, newer
    store = system.runner.client.store
    walked = store.cancel_jobs

    def cancel_jobs(which, **options):
        batch = walked(which, **options)
        if batch.changed == (due[-1],):  # after the first batch: the scheduled job falls due
            system.clock.advance(61)
            assert store.promote_due(now=system.clock.now()) == 1
        return batch

    monkeypatch.setattr(store, "cancel_jobs", cancel_jobs)
    done = system.runner.bulk(BulkAction.CANCEL, BulkFilter(queue=HELD))
    assert (done.matched, done.changed) == (3, 3)
    assert _states(system, [later, *due]) == {"cancelled": 3}


def test_a_running_job_asked_to_stop_is_not_counted_again(make_system):
    system = make_system(workers=1)
    release = threading.Event()

    def stubborn(ctx: JobContext, payload: CountPayload) -> CountResult:
        while not release.wait(0.01):  # told to stop, it goes on until released
            pass
        return CountResult(done=1)

    kind = system.kinds.register("stubborn", stubborn, payload=CountPayload, timeout=3600)
    system.start()
    job_id = kind.enqueue(CountPayload())
    system.wait_for(job_id, lambda job: job.status is Status.RUNNING)
    try:
        first = system.runner.bulk(BulkAction.CANCEL, BulkFilter(kind="stubborn"))
        again = system.runner.bulk(BulkAction.CANCEL, BulkFilter(kind="stubborn"))
        assert ((first.matched, first.changed), (again.matched, again.changed)) == ((1, 1), (1, 0))
        assert system.runner.cancel(job_id)[0] is CancelOutcome.REQUESTED  # asked already
    finally:
        release.set()
    system.wait_for(job_id)
