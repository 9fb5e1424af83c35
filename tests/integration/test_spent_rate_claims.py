"""A kind whose rate without a key is spent claims nothing, and learns when the window
opens from one due job: however deep its backlog, with a keyed limit beside the rate
(whose keys could each have room) as without. SQLite's virtual machine steps on the
store's own writer are counted, not timed."""

from __future__ import annotations

import datetime
import itertools
from typing import Any

import pytest

from jobtable.adapters.sqlite import SqliteStore
from jobtable.core.batch import Batch
from jobtable.core.limits import RateLimit, RunningLimit
from tests.integration.test_passed_over_backlog import CLOCK, DEEP, SHALLOW, backlog

RATE = RateLimit(n=2, per=60.0, keyed=False)


@pytest.mark.parametrize("keyed", [True, False], ids=["keyed limit", "limit"])
def test_a_spent_rates_claim_reads_one_job_however_deep_the_backlog(keyed, tmp_path):
    limits = {"work": RunningLimit(n=1000, keyed=keyed)}
    batch = Batch(claim=2, limits=limits, rates={"work": RATE})
    work = {}
    for ahead in (SHALLOW, DEEP):
        store = SqliteStore.open(tmp_path / f"{ahead}.db", now=CLOCK.now())
        try:
            backlog(store, ahead, ahead_in="default", behind_in="default")
            assert len(_claim(store, batch).claimed) == 2  # the rate is spent
            steps = itertools.count()
            with store._engine._db.writer() as writer:
                writer.set_progress_handler(lambda steps=steps: next(steps) and 0, 100)
            try:
                done = _claim(store, batch)
            finally:
                with store._engine._db.writer() as writer:
                    writer.set_progress_handler(None, 100)
            assert done.claimed == []
            assert done.rate_opens_at == CLOCK.now() + datetime.timedelta(seconds=60)
            work[ahead] = next(steps)
        finally:
            store.close()
    assert work[DEEP] <= 2 * work[SHALLOW] + 10, work


def _claim(store: Any, batch: Batch) -> Any:
    return store.run_batch(batch, runner_id="r", now=CLOCK.now(), kinds=("work",))
