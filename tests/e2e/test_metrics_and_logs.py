"""Metrics and JSON logs of real processes: ``jobtable worker --metrics-listen`` counts what it
ran behind the token, ``serve --metrics-public`` answers without it, and every line of a JSON log
parses, names its job, and holds no secret."""

from __future__ import annotations

import datetime
import json
import re
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e import metrics_kinds
from tests.e2e.conftest import ServeProcess, wait_until
from tests.e2e.processes import enqueue, start_worker, stop, wait_for_start

pytestmark = pytest.mark.e2e

TOKEN = "metrics-token-5e0b2a"
RUNS = {"greet": 3, "quota": 2, "crash": 1}
CODES = {"greet": "succeeded", "quota": "over_quota", "crash": "internal_error"}


def scrape(url: str, token: str | None = TOKEN) -> tuple[int, str]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def samples(text: str) -> dict[tuple[str, tuple], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def completions(text: str) -> dict[tuple[str, str], float]:
    counted: Counter[tuple[str, str]] = Counter()
    for (name, labels), value in samples(text).items():
        if name == "jobtable_job_completions_total":
            found = dict(labels)
            counted[(found["kind"], found["code"])] += value
    return dict(counted)


def json_lines(log: Path) -> list[dict]:
    """Every line of the log, each one JSON object (a line that does not parse fails here)."""
    records = [json.loads(line) for line in log.read_text().splitlines()]
    for record in records:
        assert {"time", "level", "logger", "message"} <= record.keys(), record
        assert record["time"].endswith("Z"), record
        assert datetime.datetime.fromisoformat(record["time"]).utcoffset() == datetime.timedelta(0)
    return records


def metrics_url(log: Path) -> str:
    found: list[str] = []

    def listening() -> bool:
        match = re.search(r"serving metrics on (http://[\d.]+:\d+/metrics)", log.read_text())
        found[:] = [match.group(1)] if match else []
        return bool(found)

    wait_until(listening, 30, "the metrics listener")
    return found[0]


def test_a_workers_metrics_listener_counts_what_it_ran_and_its_json_log_names_each_job(
    database, tmp_path
):
    log = tmp_path / "worker.log"
    worker = start_worker(
        database, log, "--metrics-listen", "127.0.0.1:0", "--log-format", "json",
        "--log-level", "debug", kinds="tests.e2e.metrics_kinds",
        env={"JOBTABLE_API_TOKEN": TOKEN},
    )  # fmt: skip
    try:
        url = metrics_url(log)
        wait_for_start(log)
        ids = {
            kind: enqueue(database, kind, [{}] * runs, register=metrics_kinds.register)
            for kind, runs in RUNS.items()
        }
        expected = {(kind, CODES[kind]): float(runs) for kind, runs in RUNS.items()}
        wait_until(lambda: completions(scrape(url)[1]) == expected, 30, "every completion")

        status, text = scrape(url)
        assert status == 200
        found = samples(text)
        for kind, runs in RUNS.items():
            key = ("jobtable_job_run_seconds_count", (("kind", kind),))
            assert found[key] == runs
            queued = ("jobtable_jobs", (("kind", kind), ("queue", "default"), ("status", "queued")))
            assert found[queued] == 0
        assert found[("jobtable_runners", ())] == 1
        assert found[("jobtable_store_up", ())] == 1
        assert found[("jobtable_busy_workers", ())] == 0
        for token in (None, "wrong"):
            refused, body = scrape(url, token)
            assert refused == 401
            assert json.loads(body)["error"]["code"] == "unauthenticated"
    finally:
        assert stop(worker) == 0

    records = json_lines(log)
    about = {job_id: kind for kind, job_ids in ids.items() for job_id in job_ids}
    starts = [r for r in records if r["message"].startswith("job started")]
    assert sorted(r["job_id"] for r in starts) == sorted(about)
    assert {(r["level"], r["kind"]) for r in starts} == {("debug", kind) for kind in RUNS}
    ends = [r for r in records if r.get("code") and r.get("job_id") in about]
    assert Counter((r["level"], r["kind"], r["code"]) for r in ends) == Counter(
        {
            ("debug", "greet", "succeeded"): 3,
            ("info", "quota", "over_quota"): 2,
            ("error", "crash", "internal_error"): 1,
        }
    )
    text = log.read_text()
    assert metrics_kinds.CRASH_SECRET not in text
    assert TOKEN not in text


def test_public_metrics_need_no_token_on_a_worker(tmp_path):
    log = tmp_path / "worker.log"
    worker = start_worker(
        tmp_path / "jobs.db", log, "--metrics-listen", "127.0.0.1:0",
        kinds="tests.e2e.metrics_kinds", env={"JOBTABLE_METRICS_PUBLIC": "true"},
    )  # fmt: skip
    try:
        url = metrics_url(log)
        status, text = scrape(url, token=None)
        assert status == 200
        assert "jobtable_store_up 1.0" in text
        assert scrape(url.replace("/metrics", "/api/v1/runners"), token=None)[0] == 401
    finally:
        assert stop(worker) == 0
    assert not (tmp_path / "jobs.db.token").exists()  # public: no token was made


def test_serve_with_public_metrics_and_json_logs(tmp_path):
    env = {"JOBTABLE_API_TOKEN": TOKEN, "JOBTABLE_KINDS": "tests.e2e.metrics_kinds"}
    server = ServeProcess(tmp_path / "jobs.db", "--log-format", "json", "--metrics-public", env=env)
    try:
        status, accepted = server.request("/api/v1/jobs", body={"kind": "crash", "payload": {}})
        assert status == 202
        server.poll_job(accepted["id"], lambda job: job["status"] == "failed")
        wait_until(
            lambda: (
                completions(scrape(server.base_url + "/metrics", token=None)[1])
                == {("crash", "internal_error"): 1.0}
            ),
            30,
            "the crash counted",
        )
        assert scrape(server.base_url + "/api/v1/runners", token=None)[0] == 401
    finally:
        assert server.stop() == 0
    # The reader thread may still be catching up with the pipe: wait for the last line.
    wait_until(lambda: server.log and '"stopped"' in server.log[-1], 10, "the last log line")
    log = tmp_path / "serve.log"
    log.write_text("".join(server.log))
    records = json_lines(log)
    (failure,) = [r for r in records if r.get("job_id") == accepted["id"] and r.get("code")]
    assert (failure["level"], failure["kind"], failure["code"]) == (
        "error",
        "crash",
        "internal_error",
    )
    assert metrics_kinds.CRASH_SECRET not in log.read_text()
    assert TOKEN not in log.read_text()
