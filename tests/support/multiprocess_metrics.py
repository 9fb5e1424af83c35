"""One process's share of multiprocess metrics, for tests: run some jobs, leave some running.

``python -m tests.support.multiprocess_metrics KIND RUNS IN_FLIGHT`` runs RUNS jobs of KIND on
a runner whose observer is a ``JobMetrics``, reports IN_FLIGHT more as started and never
ended (as if the process died mid-job), prints its pid and exits. With ``PROMETHEUS_MULTIPROC_DIR`` set,
what it counted stays in that folder for another process to add up.
"""

from __future__ import annotations

import os
import sys

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.memory import MemoryStore
from jobtable.core import Runner
from jobtable.entrypoints.metrics import MULTIPROCESS_ENV, JobMetrics
from tests.unit.kinds_for_tests import CountPayload, count


def main(kind: str, runs: int, in_flight: int) -> None:
    assert os.environ.get(MULTIPROCESS_ENV), "run with PROMETHEUS_MULTIPROC_DIR set"
    metrics = JobMetrics()
    runner = Runner(MemoryStore(), FakeClock(), observer=metrics)
    handle = runner.kinds.register(kind, count, payload=CountPayload)
    for _ in range(runs):
        handle.enqueue(CountPayload(steps=1))
    assert len(runner.drain()) == runs
    for _ in range(in_flight):
        metrics.job_started(kind, waited=None)
    print(os.getpid())  # its files in the folder are named after it


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
