"""The HTTP resources: thin, one core call each."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import falcon
from prometheus_client import CollectorRegistry

from jobtable.core import InvalidOptionError, Runner
from jobtable.core.jobs import Enqueued
from jobtable.entrypoints import views
from jobtable.entrypoints.http import json_text
from jobtable.entrypoints.http.body import read_body
from jobtable.entrypoints.http.errors import api_error
from jobtable.entrypoints.http.idempotency import answer_once, kept
from jobtable.entrypoints.http.job_requests import encode_batch, parse_job_request, refusals
from jobtable.entrypoints.http.pages import encode_cursor, list_query
from jobtable.entrypoints.metrics import exposition


class HealthResource:
    auth_exempt = True

    def __init__(self, version: str) -> None:
        self._body = {"status": "ok", "version": version}

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self._body


class OpenApiResource:
    auth_exempt = True

    def __init__(self, document: dict[str, object]) -> None:
        self._document = document

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self._document


class MetricsResource:
    """Prometheus text (or OpenMetrics, when the scraper's Accept asks for it)."""

    def __init__(self, registry: CollectorRegistry, *, public: bool) -> None:
        self._registry = registry
        self.auth_exempt = public

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.data, resp.content_type = exposition(self._registry, req.get_header("Accept"))


class JobsResource:
    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """A page of jobs, newest first, with the cursor of the next (null: the last)."""
        query = list_query(req)
        try:
            page = self._runner.list_jobs(
                status=query.status,
                kind=query.kind,
                queue=query.queue,
                limit=query.limit,
                after=query.after,
                state=query.state,
            )
        except InvalidOptionError as error:
            raise api_error(400, "invalid_option", f"{error.field}: {error.problem}") from None
        resp.media = {
            "jobs": [views.listed(job) for job in page.jobs],
            "next_cursor": encode_cursor(page.next_after),
        }

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = read_body(req)
        request = parse_job_request(body)

        def enqueue(key: str | None) -> None:
            with refusals():
                job_id = self._runner.enqueue(
                    request.kind, request.payload, request.options, keep=kept(key, _one_answer)
                )
            resp.location = f"/api/v1/jobs/{job_id}"
            status, media = _one_answer([job_id])
            resp.text = json_text.dumps(media)  # as resp.media, without its handler look-up
            resp.status = falcon.code_to_http_status(status)

        answer_once(req, resp, self._runner, route="POST /api/v1/jobs", body=body, answer=enqueue)


class BatchResource:
    """Many jobs in one transaction: every one checked first, then all stored or none."""

    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = read_body(req)
        encoded = encode_batch(self._runner, body)

        def enqueue(key: str | None) -> None:
            ids = self._runner.enqueue_batch(encoded, keep=kept(key, _batch_answer))
            status, resp.media = _batch_answer(ids)
            resp.status = falcon.code_to_http_status(status)

        answer_once(
            req, resp, self._runner, route="POST /api/v1/jobs/batch", body=body, answer=enqueue
        )


def _one_answer(enqueued: Sequence[Enqueued]) -> tuple[int, dict[str, Any]]:
    """202 with the new job's id; for a unique-key duplicate (nothing stored), 200 with the
    id of the job that holds the key."""
    (job_id,) = enqueued
    if job_id.duplicate:
        return 200, {"id": str(job_id), "duplicate": True}
    return 202, {"id": str(job_id)}


def _batch_answer(enqueued: Sequence[Enqueued]) -> tuple[int, dict[str, Any]]:
    return 202, {"ids": [str(job_id) for job_id in enqueued]}
