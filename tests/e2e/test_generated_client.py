"""A client generated from the live OpenAPI document by openapi-python-client drives a real
``jobtable serve``: its calls and models read as the API's operations and schemas do
(``enqueue_job``, ``get_job``, ``EnqueuedJob``, ``Error``), and they enqueue, follow a job to
its end, list, cancel, retry, count a bulk action, and read a 4xx as the error model."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.conftest import wait_until

pytestmark = pytest.mark.e2e
GENERATOR = Path(sys.executable).parent / "openapi-python-client"
FINISHED = ("succeeded", "failed")


@pytest.fixture
def generated(tmp_path, serve_processes, monkeypatch):
    """A live ``serve``, once the package ``jobtable_api`` is generated from what it serves
    (and importable)."""
    if not GENERATOR.exists():
        pytest.fail("openapi-python-client is not installed (pip install -e '.[dev]')")
    server = serve_processes(tmp_path / "jobs.db", "--kinds", "jobtable.core.demo")
    with urllib.request.urlopen(server.base_url + "/api/v1/openapi.json", timeout=10) as answer:
        (tmp_path / "openapi.json").write_text(json.dumps(json.load(answer)))
    environment = {**os.environ, "PATH": f"{GENERATOR.parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        [str(GENERATOR), "generate", "--path", str(tmp_path / "openapi.json"), "--meta", "none",
         "--output-path", str(tmp_path / "jobtable_api")],
        capture_output=True, text=True, timeout=300, env=environment, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("jobtable_api")
    yield server
    for name in [name for name in sys.modules if name.startswith("jobtable_api")]:
        del sys.modules[name]
    shutil.rmtree(tmp_path / "jobtable_api", ignore_errors=True)


def test_a_generated_client_enqueues_follows_lists_cancels_and_retries(generated):
    server = generated
    from jobtable_api import AuthenticatedClient
    from jobtable_api.api.bulk_actions import retry_matching_jobs
    from jobtable_api.api.jobs import (
        cancel_job,
        enqueue_job,
        get_job,
        get_job_detail,
        list_jobs,
        retry_job,
    )
    from jobtable_api.models import (
        BulkFilter,
        BulkRequest,
        BulkResult,
        EnqueuedJob,
        Error,
        JobDetail,
        JobList,
        JobRequest,
        JobRequestPayload,
        State,
    )

    client = AuthenticatedClient(base_url=server.base_url, token=server.token)

    def enqueue(seconds: int, **options) -> str:
        body = JobRequest(kind="countdown", payload=JobRequestPayload.from_dict(
            {"seconds": seconds}), **options)  # fmt: skip
        enqueued = enqueue_job.sync(client=client, body=body)
        assert isinstance(enqueued, EnqueuedJob), enqueued
        return enqueued.id

    def finished(job_id: str):
        job = get_job.sync(client=client, job_id=job_id)
        return job if job is not None and job.status.value in FINISHED else None

    counted = enqueue(1)
    wait_until(lambda: finished(counted), within=30, what="the countdown to end")
    job = finished(counted)
    assert (job.status.value, job.result["counted"]) == ("succeeded", 1)
    detail = get_job_detail.sync(client=client, job_id=counted)
    assert isinstance(detail, JobDetail) and detail.state.value == "succeeded"
    assert detail.attempts[0].seconds >= 0.9  # it counted a second

    listed = list_jobs.sync(client=client, limit=10)
    assert isinstance(listed, JobList) and counted in [item.id for item in listed.jobs]

    later = enqueue(5, delay=3600)
    cancelled = cancel_job.sync(client=client, job_id=later)
    assert (cancelled.status.value, cancelled.error) == ("failed", "cancelled")
    retried = retry_job.sync(client=client, job_id=later)
    assert retried.status.value in ("queued", "running") and retried.error is None

    failing = enqueue(-1)
    wait_until(lambda: finished(failing), within=30, what="the negative countdown to fail")
    counted_failed = retry_matching_jobs.sync(
        client=client, body=BulkRequest(filter_=BulkFilter(state=State.FAILED), dry_run=True)
    )
    assert isinstance(counted_failed, BulkResult)
    assert (counted_failed.matched, counted_failed.changed) == (1, 0)

    refused = retry_job.sync(client=client, job_id=counted)  # it succeeded: 409
    assert isinstance(refused, Error) and refused.error.code.value == "conflict"
    unknown = enqueue_job.sync(client=client, body=JobRequest(
        kind="nope", payload=JobRequestPayload.from_dict({})))  # fmt: skip
    assert isinstance(unknown, Error) and unknown.error.code.value == "unknown_kind"
    missing = get_job_detail.sync(client=client, job_id="01900000-0000-7000-8000-000000000000")
    assert isinstance(missing, Error) and missing.error.code.value == "not_found"
