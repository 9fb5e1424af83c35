"""GET /metrics: the runner's events and the store's state in the Prometheus text format.

Jobs run with ``drain`` on a fake clock (or on a started runner where a
test needs one running), then the answer is parsed with prometheus-client's
own parser and its values compared with what ran.
"""

from __future__ import annotations

import json

import falcon.testing
import pytest
from prometheus_client.parser import text_string_to_metric_families

from jobtable.adapters.memory import MemoryStore
from jobtable.core import Failure, JobContext, Limit, NewJob, NoopPayload, NoopResult
from jobtable.core.batch import Batch
from jobtable.core.errors import StoreError, StoreUnavailableError
from jobtable.core.jobs import Recovered
from jobtable.core.limits import QueueLimit
from jobtable.entrypoints.http.app import create_app
from jobtable.entrypoints.metrics import JobMetrics
from tests.http.conftest import AUTH, TOKEN
from tests.support.harness import JobSystem
from tests.unit.kinds_for_tests import (
    SENTINEL_SECRET,
    CountPayload,
    CountResult,
    count,
    register_outcomes,
)
from tests.unit.test_liveness import Gate

EVENT_SERIES = {
    "jobtable_job_completions",
    "jobtable_job_run_seconds",
    "jobtable_job_queue_wait_seconds",
    "jobtable_claim_errors",
    "jobtable_recovered_jobs",
    "jobtable_busy_workers",
}
STATE_SERIES = {
    "jobtable_store_up",
    "jobtable_jobs",
    "jobtable_jobs_by_state",
    "jobtable_jobs_age_seconds",
    "jobtable_jobs_held_back",
    "jobtable_runners",
}


@pytest.fixture
def system():
    made = JobSystem(MemoryStore(), workers=1, observer=JobMetrics())
    yield made
    made.stop()


@pytest.fixture
def client(system) -> falcon.testing.TestClient:
    return falcon.testing.TestClient(
        create_app(system.runner, api_token=TOKEN, logger=system.logs.logger)
    )


def scrape(client, **headers) -> dict[tuple[str, tuple], float]:
    """Every sample of a scrape, by name and sorted labels."""
    result = client.simulate_get("/metrics", headers={**AUTH, **headers})
    assert result.status_code == 200, result.text
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(result.text)
        for sample in family.samples
    }


def value(samples, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def test_metrics_answer_prometheus_text_with_every_series(client):
    result = client.simulate_get("/metrics", headers=AUTH)
    assert result.status_code == 200
    assert result.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    names = {family.name for family in text_string_to_metric_families(result.text)}
    assert names >= EVENT_SERIES | STATE_SERIES
    assert "process_resident_memory_bytes" in result.text


def test_metrics_need_the_token(client):
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        result = client.simulate_get("/metrics", headers=headers)
        assert result.status_code == 401
        assert result.headers["WWW-Authenticate"] == "Bearer"
        assert "jobtable_" not in result.text


def test_completions_count_each_kind_and_code_as_run(system, client):
    ok, quota, crash = register_outcomes(system.kinds, queue="risky")
    for _ in range(3):
        ok.enqueue(CountPayload(steps=1))
    for _ in range(2):
        quota.enqueue(CountPayload())
    crash.enqueue(CountPayload())
    system.runner.drain()

    samples = scrape(client)
    completions = {
        labels: n
        for (name, labels), n in samples.items()
        if name == "jobtable_job_completions_total"
    }
    assert completions == {
        (("code", "succeeded"), ("final", "true"), ("kind", "count")): 3.0,
        (("code", "over_quota"), ("final", "true"), ("kind", "quota")): 2.0,
        (("code", "internal_error"), ("final", "true"), ("kind", "crash")): 1.0,
    }
    for kind, runs in (("count", 3), ("quota", 2), ("crash", 1)):
        assert value(samples, "jobtable_job_run_seconds_count", kind=kind) == runs
        assert value(samples, "jobtable_job_queue_wait_seconds_count", kind=kind) == runs
    assert value(samples, "jobtable_busy_workers") == 0
    assert SENTINEL_SECRET not in client.simulate_get("/metrics", headers=AUTH).text


def test_run_time_and_queue_wait_fall_in_their_buckets(system, client):
    def slow(ctx: JobContext, payload: CountPayload) -> CountResult:
        system.clock.advance(7)  # runs 7 s on the runner's clock
        return CountResult(done=1)

    kind = system.kinds.register("slow", slow, payload=CountPayload)
    kind.enqueue(CountPayload(), delay=60)
    system.clock.advance(60 + 20)  # claimed 20 s after it fell due
    system.runner.drain()

    samples = scrape(client)
    assert value(samples, "jobtable_job_run_seconds_sum", kind="slow") == 7
    assert value(samples, "jobtable_job_run_seconds_bucket", kind="slow", le="5.0") == 0
    assert value(samples, "jobtable_job_run_seconds_bucket", kind="slow", le="10.0") == 1
    assert value(samples, "jobtable_job_queue_wait_seconds_sum", kind="slow") == 20
    assert value(samples, "jobtable_job_queue_wait_seconds_bucket", kind="slow", le="10.0") == 0
    assert value(samples, "jobtable_job_queue_wait_seconds_bucket", kind="slow", le="30.0") == 1


def test_jobs_are_counted_by_queue_kind_and_status_with_zeros_for_registered_kinds(system, client):
    ok, _, crash = register_outcomes(system.kinds, queue="risky")
    ok.enqueue(CountPayload())
    ok.enqueue(CountPayload())
    ok.enqueue(CountPayload(), delay=3600)
    crash.enqueue(CountPayload(), queue="elsewhere")

    samples = scrape(client)
    jobs = {labels: n for (name, labels), n in samples.items() if name == "jobtable_jobs" and n}
    assert jobs == {
        (("kind", "count"), ("queue", "default"), ("status", "queued")): 2.0,
        (("kind", "count"), ("queue", "default"), ("status", "scheduled")): 1.0,
        (("kind", "crash"), ("queue", "elsewhere"), ("status", "queued")): 1.0,
    }
    assert value(samples, "jobtable_jobs_age_seconds") == 0  # counted by this scrape
    # A registered kind with nothing waiting reads 0 in its queue, not a gap.
    assert value(samples, "jobtable_jobs", queue="risky", kind="crash", status="queued") == 0
    assert value(samples, "jobtable_jobs", queue="default", kind="quota", status="running") == 0

    system.runner.drain()  # every due job finishes; the scheduled one waits
    samples = scrape(client)
    assert value(samples, "jobtable_jobs", queue="default", kind="count", status="queued") == 0
    assert value(samples, "jobtable_jobs", queue="default", kind="count", status="scheduled") == 1


def test_jobs_are_counted_by_state_too_retrying_apart_from_scheduled(system, client):
    def flaky(ctx: JobContext, payload: CountPayload) -> CountResult:
        raise Failure("flaky")

    ok, _, _ = register_outcomes(system.kinds)
    retried = system.kinds.register(
        "flaky", flaky, payload=CountPayload, failure_codes=["flaky"], retry_on=["flaky"],
        max_attempts=3, backoff=(600, 600),
    )  # fmt: skip
    ok.enqueue(CountPayload(), delay=3600)
    retried.enqueue(CountPayload())
    system.runner.drain()  # the flaky job fails once and waits to retry
    ok.enqueue(CountPayload())
    samples = scrape(client)
    states = {
        labels: n for (name, labels), n in samples.items() if name == "jobtable_jobs_by_state" and n
    }
    assert states == {
        (("kind", "count"), ("queue", "default"), ("state", "available")): 1.0,
        (("kind", "count"), ("queue", "default"), ("state", "scheduled")): 1.0,
        (("kind", "flaky"), ("queue", "default"), ("state", "retrying")): 1.0,
    }
    assert value(samples, "jobtable_jobs", queue="default", kind="flaky", status="scheduled") == 1
    assert value(samples, "jobtable_jobs_by_state", queue="default", kind="flaky",
                 state="running") == 0  # fmt: skip


def post_jobs_in_queues(client, kind: str, queues: list[str]) -> None:
    """What clients do: enqueue over HTTP, each job in a queue name of their choosing."""
    for start in range(0, len(queues), 500):
        jobs = [{"kind": kind, "payload": {}, "queue": q} for q in queues[start : start + 500]]
        answer = client.simulate_post(
            "/api/v1/jobs/batch",
            body=json.dumps({"jobs": jobs}),
            headers={**AUTH, "Content-Type": "application/json"},
        )
        assert answer.status_code == 202, answer.text


def jobs_series(samples) -> dict[tuple, float]:
    return {labels: n for (name, labels), n in samples.items() if name == "jobtable_jobs"}


def test_queue_names_clients_choose_label_at_most_100_values_and_the_rest_show_as_other(
    system, client
):
    system.kinds.register("count", count, payload=CountPayload)  # its queue: default
    system.kinds.register("report", count, payload=CountPayload, queue="reports")
    post_jobs_in_queues(client, "count", [f"client-{n:04d}" for n in range(2000)])
    post_jobs_in_queues(client, "count", ["unserved"] * 5)  # a backlog nobody serves

    samples = scrape(client)
    jobs = jobs_series(samples)
    queues = {dict(labels)["queue"] for labels in jobs}
    assert len(queues) == 100
    assert {"other", "unserved", "reports", "default"} <= queues
    assert len(jobs) <= 100 * 3 + 3  # each queue label with its kinds' three statuses
    assert sum(jobs.values()) == 2005  # every job counted: under its queue's name, or other
    assert value(samples, "jobtable_jobs", queue="unserved", kind="count", status="queued") == 5
    # The operators' queues keep their names and their zeros.
    assert value(samples, "jobtable_jobs", queue="reports", kind="report", status="queued") == 0
    assert value(samples, "jobtable_jobs", queue="default", kind="count", status="queued") == 0
    folded = value(samples, "jobtable_jobs", queue="other", kind="count", status="queued")
    assert folded == 2000 - (100 - 4)  # 96 client queues kept by name, by name order
    assert jobs_series(scrape(client)) == jobs  # the same counts choose the same names


def test_kinds_in_the_database_that_no_process_here_registered_label_at_most_100_values(
    system, client
):
    system.kinds.register("count", count, payload=CountPayload)
    for n in range(150):  # stored by another application, or by an older version
        system.store.create(
            NewJob(id=f"legacy-{n:03d}", kind=f"legacy_{n:03d}", payload="{}"),
            now=system.clock.now(),
        )
    jobs = jobs_series(scrape(client))
    kinds = {dict(labels)["kind"] for labels in jobs}
    assert len(kinds) == 100
    assert {"count", "other"} <= kinds
    assert sum(jobs.values()) == 150


def test_a_running_job_shows_as_running_and_as_a_busy_worker(system, client):
    gate = Gate()
    kind = system.kinds.register("held", gate.handler, payload=CountPayload)
    system.start()
    job_id = kind.enqueue(CountPayload())
    assert gate.started.acquire(timeout=10)
    try:
        samples = scrape(client)
        assert value(samples, "jobtable_busy_workers") == 1
        assert value(samples, "jobtable_jobs", queue="default", kind="held", status="running") == 1
        assert value(samples, "jobtable_runners") == 1
    finally:
        gate.release.set()
    system.wait_for(job_id)
    samples = scrape(client)
    assert value(samples, "jobtable_busy_workers") == 0
    assert value(samples, "jobtable_jobs", queue="default", kind="held", status="running") == 0


def test_claim_errors_are_counted(system, client):
    system.store.claim_faults += [StoreError("database locked")] * 3
    system.start()
    for delay in (0.05, 0.1, 0.2):
        system.clock.wait_for_sleepers(1)
        system.clock.advance(delay)
    system.store.wait_until(lambda: system.store.claims >= 4)  # the fourth claim is good
    assert value(scrape(client), "jobtable_claim_errors_total") == 3


def test_recoveries_are_counted_by_outcome(system, client):
    system.runner.observer.jobs_recovered(Recovered(failed=1, requeued=2))
    system.runner.observer.jobs_recovered(Recovered(requeued=1))
    samples = scrape(client)
    assert value(samples, "jobtable_recovered_jobs_total", outcome="requeued") == 3
    assert value(samples, "jobtable_recovered_jobs_total", outcome="failed") == 1


def test_a_database_that_cannot_be_read_shows_as_store_down_and_events_still_answer(
    system, client, monkeypatch
):
    def unavailable():
        raise StoreUnavailableError("database unavailable")

    monkeypatch.setattr(system.store.inner, "job_counts", unavailable)
    system.runner.observer.claim_failed()
    samples = scrape(client)
    assert value(samples, "jobtable_store_up") == 0
    assert value(samples, "jobtable_claim_errors_total") == 1
    assert not any(name == "jobtable_jobs" for name, _ in samples)


def test_an_openmetrics_scraper_gets_openmetrics(client):
    result = client.simulate_get(
        "/metrics", headers={**AUTH, "Accept": "application/openmetrics-text; version=1.0.0"}
    )
    assert result.status_code == 200
    assert result.headers["Content-Type"].startswith("application/openmetrics-text")
    assert result.text.endswith("# EOF\n")


def test_two_apps_in_one_process_keep_their_own_series():
    systems = [JobSystem(MemoryStore(), observer=JobMetrics()) for _ in range(2)]
    clients = [falcon.testing.TestClient(create_app(s.runner, api_token=TOKEN)) for s in systems]
    first = systems[0].kinds.register("count", count, payload=CountPayload)
    first.enqueue(CountPayload())
    systems[0].runner.drain()
    counted = [
        scrape(c).get(
            (
                "jobtable_job_completions_total",
                (("code", "succeeded"), ("final", "true"), ("kind", "count")),
            ),
            0,
        )
        for c in clients
    ]
    assert counted == [1, 0]


def test_an_app_whose_runner_has_no_metrics_still_shows_the_store(system):
    bare = JobSystem(system.store)
    bare.kinds.register("count", count, payload=CountPayload).enqueue(CountPayload())
    client = falcon.testing.TestClient(create_app(bare.runner, api_token=TOKEN))
    samples = scrape(client)
    assert value(samples, "jobtable_jobs", queue="default", kind="count", status="queued") == 1
    assert not any(name.startswith("jobtable_job_completions") for name, _ in samples)


def export(ctx: JobContext, payload: NoopPayload) -> NoopResult:
    return NoopResult()


def test_jobs_held_back_are_counted_by_queue_kind_and_limit_type(system, client):
    export_kind = system.kinds.register("export", export, payload=NoopPayload, limit=Limit(1))
    noop = system.runner.builtins.noop
    for _ in range(3):
        export_kind.enqueue(NoopPayload())
    for _ in range(2):
        noop.enqueue(NoopPayload(), queue="slow")
    system.runner.set_queue_limit("slow", QueueLimit(running=1))
    rules = system.kinds.claim_rules()
    claimed = system.store.run_batch(
        Batch(claim=5, limits=rules.limits, limited_queues=frozenset({"slow"})),
        runner_id="elsewhere",
        now=system.clock.now(),
        kinds=["export", "noop"],
    ).claimed
    assert sorted(job.kind for job in claimed) == ["export", "noop"]
    held = {
        labels: n
        for (name, labels), n in scrape(client).items()
        if name == "jobtable_jobs_held_back"
    }
    assert held == {
        (("kind", "export"), ("limit", "limit"), ("queue", "default")): 2,
        (("kind", "noop"), ("limit", "queue_limit"), ("queue", "slow")): 1,
    }
