"""The dashboard's per-minute history (core/minutes.py, core/history.py): what runners tally,
what the store adds up across runners, and the series the charts draw. Run again on SQLite
and PostgreSQL by tests/integration/test_jobs_on_*.py."""

from __future__ import annotations

import datetime
import math

from jobtable.core import Failure, JobContext
from jobtable.core.minutes import (
    WAIT_BUCKETS,
    MinuteCounts,
    MinuteTally,
    bucket_of,
    chart,
    minute_of,
    quantile,
)
from tests.unit.kinds_for_tests import CountPayload, CountResult, count

T0 = datetime.datetime(2030, 1, 2, 3, 4, 30, tzinfo=datetime.UTC)


def test_a_wait_falls_in_the_first_bucket_whose_bound_holds_it():
    assert [bucket_of(w) for w in (0, 0.005, 0.006, 1.0, 1.01, 7200)] == [0, 0, 1, 7, 8, 16]
    assert WAIT_BUCKETS[-1] == math.inf


def test_quantiles_read_the_bucket_bound_and_never_infinity():
    assert quantile({}, 0.5) is None
    waits = {bucket_of(0.004): 50, bucket_of(0.9): 45, bucket_of(40): 5}
    assert (quantile(waits, 0.5), quantile(waits, 0.95), quantile(waits, 0.99)) == (0.005, 1.0, 60)
    assert quantile({len(WAIT_BUCKETS) - 1: 3}, 0.5) == 3600.0


def test_a_tally_hands_over_its_minutes_once_and_takes_lost_ones_back():
    tally = MinuteTally()
    tally.started("q", "k", waited=0.2, at=T0)
    tally.started("q", "k", waited=None, at=T0)  # no due time known: not counted
    tally.ended("q", "k", succeeded=True, at=T0)
    tally.ended("q", "k", succeeded=False, at=T0 + datetime.timedelta(minutes=1))
    taken = sorted(tally.take(), key=lambda row: row.minute)
    assert taken == [
        MinuteCounts(minute=minute_of(T0), queue="q", kind="k", succeeded=1, waits=((5, 1),)),
        MinuteCounts(minute=minute_of(T0) + datetime.timedelta(minutes=1), queue="q", kind="k",
                     failed=1),
    ]  # fmt: skip
    assert tally.take() == []
    tally.give_back(taken)
    assert sorted(tally.take(), key=lambda row: row.minute) == taken


def test_a_chart_has_one_point_a_minute_for_the_last_hour_filtered_by_queue_and_kind():
    minute = minute_of(T0)
    rows = [
        MinuteCounts(minute=minute, queue="a", kind="x", succeeded=3, waits=((0, 3),)),
        MinuteCounts(minute=minute, queue="b", kind="x", failed=2, waits=((9, 2),)),
        MinuteCounts(minute=minute - datetime.timedelta(minutes=5), queue="a", kind="y",
                     succeeded=1),
        MinuteCounts(minute=minute - datetime.timedelta(minutes=60), queue="a", kind="x",
                     succeeded=99),  # an hour ago: past the chart
    ]  # fmt: skip
    points = chart(rows, now=T0)
    assert len(points) == 60 and points[-1].minute == minute
    assert (points[-1].succeeded, points[-1].failed, points[-1].started) == (3, 2, 5)
    assert (points[-1].wait_p50, points[-1].wait_p95) == (0.005, 5.0)
    assert points[-6].succeeded == 1 and sum(p.succeeded for p in points) == 4
    only_b = chart(rows, now=T0, queue="b")
    assert (only_b[-1].succeeded, only_b[-1].failed, only_b[-1].wait_p50) == (0, 2, 5.0)
    assert sum(p.succeeded for p in chart(rows, now=T0, kind="y")) == 1
    assert points[0].wait_p50 is None


def test_runners_add_their_minutes_up_in_the_store_and_the_history_reads_them(make_system):
    def declines(ctx: JobContext, payload: CountPayload) -> CountResult:
        raise Failure("declined")

    first, second = make_system(workers=2), make_system(workers=1)
    for system in (first, second):
        system.kinds.register("count", count, payload=CountPayload, queue="reports")
        system.kinds.register("bad", declines, payload=CountPayload, failure_codes=["declined"])
    waiting = first.runner.enqueue("count", {}, None)  # before start: waits, then runs
    first.start()
    second.start()
    ids = [first.runner.enqueue("count", {}, None) for _ in range(4)]
    ids += [second.runner.enqueue("bad", {}, None) for _ in range(3)]
    for job_id in ids:
        first.wait_for(job_id)
    assert first.runner.get(waiting).status.value == "succeeded"
    first.runner.pause_queue("reports")
    parked = first.runner.client.enqueue("count", {}, None)  # waits: its queue is paused
    first.stop()
    second.stop()  # each writes what it tallied as it stops
    history = first.runner.history(queues=["reports", "default"])
    assert sum(p.succeeded for p in history.points) == 5
    assert sum(p.failed for p in history.points) == 3
    assert sum(p.started for p in history.points) == 8
    assert {k.kind: (k.succeeded, k.failed) for k in history.kinds} == {
        "count": (5, 0), "bad": (0, 3)
    }  # fmt: skip
    only = first.runner.history(queue="reports", queues=["reports"])
    assert sum(p.succeeded for p in only.points) == 5 and only.kinds[0].kind == "count"
    assert sum(p.failed for p in first.runner.history(kind="bad").points) == 3
    first.clock.advance(90)
    ages = first.runner.history(queues=["reports", "default", "held"]).oldest_waiting
    assert ages["reports"] >= 90 and set(ages) == {"reports"}
    assert first.runner.get(parked).status.value == "queued"


def test_the_oldest_waiting_job_is_the_one_due_longest_not_the_first_created(make_system):
    system = make_system(workers=0)
    kind = system.kinds.register("count", count, payload=CountPayload)
    late = kind.enqueue(CountPayload(), queue="q", delay=3600)  # created first, due in an hour
    system.clock.advance(1)
    kind.enqueue(CountPayload(), queue="q")  # due now; nobody runs it
    system.clock.advance(3600)
    assert system.runner.client.store.promote_due(now=system.clock.now()) == 1
    assert system.runner.detail(late).state == "available"
    assert system.runner.oldest_waiting(["q", "empty"]) == {"q": 3600.0}
    assert system.runner.history(queues=["q"]).oldest_waiting == {"q": 3600.0}
