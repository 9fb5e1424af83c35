"""``serve --workers 0`` and ``--queues`` as real processes, on both engines.

A web tier that only enqueues, a worker process whose queues each have
their own runner, and one ``serve`` whose API and dedicated runners share a
store: every job runs on the runner of its queue, and every runner stops
with its process.
"""

from __future__ import annotations

import pytest

from tests.e2e.conftest import wait_until
from tests.e2e.processes import start_worker, stop, wait_for_start

pytestmark = pytest.mark.e2e
TOKEN = "queues-e2e-token"


def post(server, queue: str) -> str:
    status, body = server.request(
        "/api/v1/jobs", body={"kind": "noop", "payload": {}, "queue": queue}
    )
    assert status == 202, body
    return body["id"]


def ran_on(server, job_id: str) -> str:
    server.poll_job(job_id, lambda job: job["status"] == "succeeded")
    status, detail = server.request(f"/api/v1/jobs/{job_id}/detail")
    assert status == 200
    (attempt,) = detail["attempts"]
    return attempt["runner"]


def runners(server) -> dict[tuple[str, ...] | None, str]:
    """The live runners' ids by the queues they serve."""
    status, body = server.request("/api/v1/runners")
    assert status == 200
    return {
        None if runner["queues"] is None else tuple(runner["queues"]): runner["id"]
        for runner in body["runners"]
    }


def test_a_web_tier_enqueues_and_a_worker_runs_each_queue_on_its_own_runner(
    database, tmp_path, serve_processes
):
    server = serve_processes(database, "--workers", "0", env={"JOBTABLE_API_TOKEN": TOKEN})
    assert "workers=0 queues=none" in "".join(server.log)
    queued = post(server, "mail")
    _status, detail = server.request(f"/api/v1/jobs/{queued}/detail")
    assert detail["status"] == "queued"
    assert detail["waiting"] == ["no live runner serves kind noop"]  # serve registered nothing
    assert runners(server) == {}

    log = tmp_path / "worker.log"
    worker = start_worker(database, log, "--queues", "mail=1,reports=2",
                          kinds="jobtable.core.demo")  # fmt: skip
    try:
        wait_for_start(log)
        assert "workers=3 queues=mail:1,reports:2" in log.read_text()
        by_queues = runners(server)
        assert set(by_queues) == {("mail",), ("reports",)}
        assert ran_on(server, queued) == by_queues[("mail",)]
        for _ in range(3):
            assert ran_on(server, post(server, "reports")) == by_queues[("reports",)]
            assert ran_on(server, post(server, "mail")) == by_queues[("mail",)]
    finally:
        assert stop(worker) == 0
    wait_until(lambda: runners(server) == {}, within=10, what="the worker's runners gone")
    assert server.stop() == 0


def test_serve_runs_its_dedicated_queues_beside_the_api(database, serve_processes):
    server = serve_processes(
        database, "--queues", "bulk,mail=1", "--workers", "1",
        env={"JOBTABLE_API_TOKEN": TOKEN},
    )  # fmt: skip
    by_queues = runners(server)
    assert set(by_queues) == {("bulk",), ("mail",)}
    for _ in range(3):
        assert ran_on(server, post(server, "mail")) == by_queues[("mail",)]
        assert ran_on(server, post(server, "bulk")) == by_queues[("bulk",)]
    elsewhere = post(server, "reports")
    _status, detail = server.request(f"/api/v1/jobs/{elsewhere}/detail")
    assert detail["waiting"] == ["no live runner of kind noop serves queue reports"]
    assert server.stop() == 0
