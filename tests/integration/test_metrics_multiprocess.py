"""Several processes' metrics add up through prometheus-client's multiprocess mode: each writes
its counts to ``PROMETHEUS_MULTIPROC_DIR``, and any process's /metrics serves the sum."""

from __future__ import annotations

import os
import subprocess
import sys

import falcon.testing
from prometheus_client import multiprocess
from prometheus_client.parser import text_string_to_metric_families

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.memory import MemoryStore
from jobtable.core import Runner
from jobtable.entrypoints.http.app import create_metrics_app
from jobtable.entrypoints.metrics import MULTIPROCESS_ENV
from tests.e2e.conftest import REPO

SUCCEEDED = (("code", "succeeded"), ("final", "true"), ("kind", "count"))


def run_share(folder, kind: str, runs: int, in_flight: int = 0) -> int:
    """One short process's share of the work; its pid."""
    env = {**os.environ, MULTIPROCESS_ENV: str(folder), "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.multiprocess_metrics", kind, str(runs), str(in_flight)],
        env=env, cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


def scrape(folder, monkeypatch) -> dict[tuple[str, tuple], float]:
    """What a process serving /metrics over ``folder`` answers (a worker's listener app)."""
    monkeypatch.setenv(MULTIPROCESS_ENV, str(folder))
    app = create_metrics_app(Runner(MemoryStore(), FakeClock()), api_token=None, public=True)
    result = falcon.testing.TestClient(app).simulate_get("/metrics")
    assert result.status_code == 200
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(result.text)
        for sample in family.samples
    }


def test_two_processes_counters_add_up(tmp_path, monkeypatch):
    run_share(tmp_path, "count", runs=3)
    run_share(tmp_path, "count", runs=4)
    found = scrape(tmp_path, monkeypatch)
    assert found[("jobtable_job_completions_total", SUCCEEDED)] == 7
    assert found[("jobtable_job_run_seconds_count", (("kind", "count"),))] == 7
    assert found[("jobtable_job_queue_wait_seconds_count", (("kind", "count"),))] == 7
    assert found[("jobtable_store_up", ())] == 1  # the store is read once, by the server


def test_a_dead_processes_busy_workers_stop_counting_once_marked_dead_its_counts_stay(
    tmp_path, monkeypatch
):
    run_share(tmp_path, "count", runs=2)
    died_mid_job = run_share(tmp_path, "count", runs=1, in_flight=2)
    found = scrape(tmp_path, monkeypatch)
    assert found[("jobtable_busy_workers", ())] == 2
    multiprocess.mark_process_dead(died_mid_job, str(tmp_path))  # the supervisor's part
    found = scrape(tmp_path, monkeypatch)
    assert found[("jobtable_busy_workers", ())] == 0
    assert found[("jobtable_job_completions_total", SUCCEEDED)] == 3
