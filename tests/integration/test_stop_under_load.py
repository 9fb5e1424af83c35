"""Stops landing at random moments while workers claim: no job abandoned, none run twice.

A stop that lands while a claim is in flight must leave no job running that
never ran (the next start would fail it ``interrupted by restart``): the
claim is either run or given back untouched. Real stores, the real clock.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from contextlib import ExitStack

import pytest

from jobtable.adapters.system_clock import SystemClock
from jobtable.core import JobContext, Runner, Status
from tests.support.seeds import chosen_seed
from tests.support.stores import open_store
from tests.unit.kinds_for_tests import CountPayload, CountResult

ROUNDS = 6


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_stops_at_random_moments_abandon_no_job_and_run_none_twice(engine, tmp_path):
    chance = random.Random(chosen_seed("this test"))
    runs: Counter[str] = Counter()
    guard = threading.Lock()

    def counted(ctx: JobContext, payload: CountPayload) -> CountResult:
        with guard:
            runs[ctx.job_id] += 1
        return CountResult(done=payload.steps)

    with ExitStack() as stack:
        store = open_store(engine, tmp_path, stack)
        stack.callback(store.close)
        clock = SystemClock()
        ids: list[str] = []
        for round_ in range(ROUNDS):
            runner = Runner(store, clock, workers=2)
            kind = runner.kinds.register("counted", counted, payload=CountPayload)
            if round_ == 0:
                ids = [kind.enqueue(CountPayload(steps=n)) for n in range(300)]
            runner.start()
            # The scenario, not a wait for completion: stop lands mid-claim at a random moment.
            time.sleep(chance.uniform(0.02, 0.06))
            runner.stop()
            assert runner.join(timeout=30)
            rows = [store.row(job_id) for job_id in ids]
            assert not [row for row in rows if row["status"] == Status.RUNNING.value]
            assert {row["attempt"] for row in rows if row["status"] == "queued"} <= {0}
        runner = Runner(store, clock, workers=2)
        runner.kinds.register("counted", counted, payload=CountPayload)
        runner.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and any(
            store.get(job_id).status is not Status.SUCCEEDED for job_id in ids
        ):
            time.sleep(0.05)
        runner.stop()
        runner.join(timeout=30)
        rows = [store.row(job_id) for job_id in ids]
    assert {row["status"] for row in rows} == {"succeeded"}
    assert {row["attempt"] for row in rows} == {1}
    assert set(runs.values()) == {1} and len(runs) == len(ids)
